// The targets `make bench` checks, recorded by each bench as it prints its own table, and listed
// together at the end by test/bench/summary.ts, so one look says which are met.
//
// Each bench process appends one JSON line per target to BENCH_RESULTS (the Makefile points it at
// dist/bench-results.jsonl and empties it first); without BENCH_RESULTS nothing is written, so a
// bench run on its own just prints.

import { appendFileSync } from "node:fs";

export interface TargetResult {
  /** What is measured, as the table says it: "TokenReview vs echo, 16 connections". */
  figure: string;
  /** The figure as measured, formatted: "0.74", "251 MB". */
  value: string;
  /** The target, formatted with its comparison: ">= 0.9", "<= 150 MB". */
  target: string;
  met: boolean;
  /** The baseline or the two sides, when it helps to read the figure: "vgate 2.1 ms / echo 1.1 ms". */
  detail?: string;
  /** Set when the figure could not be measured (no kube binaries, not root): why. */
  skipped?: string;
}

export function recordTarget(result: TargetResult): void {
  const file = process.env["BENCH_RESULTS"];
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...result, bench: benchName() })}\n`, { mode: 0o644 });
}

/** A target a bench could not measure here, listed as such in the summary. */
export function recordSkipped(figure: string, target: string, reason: string): void {
  recordTarget({ figure, value: "-", target, met: false, skipped: reason });
}

/** `at least` and `at most` targets, formatted the same way everywhere. */
export function atLeast(
  figure: string,
  value: number,
  target: number,
  detail?: string,
  digits = 2,
): TargetResult {
  return {
    figure,
    value: value.toFixed(digits),
    target: `>= ${target}`,
    met: value >= target,
    detail,
  };
}

export function atMost(
  figure: string,
  value: number,
  target: number,
  detail?: string,
  digits = 2,
  unit = "",
): TargetResult {
  const u = unit ? ` ${unit}` : "";
  return {
    figure,
    value: `${value.toFixed(digits)}${u}`,
    target: `<= ${target}${u}`,
    met: value <= target,
    detail,
  };
}

function benchName(): string {
  const script = process.argv[1] ?? "";
  return script.replace(/^.*\//, "").replace(/\.js$/, "");
}
