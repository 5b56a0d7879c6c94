// The fuzzer: a real `vgate serve --config ...` on the test rig (token and authorization webhooks
// wired to kube-apiserver, /mutate/endpoints on for a vCluster config), sent generated requests
// (mutations.ts) over HTTPS by fast-check, in a few concurrent lanes of their own seeds. Every
// answer is judged (outcome.ts); a failure is minimised by fast-check and written to a file. At the
// end vgate must still run and answer /healthz.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { repoFile } from "../support/fixtures.js";
import { TimedClient } from "../soak/timed-client.js";
import { isAlive, vgatePid } from "../soak/vgate-process.js";
import { VCLUSTER } from "./bodies.js";
import { fuzzInputs, type FuzzInput } from "./mutations.js";
import { judge } from "./outcome.js";

export interface FuzzOptions {
  requests: number;
  seed: number;
  /** Concurrent lanes; lane i runs requests/lanes cases with seed + i. */
  lanes: number;
  timeoutMs: number;
  /** Where failing inputs are written (JSON); nothing is written when none fail. */
  failureFile: string;
  log?: (line: string) => void;
}

export interface FuzzFailure {
  lane: number;
  seed: number;
  /** fast-check's path of the failing case: FUZZ_SEED and this replay it. */
  path?: string;
  problem: string;
  first: ReturnType<typeof recordOf>;
  minimal?: ReturnType<typeof recordOf>;
}

export interface FuzzReport {
  options: FuzzOptions;
  sent: number;
  seconds: number;
  outcomes: Record<string, number>;
  /** Per route: answers that were reviews (HTTP 200) and 4xx refusals. */
  byRoute: Record<string, { reviews: number; refused: number }>;
  failures: FuzzFailure[];
  alive: boolean;
  healthz: number;
  pass: boolean;
}

