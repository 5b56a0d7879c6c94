// The `vgate` binary driven as a subprocess, as users and the README run it.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { commands } from "../../../webhook/src/cli/main.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { sharedCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const cleanEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.KUBERNETES_SERVICE_PORT;
  return env;
};
const run = (...args: string[]) =>
  spawnSync(bin, args, { encoding: "utf8", env: cleanEnv(), timeout: 20_000 });

describe("vgate CLI", function () {
  this.timeout(30_000);

  it("--help lists the commands", () => {
    const r = run("--help");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Usage:\n {2}vgate <command>/);
    assert.match(r.stdout, /serve\s+Serve the admission webhooks over HTTPS/);
  });

  it("lists every command under the name its module gives it, and help loads it", async () => {
    // main.ts loads a command only when it runs; its table must name what each module holds.
    const help = run("--help").stdout.split("\n");
    for (const entry of commands) {
      const command = await entry.load();
      assert.equal(command.name, entry.name);
      const r = run("help", entry.name);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, command.help);
      const line = help.find((l) => l.trim().split(/\s+/)[0] === entry.name);
      assert.equal(line?.trim().replace(/^\S+\s+/, ""), entry.summary);
    }
  });

  it("serve --help describes every flag", () => {
    const r = run("serve", "--help");
    assert.equal(r.status, 0, r.stderr);
    for (const flag of [
      "--port",
      "--tls-cert-file",
      "--tls-private-key-file",
      "--kubeconfig",
      "--group-domain",
      "--admin-groups",
      "--log-level",
      "--dev",
      "--key-storage",
      "--audiences",
      "--cluster-name",
      "--roles-file",
      "--project-label",
      "--virtual-cluster-label",
    ]) {
      assert.ok(r.stdout.includes(flag), `help does not mention ${flag}`);
    }
    assert.deepEqual(run("help", "serve").stdout, r.stdout);
  });

  it("rejects unknown commands and bad flags with exit code 2", () => {
    const unknown = run("frobnicate");
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /^error: unknown command "frobnicate" for "vgate"/);
    const badPort = run("serve", "--dev", "--port", "http");
    assert.equal(badPort.status, 2);
    assert.match(badPort.stderr, /invalid --port "http"/);
    const noTls = run("serve");
    assert.equal(noTls.status, 2);
    assert.match(noTls.stderr, /needs --tls-cert-file and --tls-private-key-file, or --dev/);
    const unknownFlag = run("serve", "--dve");
    assert.equal(unknownFlag.status, 2);
    assert.match(
      unknownFlag.stderr,
      /^error: unknown flag: --dve for "vgate serve"\n\nDid you mean this\?\n\t--dev\n/,
    );
  });

  it("rejects bad access-key flags with exit code 2, naming the flag", () => {
    const cases: [string[], RegExp][] = [
      [
        ["--key-storage", "encrypted"],
        /^error: invalid --key-storage "encrypted": plain or hashed/,
      ],
      [["--audiences", " , "], /^error: --audiences needs at least one audience/],
      [["--project-label", "a b"], /^error: invalid --project-label "a b": a label key/],
      [
        ["--virtual-cluster-label=-x.io/y"],
        /^error: invalid --virtual-cluster-label "-x\.io\/y": prefix/,
      ],
      [["--virtual-cluster-label", `${"n".repeat(64)}`], /^error: invalid --virtual-cluster-label/],
    ];
    for (const [flags, message] of cases) {
      const r = run("serve", "--dev", ...flags);
      assert.equal(r.status, 2, `${flags.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });

  it("fails with exit code 1 and names the file when a certificate cannot be read", () => {
    const r = run(
      "serve",
      "--tls-cert-file",
      "/nonexistent/tls.crt",
      "--tls-private-key-file",
      "/nonexistent/tls.key",
    );
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /cannot read --tls-cert-file \/nonexistent\/tls\.crt: .*; cannot read --tls-private-key-file \/nonexistent\/tls\.key/,
    );
  });

  it("serve --dev answers the README's sample requests and stops on SIGTERM", async () => {
    const child = spawn(bin, ["serve", "--dev", "--port", "0", "--bind-address", "127.0.0.1"], {
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let stderr = "";
      const url = await new Promise<string>((res, rej) => {
        child.stderr.on("data", (c: Buffer) => {
          stderr += String(c);
          const m = /serving on (https:\/\/\S+)/.exec(stderr);
          if (m) res(m[1]!);
        });
        child.once("exit", (code) => rej(new Error(`vgate exited with ${code}: ${stderr}`)));
      });
      assert.match(
        stderr,
        /curl -sk -H 'Content-Type: application\/json' --data @webhook\/examples\/admission-review\.json/,
      );
      const post = (file: string) =>
        httpsRequest(`${url}/validate/ownedaccesskeys`, {
          body: readFileSync(resolve(repoRoot, "webhook/examples", file)),
          headers: { "Content-Type": "application/json" },
        });
      const ok = (await post("admission-review.json")).json<{
        response: { uid: string; allowed: boolean };
      }>();
      assert.deepEqual(ok.response, { uid: "705ab4f5-6393-11e8-b7cc-42010a800002", allowed: true });
      const denied = (await post("admission-review-denied.json")).json<{
        response: { allowed: boolean; status: { code: number; message: string } };
      }>();
      assert.equal(denied.response.allowed, false);
      assert.equal(denied.response.status.code, 422);
      assert.match(
        denied.response.status.message,
        /Only one reference can have Controller set to true/,
      );
      assert.equal((await httpsRequest(`${url}/readyz`)).status, 200);
      // Without an API server, a check that needs one fails closed with a clear message.
      const mutate = await httpsRequest(`${url}/mutate/ownedaccesskeys`, {
        body: readFileSync(resolve(repoRoot, "webhook/examples/admission-review.json")),
        headers: { "Content-Type": "application/json" },
      });
      const m = mutate.json<{ response: { status: { code: number; message: string } } }>().response;
      assert.equal(m.status.code, 503);
      assert.match(m.status.message, /no Kubernetes API server is configured/);
      const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
      child.kill("SIGTERM");
      assert.equal(await exited, 0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  describe("vgate serve exits non-zero at once on any start-up error", () => {
    // "At once": a failed start takes about as long as starting node (half a second here). The
    // bound is generous for a shared, noisy 2-core machine; the bug it guards against is a process
    // that never exits (it hung whenever a kubeconfig was set), which no bound would let through.
    const EXIT_WITHIN_MS = 10_000;
    let dir = "";
    let busy: Server;
    let busyPort = 0;
    let silentApi: Server;
    const held: Socket[] = [];
    /** A kubeconfig for an "API server" that accepts connections and never answers. */
    let silentKubeconfig = "";

    const listening = (server: Server): Promise<number> =>
      new Promise((res) =>
        server.listen(0, "127.0.0.1", () => res((server.address() as { port: number }).port)),
      );

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "vgate-start-"));
      busy = createServer();
      busyPort = await listening(busy);
      silentApi = createServer((socket) => held.push(socket));
      const apiPort = await listening(silentApi);
      silentKubeconfig = join(dir, "silent.kubeconfig");
      writeFileSync(
        silentKubeconfig,
        [
          "apiVersion: v1",
          "kind: Config",
          `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${apiPort}", insecure-skip-tls-verify: true}}]`,
          "users: [{name: u, user: {token: not-a-real-token}}]",
          "contexts: [{name: x, context: {cluster: c, user: u}}]",
          "current-context: x",
          "",
        ].join("\n"),
      );
      const [a, b] = [await selfSignedTls(), await selfSignedTls()];
      writeFileSync(join(dir, "a.crt"), a.cert);
      writeFileSync(join(dir, "b.key"), b.key);
      writeFileSync(join(dir, "a.key"), a.key);
      writeFileSync(
        join(dir, "typo.yaml"),
        "sync:\n  tohost:\n    endpoints:\n      patches: [{path: a, expression: value}]\n",
      );
      writeFileSync(join(dir, "garbage.kubeconfig"), "clusters: [\n");
    });

    after(() => {
      for (const socket of held) socket.destroy();
      busy.close();
      silentApi.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Runs `vgate serve` and expects exit code 1 with `message` on stderr, within the bound. */
    function failsAtOnce(args: string[], message: string): void {
      const started = Date.now();
      const r = spawnSync(bin, ["serve", "--log-level", "error", ...args], {
        encoding: "utf8",
        env: cleanEnv(),
        timeout: EXIT_WITHIN_MS,
        killSignal: "SIGKILL",
      });
      const took = Date.now() - started;
      assert.equal(r.signal, null, `still running after ${EXIT_WITHIN_MS} ms: ${r.stderr}`);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stderr, `error: ${message}\n`);
      assert.ok(took < EXIT_WITHIN_MS, `took ${took} ms`);
    }

    const local = ["--port", "0", "--bind-address", "127.0.0.1"];

    it("port in use, with a kubeconfig whose API server never answers", () => {
      failsAtOnce(
        [
          "--dev",
          "--kubeconfig",
          silentKubeconfig,
          "--port",
          String(busyPort),
          "--bind-address",
          "127.0.0.1",
        ],
        `cannot listen on 127.0.0.1:${busyPort}: the port is in use; choose another --port`,
      );
    });

    it("certificate and key that do not match", () => {
      const crt = join(dir, "a.crt");
      const key = join(dir, "b.key");
      failsAtOnce(
        [
          "--tls-cert-file",
          crt,
          "--tls-private-key-file",
          key,
          "--kubeconfig",
          silentKubeconfig,
          ...local,
        ],
        `--tls-cert-file ${crt} and --tls-private-key-file ${key} do not match: the key is not the private key of the certificate`,
      );
    });

    it("a certificate file that holds no certificate", () => {
      const key = join(dir, "a.key");
      failsAtOnce(
        [
          "--tls-cert-file",
          key,
          "--tls-private-key-file",
          key,
          "--kubeconfig",
          silentKubeconfig,
          ...local,
        ],
        `--tls-cert-file ${key} holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)`,
      );
    });

    it("an unreadable or invalid --roles-file", () => {
      const roles = join(dir, "roles.yaml");
      writeFileSync(
        roles,
        "roles:\n  - name: deployer\n    rules:\n      - apiGroups: [apps]\n        resources: [deployments]\n",
      );
      failsAtOnce(
        ["--dev", "--roles-file", roles, ...local],
        `--roles-file ${roles}: invalid roles file: roles[0].rules[0].verbs: Required value: verbs must contain at least one value`,
      );
      failsAtOnce(
        ["--dev", "--roles-file", join(dir, "missing.yaml"), ...local],
        `cannot read --roles-file ${join(dir, "missing.yaml")}: no such file; check the path`,
      );
    });

    it("a bad --config, with a kubeconfig set", () => {
      const config = join(dir, "typo.yaml");
      failsAtOnce(
        [
          "--dev",
          "--kubeconfig",
          silentKubeconfig,
          ...local,
          "--config",
          config,
          "--vcluster-name",
          "vc",
          "--vcluster-namespace",
          "vc-ns",
        ],
        `invalid config ${config}:\n  at '/sync': additional properties 'tohost' not allowed`,
      );
    });

    it("an unreadable or unparsable kubeconfig", () => {
      const missing = join(dir, "missing.kubeconfig");
      failsAtOnce(
        ["--dev", "--kubeconfig", missing, ...local],
        `cannot read kubeconfig ${JSON.stringify(missing)}: no such file; check the path`,
      );
      const garbage = join(dir, "garbage.kubeconfig");
      const r = spawnSync(bin, ["serve", "--dev", "--kubeconfig", garbage, ...local], {
        encoding: "utf8",
        env: cleanEnv(),
        timeout: EXIT_WITHIN_MS,
        killSignal: "SIGKILL",
      });
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`^error: cannot parse kubeconfig ${JSON.stringify(garbage)}`),
      );
    });

    describe("a malformed kubeconfig or certificate file: the file and the line, never its content", () => {
      // docs/decisions.md OAK-32. Each file holds a secret; none of it may reach stderr.
      const TOKEN = "s3cr3t-TOKEN-a8Hd2Kq9Zm4Wx7Pc";
      const malformed = () => {
        const file = join(dir, "malformed.kubeconfig");
        writeFileSync(
          file,
          [
            "apiVersion: v1",
            "kind: Config",
            "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
            "users:",
            "- name: u",
            "  user:",
            `    token: ${TOKEN}: stray`,
            "contexts: [{name: x, context: {cluster: c, user: u}}]",
            "current-context: x",
            "",
          ].join("\n"),
        );
        return file;
      };
      const exits = (args: string[]) =>
        spawnSync(bin, args, {
          encoding: "utf8",
          env: cleanEnv(),
          timeout: EXIT_WITHIN_MS,
          killSignal: "SIGKILL",
        });
      const expectPlace = (stderr: string, file: string) => {
        assert.match(
          stderr,
          new RegExp(
            `cannot parse kubeconfig ${JSON.stringify(file).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: line 7, column \\d+: in users\\[0\\]\\.user\\.token: `,
          ),
        );
        assert.ok(!stderr.includes("s3cr3t") && !stderr.includes("a8Hd2K"), stderr);
      };

      it("vgate serve --kubeconfig", () => {
        const file = malformed();
        const r = exits(["serve", "--dev", "--kubeconfig", file, ...local]);
        assert.equal(r.status, 1, r.stderr);
        expectPlace(r.stderr, file);
      });

      it("vgate certs --kubeconfig", () => {
        const file = malformed();
        const r = exits(["certs", "--kubeconfig", file]);
        assert.equal(r.status, 1, r.stderr);
        expectPlace(r.stderr, file);
      });

      it("vgate sync --virtual-kubeconfig", () => {
        const file = malformed();
        const r = exits([
          "sync",
          `--config=${resolve(repoRoot, "webhook/examples/vcluster.yaml")}`,
          `--virtual-kubeconfig=${file}`,
          `--host-kubeconfig=${file}`,
          "--vcluster-name=vc",
          "--vcluster-namespace=vc-ns",
          "--metrics-bind-address=0",
          "--health-probe-bind-address=0",
        ]);
        assert.equal(r.status, 1, r.stderr);
        expectPlace(r.stderr, file);
      });

      it("vgate serve --tls-cert-file with a broken certificate block and a private key in it", async () => {
        const pair = await selfSignedTls();
        const keyLines = pair.key.trim().split("\n").slice(1, -1);
        const crt = join(dir, "broken.crt");
        // A certificate block whose body is a private key's: unreadable as a certificate.
        writeFileSync(
          crt,
          [
            "# issued by hand",
            "-----BEGIN CERTIFICATE-----",
            ...keyLines,
            "-----END CERTIFICATE-----",
            "",
          ].join("\n"),
        );
        const key = join(dir, "broken.key");
        writeFileSync(key, pair.key);
        const r = exits([
          "serve",
          "--tls-cert-file",
          crt,
          "--tls-private-key-file",
          key,
          "--kubeconfig",
          silentKubeconfig,
          ...local,
        ]);
        assert.equal(r.status, 1, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `^error: --tls-cert-file ${crt} holds no usable certificate: the PEM block at line 2 cannot be read \\([A-Z_0-9]+\\)\n$`,
          ),
        );
        for (const line of keyLines) assert.ok(!r.stderr.includes(line.slice(0, 16)), r.stderr);
      });
    });

    it("an unreadable --virtual-kubeconfig", () => {
      const missing = join(dir, "virtual.kubeconfig");
      failsAtOnce(
        [
          "--dev",
          "--kubeconfig",
          silentKubeconfig,
          ...local,
          "--config",
          resolve(repoRoot, "webhook/examples/vcluster.yaml"),
          "--vcluster-name",
          "vc",
          "--vcluster-namespace",
          "vc-ns",
          "--virtual-kubeconfig",
          missing,
        ],
        `cannot read kubeconfig ${JSON.stringify(missing)}: no such file; check the path`,
      );
    });

    (HAVE_KUBE ? it : it.skip)(
      `port in use, with a kubeconfig for a real kube-apiserver (watching keys)${KUBE_SKIP_REASON}`,
      async function () {
        this.timeout(60_000);
        // The shape of the original hang: the access-key cache's list+watch holds a live
        // connection to the API server while start-up fails later on.
        const cluster = await sharedCluster();
        failsAtOnce(
          [
            "--kubeconfig",
            cluster.kubeconfigPath,
            "--dev",
            "--port",
            String(busyPort),
            "--bind-address",
            "127.0.0.1",
          ],
          `cannot listen on 127.0.0.1:${busyPort}: the port is in use; choose another --port`,
        );
      },
    );
  });
});
