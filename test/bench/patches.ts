// `make bench`, part 3: the patch engine on several corpora (corpus.ts, plus the maintainers'
// shared corpus ../shared/bench/corpus/endpoints-patches.json where it is present). It measures
// vgate with N sandbox child processes, vgate with one, the same engine unsandboxed on one thread,
// and, where the maintainers' folder ../shared sits next to the checkout, goja, vCluster's own
// interpreter (../shared/bench/goja/run.sh, which installs its Go toolchain from Debian); it
// prints objects per second with the ratios, and records issue 26's targets:
// - the patch engine at >= 3x goja at equal cores on medium and large objects, on every corpus;
// - the sandbox's cost: `--workers 1` at >= 0.8 of the unsandboxed engine (the floor), small,
//   medium and large, on the Endpoints corpus of corpus.ts.
// Users' checkouts have no ../shared: the goja column and the shared corpus are then skipped,
// saying so.
//
// vgate and goja are compared at equal cores: vgate with --workers N sandbox children, goja with N
// workers, each with its own runtime, where N is the number of CPUs this process may use
// (BENCH_PATCH_WORKERS overrides it). On a shared machine one run of each can be seconds apart
// under different loads, so the engines take turns for BENCH_PATCH_ROUNDS rounds (default 3): the
// table shows the median of each engine, and of the ratios taken within each round. All corpora
// go into one corpus file per run (scenarios named corpus/scenario), so each engine starts once
// per round: goja's harness builds itself each time it runs. BENCH_PATCH_CORPORA (a comma-separated
// list of corpus names) runs only those.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { CORPUS, GENERATED, writeCorpus, type Corpus } from "./corpus.js";
import { atLeast, recordSkipped, recordTarget } from "./targets.js";

const SECONDS = process.env.BENCH_PATCH_SECONDS ?? "2";
const WORKERS = String(Number(process.env.BENCH_PATCH_WORKERS) || availableParallelism());
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_PATCH_ROUNDS) || 3));
const GOJA_TARGET = 3;
const SANDBOX_TARGET = 0.8;
/** The corpus the sandbox-cost target is taken on. */
const SANDBOX_CORPUS = "endpoints";
const workDir = mkdtempSync(join(tmpdir(), "vgate-bench-patches-"));
process.on("exit", () => rmSync(workDir, { recursive: true, force: true }));
// The maintainers' folder next to the checkout; users' clones do not have it. Only this bench
// reads it (the goja harness and its corpus), and skips them, saying so, when it is missing.
const gojaHarness = resolve(repoRoot, "../shared/bench/goja/run.sh");
const sharedCorpus = resolve(repoRoot, "../shared/bench/corpus/endpoints-patches.json");
const haveGoja = existsSync(gojaHarness);

const corpora: Record<string, Corpus> = { [SANDBOX_CORPUS]: CORPUS };
if (existsSync(sharedCorpus)) corpora["shared"] = JSON.parse(readFileSync(sharedCorpus, "utf8"));
else process.stderr.write(`skipping the shared corpus: ${sharedCorpus} is not here\n`);
Object.assign(corpora, GENERATED);
const only = process.env.BENCH_PATCH_CORPORA?.split(",").filter((c) => c !== "");
const names = Object.keys(corpora).filter((n) => !only || only.includes(n));

/** Every scenario of every corpus in one file, under one vCluster (ours). */
const combined: Corpus = {
  description: `make bench: the corpora ${names.join(", ")}`,
  vcluster: CORPUS.vcluster,
  scenarios: names.flatMap((n) =>
    corpora[n]!.scenarios.map((s) => ({ ...s, name: `${n}/${s.name}` })),
  ),
};
const corpus = writeCorpus(join(workDir, "corpora.json"), combined);

interface Line {
  engine: string;
  scenario: string;
  objects_per_second: number;
}

function run(command: string, args: string[], what: string): Line[] {
  process.stderr.write(`running ${what}...\n`);
  const r = spawnSync(command, args, { cwd: repoRoot, encoding: "utf8", maxBuffer: 16 << 20 });
  if (r.status !== 0) {
    process.stderr.write(`${what} failed (exit ${r.status}):\n${r.stderr}\n`);
    return [];
  }
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);
}

if (!haveGoja) {
  process.stderr.write(
    `skipping the goja comparison: ${gojaHarness} is not here (the maintainers' reference harness, not part of this repository)\n`,
  );
}

