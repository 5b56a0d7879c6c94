// `make bench`, part 6: `vgate sync`, the Endpoints sync controller, on two real kube-apiservers
// (test/support/sync-rig.ts: a virtual cluster and a host, vgate sync as its own service account
// in each, with manifests/sync/'s RBAC).
//
// The virtual cluster gets SYNC_BENCH_OBJECTS (1,000) selector-less (headless) Services and their
// Endpoints (10 addresses each, with hostnames and Pod targetRefs, two labels, two annotations) in
// namespaces of 100 before any controller runs. Then, in interleaved rounds (A, B, B, A, ...;
// SYNC_BENCH_ROUNDS of each, default 3), a fresh `vgate sync` starts with config A (5 patches) or
// config B (the same file with `patches: []`) and the bench measures:
// 1. cold start: the wall time from starting the process to every host copy existing with vgate's
//    snapshot annotation (the host namespace is listed every 500 ms); each copy is then checked
//    against what the config must produce (patched or not), so a broken sync is reported, not timed;
// 2. steady state: 100 merge PATCHes a second, each a new value of one annotation, round-robin over
//    the virtual Endpoints, for SYNC_BENCH_SECONDS (30); CPU time of the vgate process tree (vgate,
//    its sandbox processes, and the reaped ones through cutime/cstime) from the first PATCH until
//    every host copy carries its last value, per update, expressed as CPU seconds per second at
//    100 updates/s. Writes during a quiet period after each phase are counted: they must be 0.
// Between runs the controller stops (SIGTERM) and the host copies are deleted.
// Ratios A/B are medians of the per-round ratios, with their range.
//
// A report: exit 0 whether the figures are good or not, and 1 when a host copy is wrong. Skipped
// (exit 0) without the kube binaries.

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { KubeTestClient } from "../support/kube/kube-client.js";
import { startSyncRig, type SyncProcess, type SyncRig } from "../support/sync-rig.js";
import { medianOf, rangeOf } from "./latency-stats.js";
import { metricValue } from "../support/prometheus-text.js";
import { findProcess } from "./process-cpu.js";
import { atMost, recordSkipped, recordTarget } from "./targets.js";

const OBJECTS = Number(process.env["SYNC_BENCH_OBJECTS"] ?? 1000);
const SECONDS = Number(process.env["SYNC_BENCH_SECONDS"] ?? 30);
const ROUNDS = Number(process.env["SYNC_BENCH_ROUNDS"] ?? 3);
const RATE = 100;
const ADDRESSES = 10;
const PER_NAMESPACE = 100;
const CREATES_IN_FLIGHT = 16;
const PATCHES_IN_FLIGHT = 64;
const POLL_MS = 500;
const QUIET_MS = 3000;
const CONVERGE_TIMEOUT_MS = Math.max(120_000, OBJECTS * 300);

const SNAPSHOT = "vgate.loft.sh/sync-snapshot";
const A = "bench.example.com/";
const SEQ = `${A}seq`;

const PATCHES = `      patches:
        - path: metadata.annotations[*]
          expression: value.trim()
        - path: metadata.annotations["${A}owner"]
          expression: value.toUpperCase()
          reverseExpression: value.toLowerCase()
        - path: metadata.labels["${A}tier"]
          expression: '"tier-" + value'
        - path: subsets[*].addresses[*].hostname
          expression: 'value + "-" + context.vcluster.name'
        - path: ""
          expression: '({ ...value, metadata: { ...value.metadata, annotations: { ...(value.metadata && value.metadata.annotations), "${A}synced-by": "vgate" } } })'
`;
const config = (patches: string) =>
  `sync:\n  toHost:\n    endpoints:\n      enabled: true\n${patches}`;

type Mode = "patched" | "plain";
/** Issue 26: a config's patches cost the cold start at most 10 %. */
const TARGET_COLD_RATIO = 1.1;
const COLD_FIGURE = `vgate sync cold start, ${OBJECTS} Endpoints, 5 patches vs none`;

const MODES: readonly Mode[] = ["patched", "plain"];

