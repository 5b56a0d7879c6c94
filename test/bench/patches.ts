// `make bench`, part 3: the Endpoint-sync patch engine on a corpus made by corpus.ts. It measures
// vgate (its sandbox child processes included), the same engine unsandboxed on one thread, and,
// where the maintainers' folder ../shared sits next to the checkout, goja, vCluster's own
// interpreter (../shared/bench/goja/run.sh, which installs its Go toolchain from Debian); it
// prints objects per second with the ratios. Users' checkouts have no ../shared: the goja column
// is then skipped, saying so.
//
// vgate and goja are compared at equal cores: vgate with --workers N sandbox children, goja with N
// workers, each with its own runtime, where N is the number of CPUs this process may use
// (BENCH_PATCH_WORKERS overrides it). On a shared machine one run of each can be seconds apart
// under different loads, so the engines take turns for BENCH_PATCH_ROUNDS rounds (default 3): the
// table shows the median of each engine, and of the ratios taken within each round.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { writeCorpus } from "./corpus.js";

const SECONDS = process.env.BENCH_PATCH_SECONDS ?? "3";
const WORKERS = String(Number(process.env.BENCH_PATCH_WORKERS) || availableParallelism());
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_PATCH_ROUNDS) || 3));
const workDir = mkdtempSync(join(tmpdir(), "vgate-bench-patches-"));
process.on("exit", () => rmSync(workDir, { recursive: true, force: true }));
const corpus = writeCorpus(join(workDir, "endpoints-patches.json"));
// The maintainers' folder next to the checkout; users' clones do not have it. Only this bench
// reads it (the goja harness), and skips that column, saying so, when it is missing.
const gojaHarness = resolve(repoRoot, "../shared/bench/goja/run.sh");
const haveGoja = existsSync(gojaHarness);

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
const rounds: { goja: Line[]; ours: Line[]; plain: Line[] }[] = [];
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
    ours: run(
      vgate,
      ["bench", "--corpus", corpus, "--seconds", SECONDS, "--workers", WORKERS],
      `vgate bench --workers ${WORKERS}, ${of}`,
    ),
    plain: run(
      vgate,
      ["bench", "--engine", "unsandboxed", "--corpus", corpus, "--seconds", SECONDS],
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
  a: (r: (typeof rounds)[number]) => Line[],
  b: (r: (typeof rounds)[number]) => Line[],
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

console.log("");
console.log(
  `Endpoint-sync patches, objects per second, median of ${ROUNDS} rounds (${SECONDS}s per scenario; at equal cores: vgate with ${WORKERS} sandbox children, goja with ${WORKERS} workers; the unsandboxed engine on one thread)`,
);
console.log(
  "scenario                          goja     vgate  unsandboxed   vgate/goja  vgate/unsandboxed  target",
);
let ok = true;
const scenarios = [
  ...new Set(rounds.flatMap((r) => [...r.ours, ...r.goja]).map((l) => l.scenario)),
];
for (const scenario of scenarios) {
  const g = median(rounds.map((r) => rate(r.goja, scenario)));
  const v = median(rounds.map((r) => rate(r.ours, scenario)));
  const p = median(rounds.map((r) => rate(r.plain, scenario)));
  const vsGoja = ratio(
    scenario,
    (r) => r.ours,
    (r) => r.goja,
  );
  const vsPlain = ratio(
    scenario,
    (r) => r.ours,
    (r) => r.plain,
  );
  const small = scenario.startsWith("small");
  const wanted = small ? 1 : 3;
  const met =
    v !== undefined &&
    vsPlain !== undefined &&
    (!haveGoja || (vsGoja !== undefined && vsGoja >= wanted)) &&
    (small || vsPlain >= 0.5);
  ok &&= met;
  const needs = [
    ...(haveGoja ? [`>= ${wanted}x goja`] : []),
    ...(small ? [] : [">= 0.5x unsandboxed"]),
  ];
  console.log(
    `${scenario.padEnd(32)} ${fmt(g).padStart(6)} ${fmt(v).padStart(9)} ${fmt(p).padStart(12)} ${fmt2(vsGoja).padStart(12)} ${fmt2(vsPlain).padStart(18)}  ${met ? "ok" : `needs ${needs.join(", ")}`}`,
  );
}
const scope = haveGoja ? "" : " (without the goja comparison)";
console.log(ok ? `targets met${scope}` : `targets NOT met${scope}`);
