// `make bench`, the kubectl plugin: does `kubectl accesskey` feel like kubectl? With 100
// OwnedAccessKeys in a real cluster (test/support/cluster.ts: kube-apiserver, etcd and a real
// `vgate serve`), the median wall time of 10 runs each, interleaved in the same run, of
//   - `kubectl accesskey list --all` against `kubectl get ownedaccesskeys`, and
//   - the cold start `kubectl accesskey --help` against `kubectl --help`,
// both through kubectl's plugin discovery (the plugin's directory first on PATH), and the ratios
// against the target (at most 1.5), for the single executable of make plugin-binary (what krew
// installs on this platform; its ratios are the recorded targets) and for node with the bundle
// (plugin/bin, what make install puts in place). Each twice: with NODE_EXTRA_CA_CERTS (set on the
// project's machines; Debian's CA bundle when unset here) and without (as most users run): node
// reads and parses that file, and its own root certificates, at every start, before any code of
// the plugin runs. kubectl keeps a discovery cache of its own for the run, warmed first, as a
// user's would be. Also shown: kubectl-accesskey run directly, without kubectl in front. A report:
// exit 0 either way. Skipped (exit 0, with the reason) without kubectl or the kube binaries.
// BENCH_PLUGIN_RUNS changes the number of runs. For scale it also times the floor of any node
// plugin: `kubectl nodefloor`, an empty node script found the same way (kubectl's own start, its
// exec of the plugin, and node's start).

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { atMost, recordSkipped, recordTarget } from "./targets.js";

const KEYS = 100;
const RUNS = Number(process.env["BENCH_PLUGIN_RUNS"] ?? 10);
const TARGET = 1.5;
const binDir = resolve(repoRoot, "plugin/bin");
/** make plugin-binary's single executable, which the krew archive of this platform ships. */
const binaryDir = resolve(repoRoot, "plugin/dist/bin");
/** What the CA figures use when this machine sets no NODE_EXTRA_CA_CERTS: Debian's bundle. */
const EXTRA_CA_FILE = "/etc/ssl/certs/ca-certificates.crt";

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

/** Runs the cases interleaved (a, b, c, a, b, c …) after one warm-up each; medians in ms. */
function compare(cases: readonly Case[], env: NodeJS.ProcessEnv): number[] {
  for (const c of cases) timeRun(c, env);
  const times = cases.map((): number[] => []);
  for (let i = 0; i < RUNS; i++) cases.forEach((c, j) => times[j]!.push(timeRun(c, env)));
  return times.map(median);
}

const LIST_FIGURE = "kubectl accesskey list --all vs kubectl get ownedaccesskeys";
const HELP_FIGURE = "kubectl accesskey --help vs kubectl --help";
const CA_MODES = [
  { label: "with NODE_EXTRA_CA_CERTS", ca: true },
  { label: "without NODE_EXTRA_CA_CERTS", ca: false },
] as const;

