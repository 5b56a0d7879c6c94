// The `make cluster` blocks of README.md and docs/patches.md, run as written: `make cluster` (or `make cluster VCLUSTER=1`)
// in the foreground, then each following line in one shell in the checkout (the exported
// KUBECONFIG), each showing what its comment promises; then Ctrl-C to the process group, as a
// terminal sends it, after which the host must be as it was before. The plain block is the
// five-minute start: after it, the playground is checked against manifests/ (webhooks,
// kube-apiserver's wiring, hashed keys), the troubleshooting block, and its key-login.sh.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_NODE, NODE_SKIP_REASON } from "../support/node/cluster-tier.js";
import { diffHostState, hostState } from "../support/node/host-state.js";
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
import { docBlock, runPromisedBlock } from "../support/readme-blocks.js";
import { until } from "../support/until.js";
import { HAVE_VCLUSTER, VCLUSTER_SKIP_REASON } from "../support/vcluster/vcluster-tier.js";

// Two spaces: the plain block's first line (`make cluster   # as root …`), not `make cluster VCLUSTER=1`.
const plain = docBlock("make cluster  ");
const withVCluster = docBlock("make cluster VCLUSTER=1");

/**
 * Starts the block's first line (`make cluster …`), runs `check` with a scratch folder and the
 * user's environment (KUBECONFIG as the block's second line exports it) once it is ready, then
 * sends Ctrl-C and checks the host is as it was.
 */
