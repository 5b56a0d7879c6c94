// The fuzzer: three real `vgate serve --config ...` processes on the test rig (targets.ts: the
// rig's own, wired to kube-apiserver as token and authorization webhook; one with hashed key
// storage; one whose key cache never syncs), sent generated requests (mutations.ts) over HTTPS by
// fast-check, in a few concurrent lanes of their own seeds, each request with one of six client
// certificates (identities.ts). Every answer is judged (outcome.ts); an admitted /mutate is followed
// by the /validate kube-apiserver would send next, judged too. A failure is minimised by fast-check
// and written to a file. At the end every vgate must still run and answer /healthz, and the
// unsynced one must still not be ready.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { repoFile } from "../support/fixtures.js";
import { TimedClient, type Answer } from "../soak/timed-client.js";
import { isAlive } from "../soak/vgate-process.js";
import { VCLUSTER } from "./bodies.js";
import { IDENTITIES, identityCerts, TRUSTED, type Identity } from "./identities.js";
import { describePlan } from "./keys.js";
import { fuzzInputs, type FuzzInput } from "./mutations.js";
import { judge } from "./outcome.js";
import { startTargets, TARGETS, type Target } from "./targets.js";

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
  /** Requests sent, the /validate requests that follow an admitted /mutate included. */
  sent: number;
  seconds: number;
  /** Per outcome ("200 AdmissionReview allowed", "401 Status, expired", ...), per target. */
  outcomes: Record<string, Partial<Record<Target, number>>>;
  /** Per route, all targets: answers that were reviews (HTTP 200), 4xx refusals and 503s. */
  byRoute: Record<string, { reviews: number; refused: number; unavailable: number }>;
  /** What the judge saw besides the outcome: expectations met, keys hashed, certificates refused. */
  tags: Record<string, number>;
  failures: FuzzFailure[];
  /** Each vgate at the end: still running, its /healthz status and its /readyz answer. */
  end: Record<Target, { alive: boolean; healthz: number; readyz: string }>;
  /** The unsynced vgate's LISTs of OwnedAccessKeys that the fault proxy answered with 500. */
  failedLists: number;
  pass: boolean;
}

/** /readyz of the vgate whose key cache never syncs, all through the run. */
export const UNSYNCED_READYZ = "503 not ready: the access keys are not loaded yet";