/** Runs the fuzzer on a rig of its own and stops it. */
export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-fuzz-"));
  writeFileSync(join(dir, "vcluster.yaml"), repoFile("webhook/examples/vcluster.yaml"));
  let cluster: VgateCluster | undefined;
  try {
    cluster = await startVgateCluster({
      logLevel: "error",
      vgateArgs: [
        `--config=${join(dir, "vcluster.yaml")}`,
        `--vcluster-name=${VCLUSTER.name}`,
        `--vcluster-namespace=${VCLUSTER.namespace}`,
      ],
    });
    return await fuzzOn(cluster, o);
  } finally {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fuzzOn(cluster: VgateCluster, o: FuzzOptions): Promise<FuzzReport> {
  const pid = vgatePid(Number(new URL(cluster.vgateUrl).port));
  const client = new TimedClient(
    cluster.vgateUrl,
    cluster.caPem,
    o.timeoutMs,
    o.lanes * 2,
    cluster.apiserverClient,
  );
  const outcomes: Record<string, number> = {};
  const byRoute: FuzzReport["byRoute"] = {};
  let sent = 0;
  const started = performance.now();
  const check = async (input: FuzzInput): Promise<string | undefined> => {
    const answer = await client.send({
      method: input.method,
      path: input.route,
      headers: input.contentType ? { "Content-Type": input.contentType } : {},
      body: input.method === "GET" ? undefined : input.body,
    });
    const judged = judge(input, answer);
    sent++;
    outcomes[judged.outcome] = (outcomes[judged.outcome] ?? 0) + 1;
    const route = (byRoute[input.route] ??= { reviews: 0, refused: 0 });
    if (!judged.problem) route[judged.outcome.startsWith("200 ") ? "reviews" : "refused"]++;
    if (sent % 10_000 === 0) o.log?.(`${sent} requests sent`);
    if (judged.problem && !isAlive(pid)) return `vgate crashed: ${judged.problem}`;
    return judged.problem;
  };
  try {
    const perLane = Math.ceil(o.requests / o.lanes);
    const lanes = Array.from({ length: o.lanes }, (_, i) => lane(i, o.seed + i, perLane, check));
    const failures = (await Promise.all(lanes)).filter((f): f is FuzzFailure => f !== undefined);
    if (failures.length) writeFileSync(o.failureFile, JSON.stringify(failures, null, 2));
    const alive = isAlive(pid);
    const healthz = alive ? (await client.send({ method: "GET", path: "/healthz" })).status : 0;
    const seconds = (performance.now() - started) / 1000;
    const pass = failures.length === 0 && alive && healthz === 200;
    return { options: o, sent, seconds, outcomes, byRoute, failures, alive, healthz, pass };
  } finally {
    client.close();
  }
}

/** One lane: fast-check runs `runs` cases of its own seed; a failure comes back minimised. */
async function lane(
  index: number,
  seed: number,
  runs: number,
  check: (input: FuzzInput) => Promise<string | undefined>,
): Promise<FuzzFailure | undefined> {
  let first: { input: FuzzInput; problem: string } | undefined;
  let last: { input: FuzzInput; problem: string } | undefined;
  const property = fc.asyncProperty(fuzzInputs(), async (input) => {
    const problem = await check(input);
    if (!problem) return true;
    first ??= { input, problem };
    last = { input, problem };
    // After a crash every request fails: `first` is then the input to look at, not `minimal`.
    return false;
  });
  const details = await fc.check(property, { seed, numRuns: runs, endOnFailure: false });
  if (!details.failed || !first) return undefined;
  const minimal = details.counterexample?.[0];
  return {
    lane: index,
    seed,
    path: details.counterexamplePath ?? undefined,
    problem: last?.problem ?? first.problem,
    first: recordOf(first.input),
    minimal: minimal ? recordOf(minimal) : undefined,
  };
}

/** A failing input as it goes into the failure file: the body as text (cut at 64 KiB) and base64. */
function recordOf(input: FuzzInput) {
  const cut = input.body.length > 65_536;
  return {
    from: input.from,
    mutations: input.mutations,
    method: input.method,
    route: input.route,
    contentType: input.contentType,
    bodyBytes: input.body.length,
    body: input.body.subarray(0, 65_536).toString("utf8") + (cut ? "…" : ""),
    bodyBase64: cut ? undefined : input.body.toString("base64"),
  };
}

/** The summary printed by `make fuzz`. */
export function formatFuzzReport(r: FuzzReport): string {
  const rows = Object.entries(r.outcomes).sort((a, b) => b[1] - a[1]);
  const width = Math.max(...rows.map(([k]) => k.length), 7);
  const crashes = r.alive ? 0 : 1;
  const hangs = r.outcomes["hang"] ?? 0;
  return [
    `fuzz: ${r.sent} requests in ${r.seconds.toFixed(1)} s, seed ${r.options.seed} (FUZZ_SEED=${r.options.seed} FUZZ_REQUESTS=${r.options.requests} reproduces it), ${r.options.lanes} lanes`,
    `OUTCOME${" ".repeat(width - 7)}   COUNT`,
    ...rows.map(([k, n]) => `${k.padEnd(width)}   ${n}`),
    ...Object.entries(r.byRoute).map(
      ([route, n]) => `${route}: ${n.reviews} reviews, ${n.refused} refused (4xx)`,
    ),
    `crashes: ${crashes}; hangs (no answer within ${r.options.timeoutMs} ms): ${hangs}; vgate ${r.alive ? "alive" : "gone"}, /healthz ${r.healthz || "-"}`,
    ...r.failures.map(
      (f) =>
        `failing input (lane ${f.lane}, seed ${f.seed}${f.path ? `, path ${f.path}` : ""}): ${f.problem}`,
    ),
    r.failures.length ? `failing inputs written to ${r.options.failureFile}` : "",
    r.pass ? "PASS" : "FAIL",
  ]
    .filter(Boolean)
    .join("\n");
}