async function main(): Promise<void> {
  const skipped = !HAVE_KUBE
    ? `plugin benchmark skipped${KUBE_SKIP_REASON}`
    : !HAVE_KUBECTL
      ? `plugin benchmark skipped${KUBECTL_SKIP_REASON}`
      : undefined;
  if (skipped) {
    console.log(skipped);
    for (const { label } of CA_MODES)
      for (const figure of [LIST_FIGURE, HELP_FIGURE])
        recordSkipped(`${figure}, ${label}`, `<= ${TARGET}`, skipped);
    return;
  }
  const cluster = await startVgateCluster();
  try {
    await fill(cluster);
    const cacheDir = mkdtempSync(join(tmpdir(), "vgate-bench-kubectl-cache-"));
    const floorDir = mkdtempSync(join(tmpdir(), "vgate-bench-floor-"));
    writeFileSync(join(floorDir, "kubectl-nodefloor"), "#!/usr/bin/env node\n");
    chmodSync(join(floorDir, "kubectl-nodefloor"), 0o755);
    const kubectl = (label: string, ...args: string[]): Case => ({
      label,
      command: "kubectl",
      args: ["--cache-dir", cacheDir, ...args],
    });
    // kubectl finds the plugin first on PATH: the single executable (PATH of its directory) or
    // the plain-node launcher. `command` is only a name here; PATH says which one runs.
    const plugins = [
      ...(existsSync(join(binaryDir, "kubectl-accesskey"))
        ? [{ name: "single executable (krew)", dir: binaryDir }]
        : []),
      { name: "node and the bundle (make install)", dir: binDir },
    ];
    const envFor = (dir: string, ca: boolean): NodeJS.ProcessEnv => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: [dir, floorDir, process.env["PATH"] ?? ""].join(delimiter),
        KUBECONFIG: cluster.kubeconfigPath,
        HOME: mkdtempSync(join(tmpdir(), "vgate-bench-home-")),
      };
      if (!ca) delete env["NODE_EXTRA_CA_CERTS"];
      else env["NODE_EXTRA_CA_CERTS"] ??= EXTRA_CA_FILE;
      return env;
    };
    console.log(
      `kubectl accesskey vs kubectl: median wall time of ${RUNS} interleaved runs each, ${KEYS} keys in the cluster`,
    );
    const line = (what: string, ours: number, theirs: number, target = true) => {
      const ratio = ours / theirs;
      const verdict = ratio <= TARGET ? "met" : "NOT met";
      console.log(
        `  ${what.padEnd(72)} ${ours.toFixed(0).padStart(5)} ms vs ${theirs.toFixed(0).padStart(5)} ms  ratio ${ratio.toFixed(2)}${target ? ` (target <= ${TARGET}) ${verdict}` : ""}`,
      );
      return ratio;
    };
    for (const { label, ca } of CA_MODES) {
      console.log(`${label}${ca ? ` (${envFor(binDir, true)["NODE_EXTRA_CA_CERTS"]})` : ""}:`);
      // One interleaved series per figure: every plugin and kubectl, each run through kubectl
      // with that plugin's directory first on PATH.
      const series = (args: string[], theirs: Case) => {
        const runs = plugins.map((p) => ({
          env: envFor(p.dir, ca),
          c: { label: `kubectl ${args.join(" ")} (${p.name})`, command: "kubectl", args },
        }));
        for (const r of runs) timeRun(r.c, r.env);
        const env = envFor(binDir, ca);
        timeRun(theirs, env);
        const times = [...runs.map((): number[] => []), []] as number[][];
        for (let i = 0; i < RUNS; i++) {
          runs.forEach((r, j) => times[j]!.push(timeRun(r.c, r.env)));
          times[runs.length]!.push(timeRun(theirs, env));
        }
        return times.map(median);
      };
      const list = series(
        ["accesskey", "list", "--all"],
        kubectl("kubectl get ownedaccesskeys", "get", "ownedaccesskeys"),
      );
      const help = series(["accesskey", "--help"], kubectl("kubectl --help", "--help"));
      const floor = compare(
        [
          { label: "kubectl nodefloor", command: "kubectl", args: ["nodefloor"] },
          kubectl("kubectl --help", "--help"),
        ],
        envFor(binDir, ca),
      );
      plugins.forEach((p, i) => {
        const listRatio = line(
          `list --all / kubectl get ownedaccesskeys, ${p.name}`,
          list[i]!,
          list.at(-1)!,
        );
        const helpRatio = line(`--help / kubectl --help, ${p.name}`, help[i]!, help.at(-1)!);
        // The figures of the issue are those of what krew installs: the first plugin.
        if (i === 0) {
          const detail = (ours: number, theirs: number) =>
            `${p.name} ${ours.toFixed(0)} ms / kubectl ${theirs.toFixed(0)} ms`;
          recordTarget(
            atMost(`${LIST_FIGURE}, ${label}`, listRatio, TARGET, detail(list[i]!, list.at(-1)!)),
          );
          recordTarget(
            atMost(`${HELP_FIGURE}, ${label}`, helpRatio, TARGET, detail(help[i]!, help.at(-1)!)),
          );
        }
      });
      line(
        "floor: kubectl nodefloor (empty node plugin) / kubectl --help",
        floor[0]!,
        floor[1]!,
        false,
      );
      const direct = compare(
        plugins.flatMap((p) => [
          {
            label: `${p.name} list --all`,
            command: join(p.dir, "kubectl-accesskey"),
            args: ["list", "--all"],
          },
          {
            label: `${p.name} --help`,
            command: join(p.dir, "kubectl-accesskey"),
            args: ["--help"],
          },
        ]),
        envFor(binDir, ca),
      );
      plugins.forEach((p, i) =>
        console.log(
          `  kubectl-accesskey run directly, ${p.name}: list --all ${direct[2 * i]!.toFixed(0)} ms, --help ${direct[2 * i + 1]!.toFixed(0)} ms`,
        ),
      );
    }
  } finally {
    await cluster.stop();
  }
}

await main();
