// Certificate rotation under load, with no failed request: a real `vgate serve` process serves
// certificate files laid out as a Secret volume (kubelet's atomic writer: tls.crt -> ..data/tls.crt,
// ..data -> a timestamped directory, swapped by renaming a new symlink over ..data), while clients
// send requests without pause, on kept-alive connections and on a new connection each. The pair is
// rotated twice: by the symlink swap, and by a plain overwrite of one file, then the other, with a
// pause between them long enough for vgate to read the mismatched pair (it must keep the old one).

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { X509Certificate } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TLSSocket } from "node:tls";
import { repoRoot } from "../../support/fixtures.js";
import { clientCert, servingCert, testCa, type CertAndKey } from "../../support/kube/pki.js";
import { until } from "../../support/until.js";
import { VGATE_BIN } from "./dev-serve.js";

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/admission-review.json"));
const TOKEN_REVIEW = JSON.stringify({
  apiVersion: "authentication.k8s.io/v1",
  kind: "TokenReview",
  spec: { token: "not-a-key" },
});
/** Clients on kept-alive connections, and clients that open a new connection for each request. */
const KEEP_ALIVE_CLIENTS = 6;
const NEW_CONNECTION_CLIENTS = 2;

const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;

/** A Secret volume's layout, written as kubelet's atomic writer writes it. */
class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {}
  get certFile() {
    return join(this.dir, "tls.crt");
  }
  get keyFile() {
    return join(this.dir, "tls.key");
  }

  /** The first version: the data directory, ..data, and the two user-visible links. */
  init(pair: CertAndKey): void {
    const data = this.writeGeneration(pair);
    symlinkSync(data, join(this.dir, "..data"));
    symlinkSync("..data/tls.crt", this.certFile);
    symlinkSync("..data/tls.key", this.keyFile);
  }

  /** A new version: a new directory, then ..data swapped to it by one rename. */
  swap(pair: CertAndKey): void {
    const old = `..gen_${this.generation}`;
    const data = this.writeGeneration(pair);
    symlinkSync(data, join(this.dir, "..data_tmp"));
    renameSync(join(this.dir, "..data_tmp"), join(this.dir, "..data"));
    rmSync(join(this.dir, old), { recursive: true });
  }

  private writeGeneration(pair: CertAndKey): string {
    const name = `..gen_${++this.generation}`;
    mkdirSync(join(this.dir, name));
    writeFileSync(join(this.dir, name, "tls.crt"), pair.cert);
    writeFileSync(join(this.dir, name, "tls.key"), pair.key);
    return name;
  }
}

interface Load {
  ok: number;
  failures: string[];
  /** The certificate each new connection saw, in the order the connections were made. */
  seen: string[];
  stop(): Promise<void>;
}

/**
 * The answer each route gives here: an AdmissionReview (200); for the TokenReview, past the client
 * certificate check, 503 "access keys are not loaded yet" (--dev has no API server to load them
 * from). A 401 would be a client CA that the rotation lost.
 */
const ANSWERED: Record<string, number> = { "/validate/ownedaccesskeys": 200, "/authenticate": 503 };

function post(port: number, ca: string, agent: Agent | false, n: number, client: CertAndKey) {
  const [path, body] =
    n % 2 ? ["/authenticate", TOKEN_REVIEW] : ["/validate/ownedaccesskeys", EXAMPLE];
  return new Promise<{ status: number; path: string; fingerprint: string }>((res, rej) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        ca,
        cert: client.cert,
        key: client.key,
        servername: "localhost",
        agent,
        timeout: 10_000,
        headers: { "Content-Type": "application/json" },
      },
      (r) => {
        const fingerprint = (r.socket as TLSSocket).getPeerCertificate().fingerprint256;
        r.resume();
        r.once("end", () => res({ status: r.statusCode ?? 0, path, fingerprint }));
        r.once("error", rej);
      },
    );
    req.once("timeout", () => req.destroy(new Error("timed out")));
    req.once("error", rej);
    req.end(body);
  });
}

/** Requests without pause, each client one at a time, until stop(). */
function startLoad(port: number, ca: string, apiserver: CertAndKey): Load {
  const load: Load = { ok: 0, failures: [], seen: [], stop: async () => undefined };
  let running = true;
  const client = async (agent: Agent | false) => {
    for (let n = 0; running; n++) {
      try {
        const r = await post(port, ca, agent, n, apiserver);
        if (r.status === ANSWERED[r.path]) load.ok++;
        else load.failures.push(`HTTP ${r.status} from ${r.path}`);
        if (!agent) load.seen.push(r.fingerprint);
      } catch (err) {
        load.failures.push((err as Error).message);
      }
    }
  };
  const agent = new Agent({ keepAlive: true, maxSockets: KEEP_ALIVE_CLIENTS });
  const clients = [
    ...Array.from({ length: KEEP_ALIVE_CLIENTS }, () => client(agent)),
    ...Array.from({ length: NEW_CONNECTION_CLIENTS }, () => client(false)),
  ];
  load.stop = async () => {
    running = false;
    await Promise.all(clients);
    agent.destroy();
  };
  return load;
}

