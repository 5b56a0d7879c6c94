// `make bench`, the kubectl plugin: does `kubectl accesskey` feel like kubectl? With 100
// OwnedAccessKeys in a real cluster (test/support/cluster.ts: kube-apiserver, etcd and a real
// `vgate serve`), the median wall time of 10 runs each, interleaved in the same run, of
//   - `kubectl accesskey list --all` against `kubectl get ownedaccesskeys`, and
//   - the cold start `kubectl accesskey --help` against `kubectl --help`,
// both through kubectl's plugin discovery (plugin/bin first on PATH), and the ratios against the
// target (at most 1.5). kubectl keeps a discovery cache of its own for the run, warmed first, as a
// user's would be. Also shown: kubectl-accesskey run directly, without kubectl in front. A report:
// exit 0 either way. Skipped (exit 0, with the reason) without kubectl or the kube binaries.
// BENCH_PLUGIN_RUNS changes the number of runs. For scale it also times the floor of any node
// plugin: `kubectl nodefloor`, an empty node script found the same way (kubectl's own start, its
// exec of the plugin, and node's start).

import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL } from "../support/kubectl.js";

const KEYS = 100;
const RUNS = Number(process.env["BENCH_PLUGIN_RUNS"] ?? 10);
const TARGET = 1.5;
const binDir = resolve(repoRoot, "plugin/bin");

interface Case {
  label: string;
  command: string;
  args: string[];
}

function timeRun(c: Case, env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const r = spawnSync(c.command, c.args, { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`${c.label} failed (${String(r.status)}): ${r.stderr}`);
  return ms;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function fill(cluster: VgateCluster): Promise<void> {
  for (let i = 0; i < KEYS; i++) {
    await cluster.admin.create({
      apiVersion: `${cluster.group}/v1`,
      kind: "OwnedAccessKey",
      metadata: { name: `bench-${String(i).padStart(3, "0")}` },
      spec: { user: `user-${i % 7}`, ttl: 86_400 * (1 + (i % 30)), description: "benchmark key" },
    });
  }
}

/** Runs each pair interleaved (a, b, a, b …) after one warm-up each; medians in ms. */
function compare(pair: [Case, Case], env: NodeJS.ProcessEnv): [number, number] {
  for (const c of pair) timeRun(c, env);
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    times[0].push(timeRun(pair[0], env));
    times[1].push(timeRun(pair[1], env));
  }
  return [median(times[0]), median(times[1])];
}

async function main(): Promise<void> {
  if (!HAVE_KUBE) {
    console.log(`plugin benchmark skipped${KUBE_SKIP_REASON}`);
    return;
  }
  if (!HAVE_KUBECTL) {
    console.log("plugin benchmark skipped: kubectl is not on PATH");
    return;
  }
  const cluster = await startVgateCluster();
  try {
    await fill(cluster);
    const cacheDir = mkdtempSync(join(tmpdir(), "vgate-bench-kubectl-cache-"));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${binDir}${delimiter}${process.env["PATH"] ?? ""}`,
      KUBECONFIG: cluster.kubeconfigPath,
      HOME: mkdtempSync(join(tmpdir(), "vgate-bench-home-")),
    };
    const kubectl = (label: string, ...args: string[]): Case => ({
      label,
      command: "kubectl",
      args: ["--cache-dir", cacheDir, ...args],
    });
    const pluginCase = (label: string, ...args: string[]): Case => ({
      label,
      command: "kubectl",
      args,
    });
    const list = compare(
      [
        pluginCase("kubectl accesskey list --all", "accesskey", "list", "--all"),
        kubectl("kubectl get ownedaccesskeys", "get", "ownedaccesskeys"),
      ],
      env,
    );
    const floorDir = mkdtempSync(join(tmpdir(), "vgate-bench-floor-"));
    writeFileSync(join(floorDir, "kubectl-nodefloor"), "#!/usr/bin/env node\n");
    chmodSync(join(floorDir, "kubectl-nodefloor"), 0o755);
    env["PATH"] = `${floorDir}${delimiter}${env["PATH"] ?? ""}`;
    const floor = compare(
      [pluginCase("kubectl nodefloor", "nodefloor"), kubectl("kubectl --help", "--help")],
      env,
    );
    const help = compare(
      [
        pluginCase("kubectl accesskey --help", "accesskey", "--help"),
        kubectl("kubectl --help", "--help"),
      ],
      env,
    );
    const direct = compare(
      [
        {
          label: "kubectl-accesskey list --all",
          command: join(binDir, "kubectl-accesskey"),
          args: ["list", "--all"],
        },
        {
          label: "kubectl-accesskey --help",
          command: join(binDir, "kubectl-accesskey"),
          args: ["--help"],
        },
      ],
      env,
    );
    console.log(
      `kubectl accesskey vs kubectl: median wall time of ${RUNS} runs each, ${KEYS} keys in the cluster`,
    );
    const line = (what: string, [ours, theirs]: [number, number]) => {
      const ratio = ours / theirs;
      console.log(
        `  ${what.padEnd(58)} ${ours.toFixed(0).padStart(5)} ms vs ${theirs.toFixed(0).padStart(5)} ms  ratio ${ratio.toFixed(2)} (target <= ${TARGET}) ${ratio <= TARGET ? "met" : "NOT met"}`,
      );
    };
    line("kubectl accesskey list --all / kubectl get ownedaccesskeys", list);
    line("kubectl accesskey --help / kubectl --help", help);
    line("floor: kubectl nodefloor (empty node plugin) / kubectl --help", floor);
    console.log(
      `  kubectl-accesskey run directly: list --all ${direct[0].toFixed(0)} ms, --help ${direct[1].toFixed(0)} ms`,
    );
  } finally {
    await cluster.stop();
  }
}

await main();
