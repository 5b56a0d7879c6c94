// The README's `make apiserver` block, run as written: `make apiserver` in the foreground (PORT=0,
// so it never collides with a playground someone is running), then the following lines in one
// shell in the checkout (its exports hold for the lines after), checking the output each line's
// comment promises; then Ctrl-C to the process group, as a terminal sends it. And the playground
// itself (started as make apiserver starts it, in a folder of its own): vgate configured as
// manifests/ installs it, and a key login with a key-only kubeconfig, refusals included.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { httpsRequest } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import {
  apiserverWiringDiffs,
  checkKeyLogin,
  checkKeyStorage,
  findProcesses,
  kubeconfigParts,
  processArgs,
  sh,
  webhookConfigurationDiffs,
} from "../support/play/as-installed.js";
import { DEMO_KEY, DEMO_USER } from "../support/play/key-login.js";
import { docBlock } from "../support/readme-blocks.js";

/** A line split into the command and the comment after it (`  # ...`). */
function splitComment(line: string): { command: string; comment: string } {
  const m = /^(.*?)\s+#\s(.*)$/.exec(line);
  return m ? { command: m[1]!, comment: m[2]! } : { command: line, comment: "" };
}

/** Starts `command` in a process group of its own; resolves once it prints its last line. */
async function startPlayground(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ output: () => string; interrupt: () => Promise<string> }> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once("close", (code, signal) => resolve(signal ?? String(code))),
  );
  const interrupt = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGINT");
    return exited;
  };
  try {
    while (!output.includes("Ctrl-C stops everything.")) {
      if (child.exitCode !== null) assert.fail(`${command} exited early:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await interrupt();
    throw err;
  }
  return { output: () => output, interrupt };
}

/** After Ctrl-C: the playground said it stopped, and its API server no longer answers. */
async function assertStopped(output: string, how: string): Promise<void> {
  assert.match(how, /^(0|SIGINT)$/, output);
  assert.match(output, /\nstopping \.\.\.\n/);
  const api = /API server\s+(https:\/\/\S+)/.exec(output)?.[1];
  assert.ok(api, output);
  const after = await httpsRequest(`${api}/healthz`, { timeoutMs: 2000 }).then(
    () => "still up",
    () => "down",
  );
  assert.equal(after, "down", "kube-apiserver still answers after Ctrl-C");
}

/** make kube's lines about a binary make apiserver does not run. */
const NODE_BINARIES =
  /^make kube: (building |built )?(kubelet|kube-scheduler|kube-proxy|kube-controller-manager|vcluster)\b/m;

const ready = HAVE_KUBE && HAVE_ANY_KUBECTL;
const why = !HAVE_KUBE ? KUBE_SKIP_REASON : ANY_KUBECTL_SKIP_REASON;
const userPath = `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`;

describe("README: the make apiserver block", function () {
  const lines = docBlock("make apiserver");

  it("starts with make apiserver, exports the kubeconfig it writes, and logs in with a key", () => {
    assert.match(lines[0]!, /^make apiserver\b/);
    assert.equal(lines[1], "export KUBECONFIG=$PWD/.apiserver/kubeconfig");
    // The admin kubeconfig presents its client certificate even with --token: a key is tried with
    // a kubeconfig of its own (docs/decisions.md OPS-51).
    assert.ok(
      lines.some((l) => /kubectl accesskey create .*--kubeconfig-out /.test(l)),
      "the block makes a key-only kubeconfig",
    );
    assert.ok(
      lines.some((l) => /^kubectl --kubeconfig \S+ auth whoami\b/.test(l)),
      "the block logs in with it",
    );
    assert.ok(!lines.some((l) => /--token\b/.test(l)), "--token with the admin kubeconfig");
  });

  (ready ? it : it.skip)(
    `runs as written, with the outputs its comments promise${why}`,
    async function () {
      this.timeout(240_000);
      const play = await startPlayground("make", ["apiserver"], { ...process.env, PORT: "0" });
      const dir = mkdtempSync(join(tmpdir(), "vgate-make-apiserver-"));
      try {
        // One shell, in the checkout, as the user types them: each line's output to files of its own.
        const rest = lines.slice(1);
        const script = rest
          .map(
            (l, i) =>
              `{\n${splitComment(l).command}\n} >"${dir}/out.${i}" 2>"${dir}/err.${i}"; echo $? >"${dir}/code.${i}"`,
          )
          .join("\n");
        const run = await sh(script, { ...process.env, PWD: repoRoot });
        assert.equal(run.code, 0, run.err);
        rest.forEach((line, i) => {
          const read = (what: string) => readFileSync(join(dir, `${what}.${i}`), "utf8");
          const { command, comment } = splitComment(line);
          const [code, out, err] = [Number(read("code")), read("out"), read("err")];
          // kubectl auth can-i exits 1 for "no", as its output says.
          if (!command.startsWith("kubectl auth can-i"))
            assert.equal(code, 0, `${command}\n${out}${err}`);
          if (command.startsWith("export ")) return;
          if (command.startsWith("kubectl auth can-i") || /\bauth whoami\b/.test(command)) {
            assert.equal(out.trim(), comment, command);
          } else if (command === "kubectl get oak") {
            assert.deepEqual(
              out
                .split("\n")[0]!
                .trim()
                .split(/\s{2,}/),
              comment.split(/\s{2,}/),
            );
          } else if (command.includes("jsonpath='{.spec.key}'")) {
            // Stored hashed, as the install stores keys (manifests/vgate-info.yaml).
            assert.match(out, /^sha256:[0-9a-f]{64}$/, comment);
          }
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(join(repoRoot, ".apiserver", `${DEMO_KEY}.kubeconfig`), { force: true });
        // make passes the interrupt on: it dies of SIGINT once the playground has stopped everything.
        const how = await play.interrupt();
        await assertStopped(play.output(), how);
      }
      assert.ok(existsSync(join(repoRoot, ".apiserver/vgate.log")));
      // It builds (or finds up to date) etcd and kube-apiserver only: no node binaries, no syncer.
      if (!process.env["KUBEBUILDER_ASSETS"]) {
        assert.match(
          play.output(),
          /^make kube: (kube-apiserver is up to date|built kube-apiserver)/m,
        );
        assert.doesNotMatch(play.output(), NODE_BINARIES);
      }
    },
  );
});

(ready ? describe : describe.skip)(
  `make apiserver: vgate as the manifests install it${why}`,
  function () {
    this.timeout(240_000);
    let play: Awaited<ReturnType<typeof startPlayground>> | undefined;
    let dir = "";
    let env: NodeJS.ProcessEnv = {};

    before(async function () {
      dir = mkdtempSync(join(tmpdir(), "vgate-playground-"));
      // What make apiserver runs once its binaries are built.
      play = await startPlayground(
        "node",
        ["dist/test/support/playground.js", "--port=0", `--dir=${dir}`],
        process.env,
      );
      env = { ...process.env, KUBECONFIG: join(dir, "kubeconfig"), PATH: userPath };
    });

    after(async () => {
      if (play) {
        const how = await play.interrupt();
        await assertStopped(play.output(), how);
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("has the admission webhooks of manifests/webhook-configurations.yaml", async () => {
      assert.deepEqual(await webhookConfigurationDiffs(env), []);
    });

    it("wires kube-apiserver as manifests/apiserver/ says, token cache TTL included", () => {
      const port = new URL(/API server\s+(https:\/\/\S+)/.exec(play!.output())![1]!).port;
      const pids = findProcesses("kube-apiserver", (args) =>
        args.includes(`--secure-port=${port}`),
      );
      assert.equal(pids.length, 1, `kube-apiserver --secure-port=${port}: ${pids.join(",")}`);
      assert.deepEqual(apiserverWiringDiffs(processArgs(pids[0]!)), []);
    });

    it("stores keys hashed, as manifests/vgate-info.yaml says, and a sample key logs in", async () => {
      await checkKeyStorage(env, kubeconfigParts(join(dir, "kubeconfig")));
    });

    it("prints the key login steps; a garbage token and a disabled key are refused", async () => {
      const printed = play!.output();
      const script = readFileSync(join(dir, "key-login.sh"), "utf8");
      for (const line of script
        .split("\n")
        .filter((l) => l && !l.startsWith("#") && l !== "set -e"))
        assert.ok(printed.includes(`  ${line}\n`), `not printed: ${line}`);
      await checkKeyLogin(env, dir, DEMO_USER, DEMO_KEY);
    });
  },
);