/** kube-apiserver's side of the review routes: a client CA file in `dir`, and its certificate. */
async function apiserverClient(dir: string): Promise<{ caFile: string; client: CertAndKey }> {
  const ca = await testCa("tls-load-client-ca");
  const caFile = join(dir, "client-ca.crt");
  writeFileSync(caFile, ca.cert);
  return { caFile, client: await clientCert(ca, "kube-apiserver") };
}

async function serveFiles(volume: SecretVolume, clientCaFile: string) {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  const child: ChildProcess = spawn(
    VGATE_BIN,
    [
      "serve",
      "--dev",
      "--port",
      "0",
      "--bind-address",
      "127.0.0.1",
      "--tls-cert-file",
      volume.certFile,
      "--tls-private-key-file",
      volume.keyFile,
      "--tls-reload-interval",
      "100ms",
      "--client-ca-file",
      clientCaFile,
    ],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += String(c)));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const port = await new Promise<number>((res, rej) => {
    child.stderr!.on("data", (c: Buffer) => {
      stderr += String(c);
      const m = /serving on https:\/\/[^:]+:(\d+)/.exec(stderr);
      if (m) res(Number(m[1]));
    });
    void exited.then((code) => rej(new Error(`vgate exited with ${code}: ${stderr}`)));
  });
  const records = () =>
    stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, port, exited, records };
}

describe("TLS certificate reload under load", function () {
  this.timeout(90_000);

  it("rotates by symlink swap and by overwrite with no failed request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vgate-tls-load-"));
    const ca = await testCa();
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => servingCert(ca, ["localhost"])));
    const volume = new SecretVolume(dir);
    volume.init(a!);
    const apiserver = await apiserverClient(dir);
    const vgate = await serveFiles(volume, apiserver.caFile);
    let load: Load | undefined;
    try {
      load = startLoad(vgate.port, ca.cert, apiserver.client);
      const l = load;
      const newest = () => l.seen.at(-1);
      const count = () => l.ok;
      const settle = async (ms: number) => {
        const from = count();
        await new Promise((r) => setTimeout(r, ms));
        assert.ok(count() > from, "no request was answered for a while");
      };
      await until(() => newest() === fingerprintOf(a!.cert), "the first certificate served");
      await settle(1_000);

      // 1. kubelet's atomic writer.
      volume.swap(b!);
      await until(() => newest() === fingerprintOf(b!.cert), "the swapped certificate served");
      await settle(1_000);

      // 2. A plain overwrite, certificate first; the key follows after vgate has polled.
      writeFileSync(volume.certFile, c!.cert);
      await until(
        () => vgate.records().some((r) => /do not match/.test(String(r.err))),
        "vgate noticing the mismatched pair",
        10_000,
      );
      await settle(500);
      assert.equal(newest(), fingerprintOf(b!.cert), "a mismatched pair must not be served");
      writeFileSync(volume.keyFile, c!.key);
      await until(() => newest() === fingerprintOf(c!.cert), "the overwritten certificate served");
      await settle(1_000);
      await load.stop();

      console.log(
        `      ${load.ok} requests answered (${load.seen.length} on new connections), ${load.failures.length} failed`,
      );
      assert.deepEqual(load.failures.slice(0, 5), [], `${load.failures.length} requests failed`);
      // New connections saw a, then b, then c: never an older one again.
      const order = [a!, b!, c!].map((p) => fingerprintOf(p.cert));
      const changes = load.seen.filter((f, i) => i === 0 || f !== load!.seen[i - 1]);
      assert.deepEqual(changes, order);
      const reloads = vgate.records().filter((r) => r.msg === "reloaded TLS certificate");
      assert.equal(reloads.length, 2);
      const refused = vgate.records().find((r) => /do not match/.test(String(r.err)))!;
      assert.equal(refused.level, "warn");
      assert.match(String(refused.msg), /still serving the previous one/);
    } finally {
      await load?.stop();
      vgate.child.kill("SIGTERM");
      assert.equal(await vgate.exited, 0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
