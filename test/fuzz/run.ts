// `make fuzz`: 100,000 generated requests (FUZZ_REQUESTS) against a real `vgate serve` on a rig of
// its own; see fuzz.ts. FUZZ_SEED replays a run (a random seed is printed otherwise). Failing
// inputs go to FUZZ_FAILURES (dist/fuzz-failures.json). Exit code 1 on FAIL, 0 with a message
// when the rig's kube binaries are missing (`make kube`).

import { resolve } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { formatFuzzReport, runFuzz } from "./fuzz.js";

function integer(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isSafeInteger(n) || n < min) {
    console.error(`error: ${name}=${JSON.stringify(raw)}: must be an integer >= ${min}`);
    process.exit(2);
  }
  return n;
}

if (!HAVE_KUBE) {
  console.log(`fuzz skipped${KUBE_SKIP_REASON}`);
} else {
  const seed = integer("FUZZ_SEED", Math.floor(Math.random() * 2 ** 31), 0);
  console.log(`fuzz seed ${seed}`);
  const report = await runFuzz({
    requests: integer("FUZZ_REQUESTS", 100_000, 1),
    seed,
    lanes: integer("FUZZ_LANES", 4, 1),
    timeoutMs: integer("FUZZ_TIMEOUT_MS", 10_000, 1),
    failureFile: resolve(process.env.FUZZ_FAILURES || "dist/fuzz-failures.json"),
    log: (line) => console.log(`[${new Date().toISOString()}] ${line}`),
  });
  console.log(formatFuzzReport(report));
  process.exitCode = report.pass ? 0 : 1;
}
