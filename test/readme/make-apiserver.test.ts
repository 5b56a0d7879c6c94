// The README's `make apiserver` block, run as written: `make apiserver` in the foreground (PORT=0,
// so it never collides with a playground someone is running), then each following line in a shell
// with the block's exported KUBECONFIG, checking the output each line's comment promises; then
// Ctrl-C to the process group, as a terminal sends it.

import assert from "node:assert/strict";
import { spawn, execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { httpsRequest } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { docBlock } from "../support/readme-blocks.js";

/** A line split into the command and the comment after it (`  # ...`). */
function splitComment(line: string): { command: string; comment: string } {
  const m = /^(.*?)\s+#\s(.*)$/.exec(line);
  return m ? { command: m[1]!, comment: m[2]! } : { command: line, comment: "" };
}

function sh(
  command: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile("bash", ["-c", command], { cwd: repoRoot, env, timeout: 60_000 }, (e, out, err) =>
      resolve({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, out, err }),
    );
  });
}

const ready = HAVE_KUBE && HAVE_KUBECTL;
const why = !HAVE_KUBE ? KUBE_SKIP_REASON : KUBECTL_SKIP_REASON;

describe("README: the make apiserver block", function () {
  const lines = docBlock("make apiserver");

  it("starts with make apiserver and exports the kubeconfig it writes", () => {
    assert.match(lines[0]!, /^make apiserver\b/);
    assert.equal(lines[1], "export KUBECONFIG=$PWD/.apiserver/kubeconfig");
  });

  (ready ? it : it.skip)(
    `runs as written, with the outputs its comments promise${why}`,
    async function () {
      this.timeout(180_000);
      const make = spawn("make", ["apiserver"], {
        cwd: repoRoot,
        env: { ...process.env, PORT: "0" },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      make.stdout.on("data", (c: Buffer) => (output += c.toString()));
      make.stderr.on("data", (c: Buffer) => (output += c.toString()));
      const exited = new Promise<string>((resolve) =>
        make.once("exit", (code, signal) => resolve(signal ?? String(code))),
      );
      try {
        while (!output.includes("Ctrl-C stops everything.")) {
          if (make.exitCode !== null) assert.fail(`make apiserver exited early:\n${output}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const env: NodeJS.ProcessEnv = { ...process.env, PWD: repoRoot };
        for (const line of lines.slice(1)) {
          const { command, comment } = splitComment(line);
          const exported = /^export (\w+)=(.*)$/.exec(command);
          if (exported) {
            env[exported[1]!] = exported[2]!.replace("$PWD", repoRoot);
            assert.ok(existsSync(env[exported[1]!]!), `${command}: no such file`);
            continue;
          }
          const res = await sh(command, env);
          if (command.startsWith("kubectl auth can-i")) {
            assert.equal(res.out.trim(), comment, `${command}\n${res.err}`);
          } else if (command === "kubectl get oak") {
            assert.equal(res.code, 0, res.err);
            assert.deepEqual(
              res.out
                .split("\n")[0]!
                .trim()
                .split(/\s{2,}/),
              comment.split(/\s{2,}/),
            );
            assert.match(res.out, /^example-key\s/m);
          } else if (command.includes("jsonpath='{.spec.key}'")) {
            assert.equal(res.code, 0, res.err);
            assert.match(res.out, /^[A-Za-z0-9_-]{43}$/, comment);
          } else {
            assert.equal(res.code, 0, `${command}\n${res.out}${res.err}`);
          }
        }
      } finally {
        if (make.exitCode === null) process.kill(-make.pid!, "SIGINT");
      }
      // make passes the interrupt on: it dies of SIGINT once the playground has stopped everything.
      assert.match(await exited, /^(0|SIGINT)$/, output);
      assert.match(output, /\nstopping \.\.\.\n/);
      const api = /API server\s+(https:\/\/\S+)/.exec(output)?.[1];
      assert.ok(api, output);
      const after = await httpsRequest(`${api}/healthz`, { timeoutMs: 2000 }).then(
        () => "still up",
        () => "down",
      );
      assert.equal(after, "down", "kube-apiserver still answers after Ctrl-C");
      assert.ok(existsSync(join(repoRoot, ".apiserver/vgate.log")));
    },
  );
});
