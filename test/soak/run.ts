// `make soak`: 10 minutes (SOAK_SECONDS) of mixed admission, TokenReview and SubjectAccessReview
// load at 200 requests a second (SOAK_RATE) on a rig of its own; see soak.ts. Prints the summary;
// exit code 1 on FAIL, 0 with a message when the rig's kube binaries are missing (`make kube`).

import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { formatSoakReport, runSoak } from "./soak.js";

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`error: ${name}=${JSON.stringify(raw)}: must be a positive number`);
    process.exit(2);
  }
  return n;
}

if (!HAVE_KUBE) {
  console.log(`soak skipped${KUBE_SKIP_REASON}`);
} else {
  const seconds = positive("SOAK_SECONDS", 600);
  const report = await runSoak({
    seconds,
    rate: positive("SOAK_RATE", 200),
    rssIntervalMs: positive("SOAK_RSS_INTERVAL_MS", 2000),
    rssSlopeLimit: positive("SOAK_RSS_SLOPE_LIMIT", 1),
    heapFloor: {
      everyMs: positive("SOAK_GC_INTERVAL_MS", 2000),
      warmupSeconds: Math.min(60, seconds / 4),
      slopeLimit: positive("SOAK_HEAP_SLOPE_LIMIT", Infinity),
      // The test of the check: vgate keeps this many bytes per request (heap-floor-preload.ts).
      leakBytes: Number(process.env["SOAK_LEAK_BYTES"] ?? 0),
    },
    sigtermBurst: 64,
    // vgate's default --shutdown-delay.
    shutdownDelaySeconds: 5,
    log: (line) => console.log(`[${new Date().toISOString()}] ${line}`),
  });
  console.log(formatSoakReport(report));
  process.exitCode = report.pass ? 0 : 1;
}
