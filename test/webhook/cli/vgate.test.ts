// The `vgate` binary driven as a subprocess, as users and the README run it.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest } from "../../support/https-client.js";

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
    assert.match(unknownFlag.stderr, /Unknown option '--dve'/);
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
});
