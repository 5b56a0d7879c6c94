// `make bench`, part 3: the Endpoint-sync patch engine on a corpus made by corpus.ts. In one run it
// measures vgate (sandbox and worker threads included), the same engine unsandboxed on the main
// thread, and, where the maintainers' folder ../shared sits next to the checkout, goja, vCluster's
// own interpreter (../shared/bench/goja/run.sh, which installs its Go toolchain from Debian); it
// prints objects per second with the ratios. Users' checkouts have no ../shared: the goja column
// is then skipped, saying so.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repoRoot, sharedDir } from "../support/fixtures.js";
import { writeCorpus } from "./corpus.js";

const SECONDS = process.env.BENCH_PATCH_SECONDS ?? "3";
const workDir = mkdtempSync(join(tmpdir(), "vgate-bench-patches-"));
process.on("exit", () => rmSync(workDir, { recursive: true, force: true }));
const corpus = writeCorpus(join(workDir, "endpoints-patches.json"));
const gojaHarness = resolve(sharedDir, "bench/goja/run.sh");

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

const vgate = resolve(repoRoot, "webhook/bin/vgate");
const goja = existsSync(gojaHarness)
  ? run("bash", [gojaHarness, corpus, SECONDS], "goja (../shared/bench/goja/run.sh)")
  : skipGoja();

function skipGoja(): Line[] {
  process.stderr.write(
    `skipping the goja comparison: ${gojaHarness} is not here (the maintainers' reference harness, not part of this repository)\n`,
  );
  return [];
}
const ours = run(
  vgate,
  ["bench", "--corpus", corpus, "--seconds", SECONDS],
  "vgate bench (sandbox)",
);
const plain = run(
  vgate,
  ["bench", "--engine", "unsandboxed", "--corpus", corpus, "--seconds", SECONDS],
  "vgate bench --engine unsandboxed",
);

const rate = (lines: Line[], scenario: string): number | undefined =>
  lines.find((l) => l.scenario === scenario)?.objects_per_second;
const fmt = (n: number | undefined): string => (n === undefined ? "-" : n.toFixed(0));
const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined ? "-" : (a / b).toFixed(2);

console.log("");
console.log(
  `Endpoint-sync patches, objects per second (${SECONDS}s per scenario; vgate uses ${availableParallelism()} worker threads; goja and the unsandboxed engine one thread)`,
);
console.log(
  "scenario                          goja     vgate  unsandboxed   vgate/goja  vgate/unsandboxed  target",
);
let ok = true;
const haveGoja = goja.length > 0;
for (const s of ours.length ? ours : goja) {
  const g = rate(goja, s.scenario);
  const v = rate(ours, s.scenario);
  const p = rate(plain, s.scenario);
  const small = s.scenario.startsWith("small");
  const vsGoja = small ? 1 : 3;
  const met =
    v !== undefined &&
    p !== undefined &&
    (!haveGoja || (g !== undefined && v >= vsGoja * g)) &&
    (small || v * 2 >= p);
  ok &&= met;
  const needs = [
    ...(haveGoja ? [`>= ${vsGoja}x goja`] : []),
    ...(small ? [] : [">= 0.5x unsandboxed"]),
  ];
  console.log(
    `${s.scenario.padEnd(32)} ${fmt(g).padStart(6)} ${fmt(v).padStart(9)} ${fmt(p).padStart(12)} ${ratio(v, g).padStart(12)} ${ratio(v, p).padStart(18)}  ${met ? "ok" : `needs ${needs.join(", ")}`}`,
  );
}
const scope = haveGoja ? "" : " (without the goja comparison)";
console.log(ok ? `targets met${scope}` : `targets NOT met${scope}`);
