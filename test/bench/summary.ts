// The last step of `make bench`: every target the benches recorded (test/bench/targets.ts), in one
// table, met or not. A report: exit 0 either way; exit 1 only when no bench recorded anything,
// which means the results file was not written.
//
//   node dist/test/bench/summary.js dist/bench-results.jsonl

import { existsSync, readFileSync } from "node:fs";
import type { TargetResult } from "./targets.js";

type Line = TargetResult & { bench: string };

const file = process.argv[2] ?? "dist/bench-results.jsonl";
const lines: Line[] = existsSync(file)
  ? readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Line)
  : [];
if (lines.length === 0) {
  console.error(`bench summary: no targets recorded in ${file}`);
  process.exit(1);
}

const rows = [["BENCH", "FIGURE", "VALUE", "TARGET", "MET", "DETAIL"]];
for (const l of lines) {
  rows.push([
    l.bench,
    l.figure,
    l.value,
    l.target,
    l.skipped ? "skipped" : l.met ? "yes" : "NO",
    l.skipped ?? l.detail ?? "",
  ]);
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
console.log("\n== make bench: targets ==");
for (const r of rows)
  console.log(
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("   ")
      .trimEnd(),
  );
const met = lines.filter((l) => !l.skipped && l.met).length;
const skipped = lines.filter((l) => l.skipped).length;
console.log(
  `\n${met} of ${lines.length} targets met${skipped ? `, ${skipped} not measured here` : ""}.`,
);
