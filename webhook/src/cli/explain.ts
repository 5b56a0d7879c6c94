// `--explain` output: which patch matched which paths, and which matched nothing.

import type { ExplainEntry } from "../patches/types.js";

export function formatExplain(entries: readonly ExplainEntry[]): string {
  return entries
    .map((e) => {
      const head = `patches[${e.patchIndex}] ${JSON.stringify(e.path)} (${e.action})`;
      const what = e.matched.length ? `matched ${e.matched.join(", ")}` : "matched nothing";
      return `${head}: ${what}${e.note ? ` — ${e.note}` : ""}`;
    })
    .join("\n");
}