/** Runs the fuzzer on a rig of its own and stops it. */
export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-fuzz-"));
  writeFileSync(join(dir, "vcluster.yaml"), repoFile("webhook/examples/vcluster.yaml"));
  const args = [
    `--config=${join(dir, "vcluster.yaml")}`,
    `--vcluster-name=${VCLUSTER.name}`,
    `--vcluster-namespace=${VCLUSTER.namespace}`,
  ];
  let cluster: VgateCluster | undefined;
  try {
    cluster = await startVgateCluster({ logLevel: "error", vgateArgs: args });
    return await fuzzOn(cluster, args, o);
  } finally {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fuzzOn(cluster: VgateCluster, args: string[], o: FuzzOptions): Promise<FuzzReport> {
  const [{ targets, failedLists }, certs] = await Promise.all([
    startTargets(cluster, args),
    identityCerts(cluster),
  ]);
  const clients = {} as Record<Target, Record<Identity, TimedClient>>;
  for (const target of TARGETS) {
    clients[target] = {} as Record<Identity, TimedClient>;
    for (const identity of IDENTITIES) {
      const cert = certs[identity];
      clients[target][identity] = new TimedClient(
        targets[target].url,
        cluster.caPem,
        o.timeoutMs,
        o.lanes * 2,
        cert,
      );
    }
  }
  const outcomes: FuzzReport["outcomes"] = {};
  const byRoute: FuzzReport["byRoute"] = {};
  const tags: FuzzReport["tags"] = {};
  let sent = 0;
  const started = performance.now();
  const send = (input: FuzzInput): Promise<Answer> =>
    clients[input.target][input.identity].send({
      method: input.method,
      path: input.route,
      headers: input.contentType ? { "Content-Type": input.contentType } : {},
      body: input.method === "GET" ? undefined : input.body,
    });
  /** Sends `input` and what kube-apiserver would send after its answer; the first problem. */
  const check = async (input: FuzzInput): Promise<string | undefined> => {
    const answer = await send(input);
    const judged = judge(input, answer);
    sent++;
    const counts = (outcomes[judged.outcome] ??= {});
    counts[input.target] = (counts[input.target] ?? 0) + 1;
    for (const tag of judged.tags ?? []) tags[tag] = (tags[tag] ?? 0) + 1;
    if (sent % 10_000 === 0) o.log?.(`${sent} requests sent`);
    if (judged.problem) {
      const down = !isAlive(targets[input.target].pid);
      return `${down ? `the ${input.target} vgate crashed: ` : ""}${judged.problem}`;
    }
    const route = (byRoute[input.route] ??= { reviews: 0, refused: 0, unavailable: 0 });
    route[answer.status === 200 ? "reviews" : answer.status === 503 ? "unavailable" : "refused"]++;
    if (!judged.next) return undefined;
    const after = await check(judged.next);
    return after && `after /mutate admitted it, ${after}`;
  };
  try {
    const perLane = Math.ceil(o.requests / o.lanes);
    const lanes = Array.from({ length: o.lanes }, (_, i) => lane(i, o.seed + i, perLane, check));
    const failures = (await Promise.all(lanes)).filter((f): f is FuzzFailure => f !== undefined);
    if (failures.length) writeFileSync(o.failureFile, JSON.stringify(failures, null, 2));
    const end = {} as FuzzReport["end"];
    for (const target of TARGETS) {
      const alive = isAlive(targets[target].pid);
      const probe = async (path: string) =>
        alive ? await clients[target][TRUSTED].send({ method: "GET", path }) : undefined;
      const healthz = (await probe("/healthz"))?.status ?? 0;
      const readyz = await probe("/readyz");
      end[target] = { alive, healthz, readyz: readyz ? `${readyz.status} ${readyz.text}` : "-" };
    }
    const seconds = (performance.now() - started) / 1000;
    const pass =
      failures.length === 0 &&
      TARGETS.every((t) => end[t].alive && end[t].healthz === 200) &&
      end.plain.readyz === "200 ok" &&
      end.hashed.readyz === "200 ok" &&
      end.unsynced.readyz === UNSYNCED_READYZ;
    return {
      options: o,
      sent,
      seconds,
      outcomes,
      byRoute,
      tags,
      failures,
      end,
      failedLists: failedLists(),
      pass,
    };
  } finally {
    for (const target of TARGETS)
      for (const identity of IDENTITIES) clients[target][identity].close();
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
    target: input.target,
    identity: input.identity,
    keys: input.plan ? describePlan(input.plan) : undefined,
    wellFormed: input.wellFormed,
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
  const rows = Object.entries(r.outcomes).sort(
    (a, b) => total(b[1]) - total(a[1]) || a[0].localeCompare(b[0]),
  );
  const width = Math.max(...rows.map(([k]) => k.length), 7);
  const columns = TARGETS.map((t) => t.toUpperCase().padStart(9)).join("   ");
  const crashes = TARGETS.filter((t) => !r.end[t].alive);
  const hangs = total(r.outcomes["hang"] ?? {});
  return [
    `fuzz: ${r.sent} requests in ${r.seconds.toFixed(1)} s, seed ${r.options.seed} (FUZZ_SEED=${r.options.seed} FUZZ_REQUESTS=${r.options.requests} reproduces it), ${r.options.lanes} lanes`,
    `OUTCOME${" ".repeat(width - 7)}   ${columns}`,
    ...rows.map(
      ([k, n]) =>
        `${k.padEnd(width)}   ${TARGETS.map((t) => String(n[t] ?? 0).padStart(9)).join("   ")}`,
    ),
    ...Object.entries(r.byRoute).map(
      ([route, n]) =>
        `${route}: ${n.reviews} reviews, ${n.refused} refused (4xx), ${n.unavailable} unavailable (503)`,
    ),
    ...Object.entries(r.tags)
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([tag, n]) => `judged: ${tag}: ${n}`),
    `crashes: ${crashes.length ? crashes.join(", ") : 0}; hangs (no answer within ${r.options.timeoutMs} ms): ${hangs}`,
    ...TARGETS.map(
      (t) =>
        `${t} vgate: ${r.end[t].alive ? "alive" : "gone"}, /healthz ${r.end[t].healthz || "-"}, /readyz ${r.end[t].readyz}`,
    ),
    `unsynced vgate: ${r.failedLists} LISTs of OwnedAccessKeys answered 500`,
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

function total(counts: Partial<Record<Target, number>>): number {
  return TARGETS.reduce((n, t) => n + (counts[t] ?? 0), 0);
}