interface Address {
  ip: string;
  hostname?: string;
  targetRef?: { kind: string; name: string; namespace?: string };
}
interface Endpoints {
  metadata: {
    name: string;
    namespace: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  subsets?: { addresses?: Address[]; ports?: { name: string; port: number; protocol: string }[] }[];
}

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const seconds = (since: number) => (performance.now() - since) / 1000;

// ---- The virtual objects ----

interface Source {
  namespace: string;
  name: string;
  index: number;
}

function sources(): Source[] {
  return Array.from({ length: OBJECTS }, (_, index) => ({
    namespace: `bench-${Math.floor(index / PER_NAMESPACE)}`,
    name: `ep-${String(index).padStart(4, "0")}`,
    index,
  }));
}

function virtualEndpoints(s: Source): Endpoints & Record<string, unknown> {
  const addresses = Array.from({ length: ADDRESSES }, (_, i) => ({
    ip: `10.${(s.index >> 8) & 255}.${s.index & 255}.${i + 1}`,
    hostname: `pod-${i}`,
    targetRef: { kind: "Pod", name: `${s.name}-${i}`, namespace: s.namespace },
  }));
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: s.name,
      namespace: s.namespace,
      annotations: { [`${A}owner`]: `team-${s.index % 7}`, [`${A}note`]: "  kept as is  " },
      labels: { [`${A}tier`]: `t${s.index % 3}`, app: "bench" },
    },
    subsets: [{ addresses, ports: [{ name: "http", port: 8080, protocol: "TCP" }] }],
  };
}

async function inParallel<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