async function playground(
  lines: readonly string[],
  check: (dir: string, env: NodeJS.ProcessEnv, output: string) => Promise<void>,
): Promise<void> {
  const args = lines[0]!
    .replace(/\s#.*$/, "")
    .trim()
    .split(/\s+/);
  assert.deepEqual(args.slice(0, 2), ["make", "cluster"]);
  const exported = /^export KUBECONFIG=\$PWD\/(\S+)$/.exec(lines[1]!);
  assert.ok(exported, `the block's second line exports KUBECONFIG: ${lines[1]}`);
  const before = await hostState();
  const make = spawn(args[0]!, args.slice(1), {
    cwd: repoRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  make.stdout.on("data", (c: Buffer) => (output += c.toString()));
  make.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<string>((r) =>
    make.once("exit", (code, signal) => r(signal ?? String(code))),
  );
  const dir = mkdtempSync(join(tmpdir(), "vgate-make-cluster-"));
  try {
    await until(
      () => output.includes("Ctrl-C stops everything.") || make.exitCode !== null,
      "make cluster ready",
      300_000,
    );
    assert.equal(make.exitCode, null, `make cluster exited early:\n${output}`);
    const kubeconfig = join(repoRoot, exported[1]!);
    assert.ok(existsSync(kubeconfig), kubeconfig);
    await check(
      dir,
      {
        ...process.env,
        HOME: dir,
        KUBECONFIG: kubeconfig,
        PATH: `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`,
      },
      output,
    );
  } finally {
    if (make.exitCode === null) process.kill(-make.pid!, "SIGINT");
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match(await exited, /^(0|SIGINT)$/, output);
  assert.match(output, /stopped; the host is as it was/);
  // make kube's binaries: the node's, and vCluster's syncer only with VCLUSTER=1.
  if (!process.env["KUBEBUILDER_ASSETS"]) {
    assert.match(output, /^make kube: (kubelet is up to date|built kubelet)/m);
    const syncer = /^make kube: (vcluster is up to date|built vcluster)/m;
    if (args.includes("VCLUSTER=1")) assert.match(output, syncer);
    else assert.doesNotMatch(output, syncer);
  }
  assert.deepEqual(diffHostState(before, await hostState()), []);
}

/** The troubleshooting block's checks: the command after each comment, and its "Healthy: …". */
function troubleshootingChecks(): { command: string; healthy: string }[] {
  const out: { command: string; healthy: string }[] = [];
  let comment = "";
  for (const line of docBlock("# Are vgate's pods up?")) {
    if (line.startsWith("#")) {
      comment += `${line} `;
      continue;
    }
    const healthy = /Healthy: (?:one )?"([^"]+)"/.exec(comment)?.[1];
    assert.ok(healthy, `no "Healthy: …" promise above ${line}`);
    out.push({ command: line, healthy });
    comment = "";
  }
  return out;
}

/**
 * What the playground must be beyond the block: vgate configured as manifests/ installs it (the
 * admission webhooks, kube-apiserver's wiring, hashed keys), the README's troubleshooting block
 * healthy, and its key-login.sh a working key login with a key-only kubeconfig, refusals included.
 */
async function asInstalled(env: NodeJS.ProcessEnv, output: string): Promise<void> {
  const kubeconfig = env["KUBECONFIG"]!;
  assert.deepEqual(await webhookConfigurationDiffs(env), []);
  const logs = /^logs\s+(\S+?)\/?$/m.exec(output)?.[1];
  assert.ok(logs, output);
  const rigDir = dirname(resolve(repoRoot, logs));
  const pids = findProcesses("kube-apiserver", (a) => a.some((x) => x.includes(`${rigDir}/`)));
  assert.equal(pids.length, 1, `kube-apiserver of ${rigDir}: ${pids.join(",")}`);
  assert.deepEqual(apiserverWiringDiffs(processArgs(pids[0]!)), []);
  await checkKeyStorage(env, kubeconfigParts(kubeconfig));
  for (const { command, healthy } of troubleshootingChecks()) {
    const r = await sh(command, env);
    assert.equal(r.code, 0, `${command}\n${r.out}${r.err}`);
    const times = `${r.out}${r.err}`.split(healthy).length - 1;
    // "one ready=true line per pod": two replicas.
    assert.equal(times, healthy === "ready=true" ? 2 : 1, `${command}\n${r.out}${r.err}`);
  }
  // The block above made a key of the same name; the printed steps make it anew.
  const gone = await sh(`kubectl accesskey delete ${DEMO_KEY} --ignore-not-found --wait`, env);
  assert.equal(gone.code, 0, gone.err);
  try {
    await checkKeyLogin(env, dirname(kubeconfig), DEMO_USER, DEMO_KEY);
  } finally {
    rmSync(join(dirname(kubeconfig), `${DEMO_KEY}.kubeconfig`), { force: true });
  }
}

(HAVE_NODE ? describe : describe.skip)(
  `README: the make cluster block${NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);

    it("is the five-minute start: the plugin on PATH, a key-only kubeconfig, a key login", () => {
      assert.ok(
        plain.includes("export PATH=$PWD/plugin/bin:$PATH"),
        "the block puts the plugin on PATH",
      );
      // The admin kubeconfig presents its client certificate even with --token (OPS-51); the
      // key's kubeconfig goes to .cluster/ (git-ignored), written 0600 by --kubeconfig-out.
      assert.ok(
        plain.some((l) =>
          /^kubectl accesskey create \S+ .*--kubeconfig-out \.cluster\/\S+$/.test(l),
        ),
        "the block makes a key-only kubeconfig in .cluster/",
      );
      assert.ok(
        plain.some((l) => /^kubectl --kubeconfig \.cluster\/\S+ auth whoami\b/.test(l)),
        "the block logs in with it",
      );
      assert.ok(!plain.some((l) => /--token\b/.test(l)), "--token with the admin kubeconfig");
    });

    it("runs as written, vgate is as the manifests install it, and Ctrl-C leaves the host as it was", async () => {
      await playground(plain, async (dir, env, output) => {
        // In the checkout, as a user who just ran make cluster there: the block's own exports
        // (the plugin on PATH) hold for the lines after them; output goes to `dir`.
        const script = plain
          .slice(2)
          .map((l, i) => `{\n${l}\n} >"${dir}/out.${i}" 2>&1; echo $? >"${dir}/code.${i}"`)
          .join("\n");
        const user = { ...env, PATH: process.env["PATH"] ?? "", PWD: repoRoot };
        await new Promise<void>((done) =>
          execFile("bash", ["-c", script], { cwd: repoRoot, env: user, timeout: 120_000 }, () =>
            done(),
          ),
        );
        plain.slice(2).forEach((line, i) => {
          const out = readFileSync(join(dir, `out.${i}`), "utf8");
          assert.equal(readFileSync(join(dir, `code.${i}`), "utf8").trim(), "0", `${line}\n${out}`);
          const promised = /\s#\s(.*)$/.exec(line)?.[1] ?? "";
          if (promised.startsWith("NAME")) {
            assert.deepEqual(out.split("\n")[0]!.trim().split(/\s+/), promised.split(/\s+/));
            assert.equal((out.match(/^vgate-\S+\s+1\/1\s+Running/gm) ?? []).length, 2, out);
          } else if (promised) {
            assert.equal(out.trim(), promised, line);
          }
        });
        await asInstalled(env, output);
      });
    });
  },
);

(HAVE_VCLUSTER ? describe : describe.skip)(
  `README: the make cluster VCLUSTER=1 block${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(600_000);

    it("runs as written: the host copy is patched, the virtual object is not", async () => {
      // Its lines name files of the checkout, so they run there; their output goes to `dir`.
      await playground(withVCluster, (dir, env) =>
        runPromisedBlock(withVCluster.slice(2), dir, env, 120_000, repoRoot),
      );
    });
  },
);