const vgate = resolve(repoRoot, "webhook/bin/vgate");
interface Round {
  goja: Line[];
  ours: Line[];
  one: Line[];
  plain: Line[];
}
const rounds: Round[] = [];
const vgateBench = (extra: string[]): string[] => [
  "bench",
  "--corpus",
  corpus,
  "--seconds",
  SECONDS,
  ...extra,
];
for (let round = 1; round <= ROUNDS; round++) {
  const of = `round ${round} of ${ROUNDS}`;
  rounds.push({
    goja: haveGoja
      ? run(
          "bash",
          [gojaHarness, corpus, SECONDS, WORKERS],
          `goja with ${WORKERS} workers (../shared/bench/goja/run.sh), ${of}`,
        )
      : [],
    ours: run(vgate, vgateBench(["--workers", WORKERS]), `vgate bench --workers ${WORKERS}, ${of}`),
    one: run(vgate, vgateBench(["--workers", "1"]), `vgate bench --workers 1, ${of}`),
    plain: run(
      vgate,
      vgateBench(["--engine", "unsandboxed"]),
      `vgate bench --engine unsandboxed, ${of}`,
    ),
  });
}

const rate = (lines: Line[], scenario: string): number | undefined =>
  lines.find((l) => l.scenario === scenario)?.objects_per_second;

function median(values: (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (known.length === 0) return undefined;
  const mid = known.length >> 1;
  return known.length % 2 ? known[mid] : (known[mid - 1]! + known[mid]!) / 2;
}

/** The median over rounds of `a / b`, each ratio taken within one round. */
function ratio(
  scenario: string,
  a: (r: Round) => Line[],
  b: (r: Round) => Line[],
): number | undefined {
  return median(
    rounds.map((r) => {
      const x = rate(a(r), scenario);
      const y = rate(b(r), scenario);
      return x === undefined || y === undefined ? undefined : x / y;
    }),
  );
}

const fmt = (n: number | undefined): string => (n === undefined ? "-" : n.toFixed(0));
const fmt2 = (n: number | undefined): string => (n === undefined ? "-" : n.toFixed(2));
const sizeOf = (scenario: string): string => scenario.replace(/^.*\//, "").split("-")[0] ?? "";

console.log("");
console.log(
  `Patch engine, objects per second, median of ${ROUNDS} rounds (${SECONDS}s per scenario; at equal cores: vgate with ${WORKERS} sandbox children, goja with ${WORKERS} workers; vgate-1: one sandbox child; the unsandboxed engine on one thread)`,
);
const header = [
  "corpus/scenario".padEnd(46),
  "goja".padStart(7),
  "vgate".padStart(8),
  "vgate-1".padStart(8),
  "unsandboxed".padStart(11),
  "vgate/goja".padStart(11),
  "target".padStart(7),
  "vgate-1/unsandboxed".padStart(20),
  "target".padStart(7),
];
console.log(header.join(" "));
let ok = true;
for (const scenario of combined.scenarios.map((s) => s.name)) {
  const size = sizeOf(scenario);
  const corpusName = scenario.split("/")[0]!;
  const vsGoja = ratio(
    scenario,
    (r) => r.ours,
    (r) => r.goja,
  );
  const vsPlain = ratio(
    scenario,
    (r) => r.one,
    (r) => r.plain,
  );
  const gojaTarget = size === "small" ? undefined : GOJA_TARGET;
  const plainTarget = corpusName === SANDBOX_CORPUS ? SANDBOX_TARGET : undefined;
  const gojaMet = !haveGoja || gojaTarget === undefined || (vsGoja ?? 0) >= gojaTarget;
  const plainMet = plainTarget === undefined || (vsPlain ?? 0) >= plainTarget;
  ok &&= gojaMet && plainMet;
  console.log(
    [
      scenario.padEnd(46),
      fmt(median(rounds.map((r) => rate(r.goja, scenario)))).padStart(7),
      fmt(median(rounds.map((r) => rate(r.ours, scenario)))).padStart(8),
      fmt(median(rounds.map((r) => rate(r.one, scenario)))).padStart(8),
      fmt(median(rounds.map((r) => rate(r.plain, scenario)))).padStart(11),
      fmt2(vsGoja).padStart(11),
      (gojaTarget === undefined ? "" : `>= ${gojaTarget}`).padStart(7),
      fmt2(vsPlain).padStart(20),
      (plainTarget === undefined ? "" : `>= ${plainTarget}`).padStart(7),
    ].join(" "),
  );
  if (gojaTarget !== undefined) {
    const figure = `Patch engine vs goja at ${WORKERS} cores, ${corpusName}, ${size}`;
    if (!haveGoja) recordSkipped(figure, `>= ${gojaTarget}`, "no ../shared/bench/goja/run.sh");
    else if (vsGoja === undefined) recordSkipped(figure, `>= ${gojaTarget}`, "a run failed");
    else recordTarget(atLeast(figure, vsGoja, gojaTarget, `${scenario}, median of ${ROUNDS}`));
  }
  if (plainTarget !== undefined) {
    const figure = `Sandbox cost: vgate bench --workers 1 vs --engine unsandboxed, ${size}`;
    if (vsPlain === undefined) recordSkipped(figure, `>= ${plainTarget}`, "a run failed");
    else recordTarget(atLeast(figure, vsPlain, plainTarget, `${scenario}, median of ${ROUNDS}`));
  }
}
const scope = haveGoja ? "" : " (without the goja comparison)";
console.log(ok ? `targets met${scope}` : `targets NOT met${scope}`);