async function post(client: KubeTestClient, path: string, body: unknown): Promise<void> {
  const res = await client.request("POST", path, body);
  if (res.status !== 201) {
    throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
}

async function createVirtualObjects(client: KubeTestClient, all: Source[]): Promise<number> {
  const started = performance.now();
  const namespaces = [...new Set(all.map((s) => s.namespace))];
  for (const name of namespaces) {
    await post(client, "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
  }
  await inParallel(all, CREATES_IN_FLIGHT, async (s) => {
    await post(client, `/api/v1/namespaces/${s.namespace}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: s.name, namespace: s.namespace },
      // Headless: the test API server's Service IP range is a /24.
      spec: {
        clusterIP: "None",
        ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }],
      },
    });
    await post(client, `/api/v1/namespaces/${s.namespace}/endpoints`, virtualEndpoints(s));
  });
  return seconds(started);
}

// ---- The host copies ----

const hostKey = (e: Endpoints) =>
  `${e.metadata.annotations?.["vcluster.loft.sh/object-namespace"] ?? ""}/${e.metadata.annotations?.["vcluster.loft.sh/object-name"] ?? ""}`;

async function hostCopies(rig: SyncRig): Promise<Map<string, Endpoints>> {
  const selector = encodeURIComponent(`vcluster.loft.sh/managed-by=${rig.vcluster.name}`);
  const res = await rig.host.admin.request<{ items?: Endpoints[] }>(
    "GET",
    `/api/v1/namespaces/${rig.vcluster.namespace}/endpoints?labelSelector=${selector}`,
  );
  if (res.status !== 200) throw new Error(`listing host Endpoints: ${res.status}`);
  return new Map((res.body.items ?? []).map((e) => [hostKey(e), e]));
}

/** What is wrong with a host copy of `s` under `mode`; "" when nothing is. */
function hostProblem(s: Source, host: Endpoints | undefined, mode: Mode, vcName: string): string {
  if (!host) return "missing";
  const ann = host.metadata.annotations ?? {};
  const labels = host.metadata.labels ?? {};
  const patched = mode === "patched";
  const owner = `team-${s.index % 7}`;
  const want: [string, unknown, unknown][] = [
    ["snapshot annotation", Boolean(ann[SNAPSHOT]), true],
    ["owner annotation", ann[`${A}owner`], patched ? owner.toUpperCase() : owner],
    ["note annotation", ann[`${A}note`], patched ? "kept as is" : "  kept as is  "],
    ["synced-by annotation", ann[`${A}synced-by`], patched ? "vgate" : undefined],
    ["tier label", labels[`${A}tier`], `${patched ? "tier-" : ""}t${s.index % 3}`],
    ["managed-by label", labels["vcluster.loft.sh/managed-by"], vcName],
  ];
  const addresses = host.subsets?.[0]?.addresses ?? [];
  want.push(["addresses", addresses.length, ADDRESSES]);
  addresses.forEach((a, i) => {
    want.push([`hostname ${i}`, a.hostname, patched ? `pod-${i}-${vcName}` : `pod-${i}`]);
    want.push([`targetRef ${i}`, a.targetRef?.name, `${s.name}-${i}-x-${s.namespace}-x-${vcName}`]);
  });
  const bad = want.find(([, got, expected]) => got !== expected);
  return bad ? `${bad[0]}: ${JSON.stringify(bad[1])}, expected ${JSON.stringify(bad[2])}` : "";
}

interface Check {
  ok: number;
  problems: string[];
}

function checkAll(all: Source[], copies: Map<string, Endpoints>, mode: Mode, rig: SyncRig): Check {
  const problems: string[] = [];
  for (const s of all) {
    const p = hostProblem(s, copies.get(`${s.namespace}/${s.name}`), mode, rig.vcluster.name);
    if (p) problems.push(`${s.namespace}/${s.name}: ${p}`);
  }
  const extra = copies.size - all.length + problems.filter((p) => p.endsWith("missing")).length;
  if (extra > 0) problems.push(`${extra} host copies with no virtual object`);
  return { ok: all.length - problems.length, problems };
}

/** Polls the host until `done` holds for its copies; the seconds from `since`. */
async function waitForHost(
  rig: SyncRig,
  proc: SyncProcess,
  since: number,
  what: string,
  done: (copies: Map<string, Endpoints>) => boolean,
): Promise<number> {
  for (;;) {
    if (done(await hostCopies(rig))) return seconds(since);
    if (proc.exited()) {
      const tail = (await proc.log()).trimEnd().split("\n").slice(-30).join("\n");
      throw new Error(
        `vgate sync exited (code ${String(proc.exitCode())}) while waiting for ${what}; its log ends:\n${tail}`,
      );
    }
    if (performance.now() - since > CONVERGE_TIMEOUT_MS) {
      throw new Error(
        `${what}: not reached within ${CONVERGE_TIMEOUT_MS / 1000} s; see ${proc.logFile}`,
      );
    }
    await sleep(POLL_MS);
  }
}

async function deleteHostCopies(rig: SyncRig): Promise<void> {
  const selector = encodeURIComponent(`vcluster.loft.sh/managed-by=${rig.vcluster.name}`);
  const path = `/api/v1/namespaces/${rig.vcluster.namespace}/endpoints?labelSelector=${selector}`;
  const res = await rig.host.admin.request("DELETE", path);
  if (res.status !== 200) throw new Error(`deleting host copies: ${res.status}`);
  for (let i = 0; (await hostCopies(rig)).size > 0; i++) {
    if (i > 120) throw new Error("host copies still there 60 s after a delete");
    await sleep(POLL_MS);
  }
}

// ---- CPU of the vgate process tree ----

/** Clock ticks per second of /proc/<pid>/stat's times (getconf CLK_TCK; 100 when unknown). */
const TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
  } catch {
    return 100;
  }
})();

/** utime+stime of `pid`, and cutime+cstime (its reaped children), in ms; 0 when gone. */
function stat(pid: number): { own: number; reaped: number } {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text
      .slice(text.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    const ms = (ticks: number) => (ticks * 1000) / TICKS;
    return { own: ms(f[11]! + f[12]!), reaped: ms(f[13]! + f[14]!) };
  } catch {
    return { own: 0, reaped: 0 };
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8")
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** CPU ms of `pid` and every descendant, live or reaped. */
function treeMs(pid: number): number {
  const { own, reaped } = stat(pid);
  return own + reaped + childrenOf(pid).reduce((sum, c) => sum + treeMs(c), 0);
}

/** CPU ms of the vgate process itself, and of its sandbox processes (live and reaped). */
interface Cpu {
  main: number;
  sandbox: number;
}

function cpuOf(pid: number): Cpu {
  const main = stat(pid).own;
  return { main, sandbox: treeMs(pid) - main };
}

const cpuSince = (pid: number, before: Cpu): Cpu => {
  const now = cpuOf(pid);
  return { main: (now.main - before.main) / 1000, sandbox: (now.sandbox - before.sandbox) / 1000 };
};
const total = (c: Cpu) => c.main + c.sandbox;

async function vgatePid(proc: SyncProcess): Promise<number> {
  const port = new URL(proc.metricsUrl).port;
  for (let i = 0; i < 200; i++) {
    // The supervisor's command line holds the same arguments: it is left out by its script name.
    const pid = findProcess(["sync", `--metrics-bind-address=127.0.0.1:${port}`], ["supervise"]);
    if (pid !== null) return pid;
    await sleep(25);
  }
  throw new Error(`vgate sync process not found; see ${proc.logFile}`);
}

// ---- One run: a fresh controller, cold start then steady state ----

/** Counters of the controller's /metrics. */
interface Writes {
  host: number;
  virtual: number;
  reconciles: number;
  errors: number;
}

async function writes(proc: SyncProcess): Promise<Writes> {
  const page = (await proc.get("/metrics")).text;
  return {
    host: metricValue(page, "vgate_sync_writes_total", { side: "host" }),
    virtual: metricValue(page, "vgate_sync_writes_total", { side: "virtual" }),
    reconciles: metricValue(page, "controller_runtime_reconcile_total", {}),
    errors: metricValue(page, "controller_runtime_reconcile_errors_total", {}),
  };
}

const minus = (a: Writes, b: Writes): Writes => ({
  host: a.host - b.host,
  virtual: a.virtual - b.virtual,
  reconciles: a.reconciles - b.reconciles,
  errors: a.errors - b.errors,
});

interface Run {
  mode: Mode;
  coldSeconds: number;
  /** CPU from the process's start to the last host copy. */
  coldCpu: Cpu;
  coldWrites: Writes;
  cold: Check;
  quietAfterCold: Writes;
  load: LoadResult;
  quietAfterLoad: Writes;
  /** CPU seconds per second at 100 updates/s (the tree's CPU per update, times 100). */
  cpuPer100: number;
  idleCpuPerSecond: number;
  exitCode: number | null;
}

interface LoadResult {
  sent: number;
  failed: number;
  seconds: number;
  catchUpSeconds: number;
  cpu: Cpu;
  writes: Writes;
  stale: number;
}

/** Writes and CPU during QUIET_MS with nothing to do. */
async function quiet(
  proc: SyncProcess,
  pid: number,
): Promise<{ writes: Writes; cpuPerSecond: number }> {
  const [w0, c0, t0] = [await writes(proc), cpuOf(pid), performance.now()];
  await sleep(QUIET_MS);
  const w1 = await writes(proc);
  return { writes: minus(w1, w0), cpuPerSecond: total(cpuSince(pid, c0)) / seconds(t0) };
}

async function patchSeq(client: KubeTestClient, s: Source, seq: number): Promise<boolean> {
  const res = await client
    .request(
      "PATCH",
      `/api/v1/namespaces/${s.namespace}/endpoints/${s.name}`,
      { metadata: { annotations: { [SEQ]: String(seq) } } },
      { "Content-Type": "application/merge-patch+json" },
    )
    .catch(() => ({ status: 0 }));
  return res.status === 200;
}

/** RATE PATCHes a second for SECONDS, on schedule; the last value each object was given. */
async function drive(client: KubeTestClient, all: Source[], seqBase: number) {
  const count = Math.round(SECONDS * RATE);
  const last = new Map<Source, string>();
  const inFlight = new Set<Promise<void>>();
  let failed = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    const s = all[i % all.length]!;
    const seq = seqBase + i;
    const p: Promise<void> = patchSeq(client, s, seq).then((ok) => {
      if (ok) last.set(s, String(seq));
      else failed++;
      inFlight.delete(p);
    });
    inFlight.add(p);
    if (inFlight.size >= PATCHES_IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return { sent: count, failed, seconds: seconds(started), last };
}

async function steadyState(
  rig: SyncRig,
  proc: SyncProcess,
  pid: number,
  all: Source[],
  seqBase: number,
): Promise<LoadResult> {
  const [w0, c0, t0] = [await writes(proc), cpuOf(pid), performance.now()];
  const { sent, failed, seconds: loadSeconds, last } = await drive(rig.virtual.admin, all, seqBase);
  const stale = (copies: Map<string, Endpoints>) =>
    [...last].filter(
      ([s, v]) => copies.get(`${s.namespace}/${s.name}`)?.metadata.annotations?.[SEQ] !== v,
    ).length;
  const what = "the last update of every object on the host";
  const untilCaughtUp = await waitForHost(rig, proc, t0, what, (c) => stale(c) === 0);
  const cpu = cpuSince(pid, c0);
  return {
    sent,
    failed,
    seconds: loadSeconds,
    catchUpSeconds: untilCaughtUp - loadSeconds,
    cpu,
    writes: minus(await writes(proc), w0),
    stale: stale(await hostCopies(rig)),
  };
}

async function waitForLeaseFree(rig: SyncRig): Promise<void> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${rig.vcluster.namespace}/leases/vgate-sync-${rig.vcluster.name}`;
  for (let i = 0; i < 60; i++) {
    const res = await rig.host.admin.request<{ spec?: { holderIdentity?: string } }>("GET", path);
    if (res.status === 404 || !res.body.spec?.holderIdentity) return;
    await sleep(POLL_MS);
  }
  throw new Error("the previous controller did not release its Lease");
}

let seqBase = 0;

async function runOnce(
  rig: SyncRig,
  mode: Mode,
  file: string,
  round: number,
  all: Source[],
): Promise<Run> {
  await waitForLeaseFree(rig);
  const started = performance.now();
  const proc = await rig.startSync({ name: `${mode}-${round}`, config: file });
  const pid = await vgatePid(proc);
  const synced = (c: Map<string, Endpoints>) =>
    all.every((s) => Boolean(c.get(`${s.namespace}/${s.name}`)?.metadata.annotations?.[SNAPSHOT]));
  const coldSeconds = await waitForHost(rig, proc, started, `${OBJECTS} host copies`, synced);
  const coldCpu = cpuSince(pid, { main: 0, sandbox: 0 });
  const coldWrites = await writes(proc);
  const cold = checkAll(all, await hostCopies(rig), mode, rig);
  const afterCold = await quiet(proc, pid);
  const load = await steadyState(rig, proc, pid, all, seqBase);
  seqBase += load.sent;
  const afterLoad = await quiet(proc, pid);
  await proc.stop();
  await deleteHostCopies(rig);
  return {
    mode,
    coldSeconds,
    coldCpu,
    coldWrites,
    cold,
    quietAfterCold: afterCold.writes,
    load,
    quietAfterLoad: afterLoad.writes,
    cpuPer100: (total(load.cpu) / load.sent) * RATE,
    idleCpuPerSecond: afterCold.cpuPerSecond,
    exitCode: proc.exitCode(),
  };
}

const msPerWrite = (r: Run) => (total(r.load.cpu) * 1000) / r.load.writes.host;
const cpuText = (c: Cpu) =>
  `${total(c).toFixed(2)} CPU-s (vgate ${c.main.toFixed(2)}, sandbox ${c.sandbox.toFixed(2)})`;
const quietWrites = (r: Run) =>
  r.quietAfterCold.host +
  r.quietAfterCold.virtual +
  r.quietAfterLoad.host +
  r.quietAfterLoad.virtual;

function runLines(r: Run): string[] {
  const l = r.load;
  return [
    `  ${r.mode}: cold start ${r.coldSeconds.toFixed(1)} s, ${cpuText(r.coldCpu)}, ${r.coldWrites.host} host writes, ${r.coldWrites.reconciles} reconciles, ${r.cold.ok}/${OBJECTS} copies right`,
    `    load: ${l.sent - l.failed}/${l.sent} PATCHes in ${l.seconds.toFixed(1)} s, host caught up ${l.catchUpSeconds.toFixed(1)} s later; ${cpuText(l.cpu)} → ${r.cpuPer100.toFixed(3)} CPU-s/s at 100 updates/s; ${l.writes.host} host / ${l.writes.virtual} virtual writes (${(l.writes.host / l.sent).toFixed(2)} per update, ${msPerWrite(r).toFixed(1)} CPU-ms each), ${l.writes.reconciles} reconciles, ${l.writes.errors} errors`,
    `    idle ${r.idleCpuPerSecond.toFixed(3)} CPU-s/s; writes while quiet: ${quietWrites(r)}; exit code ${String(r.exitCode)}`,
  ];
}

// ---- Report ----

function ratioLine(
  what: string,
  runs: Record<Mode, Run[]>,
  f: (r: Run) => number,
  unit: string,
): string {
  const ratios = runs.patched.map((r, i) => f(r) / f(runs.plain[i]!));
  const m = (mode: Mode) => runs[mode].map(f);
  return `${what}: 5 patches ${medianOf(m("patched")).toFixed(3)} ${unit} (${rangeOf(m("patched"))}), no patches ${medianOf(m("plain")).toFixed(3)} ${unit} (${rangeOf(m("plain"))}); ratio ${medianOf(ratios).toFixed(2)} (${rangeOf(ratios)})`;
}

function problems(runs: Run[]): string[] {
  const out: string[] = [];
  for (const r of runs) {
    for (const p of r.cold.problems.slice(0, 5)) out.push(`${r.mode} cold start: ${p}`);
    if (r.load.stale > 0)
      out.push(`${r.mode}: ${r.load.stale} host copies missed their last update`);
    if (quietWrites(r) > 0) out.push(`${r.mode}: ${quietWrites(r)} writes while nothing changed`);
  }
  return out;
}

async function main(): Promise<number> {
  if (!HAVE_KUBE) {
    log(`sync bench skipped: it needs two real kube-apiservers${KUBE_SKIP_REASON}`);
    recordSkipped(
      COLD_FIGURE,
      `<= ${TARGET_COLD_RATIO}`,
      `needs the kube binaries${KUBE_SKIP_REASON}`,
    );
    return 0;
  }
  const started = performance.now();
  log(
    `part 6: vgate sync, ${OBJECTS} Endpoints of ${ADDRESSES} addresses; starting two control planes ...`,
  );
  const rig = (running = await startSyncRig());
  try {
    const all = sources();
    const created = await createVirtualObjects(rig.virtual.admin, all);
    log(
      `  ${OBJECTS} Services and Endpoints created in the virtual cluster in ${created.toFixed(1)} s`,
    );
    const files: Record<Mode, string> = {
      patched: await rig.writeConfig("patched.yaml", config(PATCHES)),
      plain: await rig.writeConfig("plain.yaml", config("      patches: []\n")),
    };
    log(`  ${ROUNDS} rounds of each, interleaved; ${SECONDS} s of ${RATE} updates/s per run`);
    const runs: Record<Mode, Run[]> = { patched: [], plain: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) {
        const run = await runOnce(rig, mode, files[mode], round, all);
        runs[mode].push(run);
        for (const line of runLines(run)) log(line);
      }
    }
    log("");
    log("summary (medians of the runs, with their range; ratios: medians of the per-round ratios)");
    log(
      `${ratioLine("cold start to all host copies", runs, (r) => r.coldSeconds, "s")}   target <= ${TARGET_COLD_RATIO}`,
    );
    const coldRatios = runs.patched.map((r, i) => r.coldSeconds / runs.plain[i]!.coldSeconds);
    recordTarget(
      atMost(
        COLD_FIGURE,
        medianOf(coldRatios),
        TARGET_COLD_RATIO,
        `${medianOf(runs.patched.map((r) => r.coldSeconds)).toFixed(2)} s / ${medianOf(runs.plain.map((r) => r.coldSeconds)).toFixed(2)} s, ratios ${rangeOf(coldRatios)}`,
      ),
    );
    log(ratioLine("CPU of the cold start", runs, (r) => total(r.coldCpu), "CPU-s"));
    log(ratioLine("  of which sandbox", runs, (r) => r.coldCpu.sandbox, "CPU-s"));
    log(ratioLine("steady-state CPU at 100 updates/s", runs, (r) => r.cpuPer100, "CPU-s/s"));
    log(
      ratioLine(
        "  of which sandbox",
        runs,
        (r) => (r.load.cpu.sandbox / r.load.sent) * RATE,
        "CPU-s/s",
      ),
    );
    // When the controller falls behind, updates of one object coalesce (it is level-triggered):
    // fewer writes, less CPU per update. CPU per host write does not depend on that.
    log(ratioLine("host writes per update", runs, (r) => r.load.writes.host / r.load.sent, ""));
    log(ratioLine("CPU per host write under load", runs, msPerWrite, "CPU-ms"));
    log(ratioLine("catch-up after the load", runs, (r) => r.load.catchUpSeconds, "s"));
    const bad = problems([...runs.patched, ...runs.plain]);
    log(
      bad.length === 0
        ? "every host copy was right after every phase, and no writes while quiet"
        : "PROBLEMS:",
    );
    for (const line of bad) log(`  ${line}`);
    log(
      `(CPU: vgate sync and its sandbox processes, live ones summed over the process tree and exited ones through cutime/cstime; whole run ${seconds(started).toFixed(0)} s)`,
    );
    return bad.some((l) => !l.includes("writes while")) ? 1 : 0;
  } finally {
    running = undefined;
    await rig.stop();
  }
}

let running: SyncRig | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void (running?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}
process.exitCode = await main();
