// The soak: a real `vgate serve` on the test rig (test/support/cluster.ts), driven over HTTPS at a
// fixed rate with the mix of soak-mix.ts. Its serving certificate is rotated halfway (new files
// from the same CA, which vgate reloads from disk), and at the end it gets SIGTERM while requests
// are in flight. Measured: every answer checked, p50/p99 per kind, VmRSS sampled over the run and
// its trend over the second half, and what in-flight requests saw at SIGTERM.

import { X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startVgateCluster, VGATE_NAMESPACE, type VgateCluster } from "../support/cluster.js";
import { servingCert } from "../support/kube/pki.js";
import { servedFingerprint, writeTlsFiles } from "../support/tls-files.js";
import type { HeapFloorSample } from "./heap-floor-preload.js";
import { storeSoakFixtures, soakKinds, type RequestKind } from "./soak-mix.js";
import { floorSlopePerMinute, percentile, slopePerMinute, type Sample } from "./stats.js";
import { TimedClient, type Sent } from "./timed-client.js";
import { rssMb, vgatePid, waitForExit } from "./vgate-process.js";

export interface SoakOptions {
  seconds: number;
  /** Requests per second, all kinds together. */
  rate: number;
  /** How often VmRSS is sampled. */
  rssIntervalMs: number;
  /** The largest acceptable upward RSS trend over the second half, MB per minute. */
  rssSlopeLimit: number;
  /** Requests sent at once just before SIGTERM, so that some are surely in flight. */
  sigtermBurst: number;
  /**
   * vgate's --shutdown-delay, in seconds: after SIGTERM /readyz fails but connections are still
   * accepted this long. The load goes on for a second after the signal, within it.
   */
  shutdownDelaySeconds: number;
  /**
   * The leak check: vgate runs with heap-floor-preload.ts, which collects all garbage every
   * `everyMs` and records what is left (V8 heap and external memory). The trend of that floor from
   * `warmupSeconds` to the end of the load may not exceed `slopeLimit` MB/min. `leakBytes` (the
   * test of the check) makes vgate keep that many bytes per request.
   */
  heapFloor?: { everyMs: number; warmupSeconds: number; slopeLimit: number; leakBytes?: number };
  /** Progress lines (none when omitted). */
  log?: (line: string) => void;
}

export interface KindReport {
  name: string;
  count: number;
  failed: number;
  p50: number;
  p99: number;
}

export interface SoakReport {
  options: SoakOptions;
  seconds: number;
  requests: number;
  failed: number;
  /** The first few failures, "kind: problem". */
  failures: string[];
  kinds: KindReport[];
  rss: {
    start: number;
    end: number;
    max: number;
    /** MB/min over the second half, of the lowest sample in each sixth of it (the verdict's). */
    slope: number;
    /** MB/min over the second half, of all samples. */
    rawSlope: number;
    samples: Sample[];
  };
  /** The post-GC floor (heap plus external memory, MB) when options.heapFloor is set. */
  heapFloor?: {
    /** The first and last sample of the window the trend is taken over. */
    start: number;
    end: number;
    /** MB/min, least squares over the window (the verdict's). */
    slope: number;
    windowSeconds: number;
    /** The window's samples. */
    samples: Sample[];
  };
  rotation: { atSeconds: number; servedAfterMs?: number; failedAround: number; sentAround: number };
  sigterm: {
    /** /readyz 200 ms after SIGTERM: 503 (or refused, 0) means not ready. */
    readyz: number;
    inFlight: number;
    inFlightFailed: number;
    inFlightProblems: string[];
    exitMs?: number;
    afterSigterm: number;
    afterSigtermAnswered: number;
  };
  pass: boolean;
  reasons: string[];
}

interface Outcome {
  kind: string;
  at: number;
  ms: number;
  problem?: string;
  writtenAt?: number;
}

/** Runs the soak on a rig of its own and stops the rig. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const probe = options.heapFloor && heapProbe(options.heapFloor);
  try {
    const cluster = await startVgateCluster({
      logLevel: "warn",
      vgateArgs: [`--shutdown-delay=${options.shutdownDelaySeconds}s`],
      vgateEnv: probe?.env ?? {},
    });
    try {
      return await soakOn(cluster, options, probe);
    } finally {
      await cluster.stop();
    }
  } finally {
    probe?.remove();
  }
}

interface HeapProbe {
  env: Record<string, string>;
  /** The post-GC samples so far: time since the epoch in ms, MB of heap and external memory. */
  read(): Sample[];
  remove(): void;
}

/** Where heap-floor-preload.ts writes, and the environment that loads it into vgate. */
function heapProbe(o: NonNullable<SoakOptions["heapFloor"]>): HeapProbe {
  const dir = mkdtempSync(join(tmpdir(), "vgate-soak-heap-"));
  const file = join(dir, "heap.jsonl");
  const preload = pathToFileURL(
    join(dirname(fileURLToPath(import.meta.url)), "heap-floor-preload.js"),
  ).href;
  return {
    env: {
      NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --import=${preload}`.trim(),
      VGATE_SOAK_HEAP_LOG: file,
      VGATE_SOAK_GC_MS: String(o.everyMs),
      VGATE_SOAK_LEAK_BYTES: String(o.leakBytes ?? 0),
    },
    read: () =>
      (existsSync(file) ? readFileSync(file, "utf8") : "")
        .split("\n")
        .filter((line) => line.endsWith("}"))
        .map((line) => JSON.parse(line) as HeapFloorSample)
        .map((x) => ({ t: x.t, value: (x.heapUsed + x.external) / 2 ** 20 })),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function soakOn(
  cluster: VgateCluster,
  o: SoakOptions,
  probe: HeapProbe | undefined,
): Promise<SoakReport> {
  const log = o.log ?? (() => undefined);
  const port = Number(new URL(cluster.vgateUrl).port);
  const pid = vgatePid(port);
  const client = new TimedClient(
    cluster.vgateUrl,
    cluster.caPem,
    10_000,
    64,
    cluster.apiserverClient,
  );
  try {
    const kinds = soakKinds(await storeSoakFixtures(cluster, client));
    const picker = weighted(kinds);
    const outcomes: Outcome[] = [];
    const t0 = performance.now();
    const epoch0 = Date.now();
    const send = (kind: RequestKind, fresh: boolean): Promise<Outcome> => {
      const sent: Sent = { ...kind.build(), fresh };
      const at = performance.now() - t0;
      return client.send(sent).then((answer) => {
        const out = {
          kind: kind.name,
          at,
          ms: answer.ms,
          writtenAt: answer.writtenAt,
          problem: kind.check(sent, answer),
        };
        outcomes.push(out);
        return out;
      });
    };
    const rss = sampleRss(pid, o.rssIntervalMs, t0);
    log(`vgate pid ${pid}; ${o.rate} req/s for ${o.seconds} s`);
    const rotation = await loadWithRotation(
      cluster,
      o,
      // One request in 11 (all kinds in turn: the mix has 10) on a new TLS connection.
      (i) => send(picker(i), i % 11 === 0),
      t0,
      log,
    );
    const readyz = async () =>
      (await client.send({ method: "GET", path: "/readyz", fresh: true })).status;
    rss.stop();
    // The floor up to the end of the load; SIGTERM's shutdown is not steady state.
    const floor = probe?.read().map((x) => ({ t: x.t - epoch0, value: x.value }));
    const sigterm = await sigtermUnderLoad(pid, o, (i) => send(picker(i), false), readyz, log);
    return report(
      o,
      outcomes,
      kinds,
      rss.samples,
      floor,
      rotation,
      sigterm,
      (performance.now() - t0) / 1000,
    );
  } finally {
    client.close();
  }
}

/** kind i of the mix, by weight, cycling. */
function weighted(kinds: RequestKind[]): (i: number) => RequestKind {
  const slots = kinds.flatMap((k) => Array<RequestKind>(k.weight).fill(k));
  return (i) => slots[i % slots.length]!;
}

function sampleRss(pid: number, everyMs: number, t0: number) {
  const samples: Sample[] = [];
  const take = () => {
    const mb = rssMb(pid);
    if (mb !== undefined) samples.push({ t: performance.now() - t0, value: mb });
  };
  take();
  const timer = setInterval(take, everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

/**
 * Sends `fire(i)` `rate` times a second (open loop: the schedule does not wait for answers) until
 * `done()`; resolves once every answer is in.
 */
async function fixedRate(
  rate: number,
  fire: (i: number) => Promise<unknown>,
  done: () => boolean,
): Promise<number> {
  const pending = new Set<Promise<unknown>>();
  const started = performance.now();
  let sent = 0;
  while (!done()) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; sent < due; sent++) {
      const p = fire(sent).finally(() => pending.delete(p));
      pending.add(p);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(pending);
  return sent;
}

interface Rotation {
  atMs: number;
  servedAfterMs?: number;
}

/**
 * The timed load; halfway, new certificate and key files from the same CA replace the served ones
 * (each file replaced atomically, as a kubelet-updated Secret volume does). The load goes on past
 * the end (up to 20 s) until vgate serves the new certificate.
 */
async function loadWithRotation(
  cluster: VgateCluster,
  o: SoakOptions,
  fire: (i: number) => Promise<unknown>,
  t0: number,
  log: (line: string) => void,
): Promise<Rotation> {
  const port = Number(new URL(cluster.vgateUrl).port);
  const oldPrint = await servedFingerprint(port);
  const rotation: Rotation = { atMs: (o.seconds * 1000) / 2 };
  let rotated: X509Certificate | undefined;
  const rotate = async () => {
    await new Promise((r) => setTimeout(r, rotation.atMs));
    rotated = await rotateCertificate(cluster);
    rotation.atMs = performance.now() - t0;
    log(`rotated the serving certificate at ${(rotation.atMs / 1000).toFixed(1)} s`);
    while (performance.now() - t0 < o.seconds * 1000 + 20_000) {
      const print = await servedFingerprint(port).catch(() => oldPrint);
      if (print === rotated.fingerprint256) {
        rotation.servedAfterMs = performance.now() - t0 - rotation.atMs;
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const rotating = rotate();
  const endMs = o.seconds * 1000;
  await fixedRate(o.rate, fire, () => {
    const now = performance.now() - t0;
    return now >= endMs && (rotation.servedAfterMs !== undefined || now >= endMs + 20_000);
  });
  await rotating;
  return rotation;
}

/** Writes a new serving certificate for vgate from the rig's CA into the files it serves. */
async function rotateCertificate(cluster: VgateCluster): Promise<X509Certificate> {
  const tls = await servingCert(cluster.plane.ca, [`vgate.${VGATE_NAMESPACE}.svc`, "localhost"]);
  writeTlsFiles(join(cluster.plane.dir, "vgate"), tls, "rename");
  return new X509Certificate(tls.cert);
}

interface Sigterm {
  burst: Promise<Outcome[]>;
  signalledAt: number;
  /** /readyz's HTTP status 200 ms after the signal (0: refused). */
  readyz: number;
  exitMs?: number;
  after: Promise<Outcome[]>;
}

/**
 * A burst of requests, SIGTERM once they are written, and the fixed-rate load going on for a
 * second after it (half the shutdown delay if that is shorter). A request whose bytes were all
 * written before the signal was in flight: a graceful shutdown answers it; so it does the requests
 * that come within the shutdown delay, while /readyz already answers 503.
 */
async function sigtermUnderLoad(
  pid: number,
  o: SoakOptions,
  fire: (i: number) => Promise<Outcome>,
  readyz: () => Promise<number>,
  log: (line: string) => void,
): Promise<Sigterm> {
  // A first burst opens enough kept-alive connections that the second is written at once.
  await Promise.all(Array.from({ length: o.sigtermBurst }, (_, i) => fire(i)));
  const burst = Array.from({ length: o.sigtermBurst }, (_, i) => fire(i));
  await new Promise((r) => setTimeout(r, 5));
  const signalledAt = performance.now();
  process.kill(pid, "SIGTERM");
  log(`SIGTERM with ${o.sigtermBurst} requests just sent`);
  const later: Promise<Outcome>[] = [];
  const ready = new Promise<number>((r) => setTimeout(() => r(readyz()), 200));
  const afterStart = performance.now();
  await fixedRate(
    o.rate,
    (i) => {
      const p = fire(i);
      later.push(p);
      return p;
    },
    () => performance.now() - afterStart > Math.min(1000, (o.shutdownDelaySeconds * 1000) / 2),
  );
  const exitMs = await waitForExit(pid, 35_000);
  return {
    burst: Promise.all(burst),
    signalledAt,
    readyz: await ready,
    exitMs: exitMs === undefined ? undefined : performance.now() - signalledAt,
    after: Promise.all(later),
  };
}

async function report(
  o: SoakOptions,
  outcomes: Outcome[],
  kinds: RequestKind[],
  samples: Sample[],
  floor: Sample[] | undefined,
  rotation: Rotation,
  sig: Sigterm,
  seconds: number,
): Promise<SoakReport> {
  const burst = await sig.burst;
  const after = await sig.after;
  const shutdown = new Set<Outcome>([...burst, ...after]);
  const steady = outcomes.filter((x) => !shutdown.has(x));
  const inFlight = [...burst, ...after].filter(
    (x) => x.writtenAt !== undefined && x.writtenAt < sig.signalledAt,
  );
  const inFlightFailed = inFlight.filter((x) => x.problem);
  const afterSigterm = [...burst, ...after].filter((x) => !inFlight.includes(x));
  const failedSteady = steady.filter((x) => x.problem);
  const around = steady.filter((x) => Math.abs(x.at - rotation.atMs) < 30_000);
  const half = samples.filter((s) => s.t >= (o.seconds * 1000) / 2);
  const values = samples.map((s) => s.value);
  const r: SoakReport = {
    options: o,
    seconds,
    requests: steady.length,
    failed: failedSteady.length,
    failures: failedSteady.slice(0, 10).map((x) => `${x.kind}: ${x.problem}`),
    kinds: kinds.map((k) => kindReport(k.name, steady)),
    rss: {
      start: values[0] ?? NaN,
      end: values.at(-1) ?? NaN,
      max: Math.max(...values),
      slope: floorSlopePerMinute(half),
      rawSlope: slopePerMinute(half),
      samples,
    },
    heapFloor: floor && o.heapFloor && heapFloorReport(floor, o.heapFloor.warmupSeconds),
    rotation: {
      atSeconds: rotation.atMs / 1000,
      servedAfterMs: rotation.servedAfterMs,
      failedAround: around.filter((x) => x.problem).length,
      sentAround: around.length,
    },
    sigterm: {
      readyz: sig.readyz,
      inFlight: inFlight.length,
      inFlightFailed: inFlightFailed.length,
      inFlightProblems: [...new Set(inFlightFailed.map((x) => x.problem!))].slice(0, 5),
      exitMs: sig.exitMs,
      afterSigterm: afterSigterm.length,
      afterSigtermAnswered: afterSigterm.filter((x) => !x.problem).length,
    },
    pass: false,
    reasons: [],
  };
  r.reasons = verdict(r);
  r.pass = r.reasons.length === 0;
  return r;
}

function heapFloorReport(floor: Sample[], warmupSeconds: number): SoakReport["heapFloor"] {
  const window = floor.filter((x) => x.t >= warmupSeconds * 1000);
  const first = window[0];
  const last = window.at(-1);
  return {
    start: first?.value ?? NaN,
    end: last?.value ?? NaN,
    slope: slopePerMinute(window),
    windowSeconds: first && last ? (last.t - first.t) / 1000 : 0,
    samples: window,
  };
}

function kindReport(name: string, outcomes: Outcome[]): KindReport {
  const mine = outcomes.filter((x) => x.kind === name);
  const ms = mine.map((x) => x.ms);
  return {
    name,
    count: mine.length,
    failed: mine.filter((x) => x.problem).length,
    p50: percentile(ms, 0.5),
    p99: percentile(ms, 0.99),
  };
}

/** Why the soak failed; none when it passed. */
export function verdict(r: SoakReport): string[] {
  const reasons: string[] = [];
  if (r.failed > 0) reasons.push(`${r.failed} failed requests`);
  if (!(r.rss.slope <= r.options.rssSlopeLimit))
    reasons.push(
      `RSS trend ${r.rss.slope.toFixed(2)} MB/min over the second half (limit ${r.options.rssSlopeLimit})`,
    );
  const floor = r.heapFloor;
  const floorLimit = r.options.heapFloor?.slopeLimit;
  if (floorLimit !== undefined && !(floor !== undefined && floor.samples.length >= 5))
    reasons.push("too few post-GC heap samples to see a leak");
  else if (floorLimit !== undefined && !(floor!.slope <= floorLimit))
    reasons.push(
      `post-GC heap trend ${floor!.slope.toFixed(2)} MB/min after warm-up (limit ${floorLimit})`,
    );
  if (r.rotation.servedAfterMs === undefined)
    reasons.push("the rotated certificate was never served");
  if (r.sigterm.inFlight === 0)
    reasons.push("no request was in flight at SIGTERM (nothing proven)");
  if (r.sigterm.inFlightFailed > 0)
    reasons.push(`${r.sigterm.inFlightFailed} in-flight requests failed at SIGTERM`);
  if (r.sigterm.readyz !== 503)
    reasons.push(`/readyz answered ${r.sigterm.readyz || "nothing"} after SIGTERM, not 503`);
  const late = r.sigterm.afterSigterm - r.sigterm.afterSigtermAnswered;
  if (late > 0) reasons.push(`${late} requests sent within the shutdown delay failed`);
  if (r.sigterm.exitMs === undefined) reasons.push("vgate did not exit within 35 s of SIGTERM");
  return reasons;
}

/** The summary printed by `make soak`. */
export function formatSoakReport(r: SoakReport): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");
  const rows = [
    ["KIND", "COUNT", "FAILED", "P50 MS", "P99 MS"],
    ...r.kinds.map((k) => [k.name, String(k.count), String(k.failed), f(k.p50), f(k.p99)]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const table = rows.map((row) =>
    row
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join("   ")
      .trimEnd(),
  );
  const s = r.sigterm;
  return [
    `soak: ${f(r.seconds)} s at ${r.options.rate} req/s: ${r.requests} requests, ${r.failed} failed${r.failed ? ` (${r.failures.join("; ")})` : ""}`,
    ...table,
    `RSS: ${f(r.rss.start)} MB at start, ${f(r.rss.end)} MB at end, ${f(r.rss.max)} MB max (${r.rss.samples.length} samples); trend over the second half ${f(r.rss.slope)} MB/min of its post-GC floor (limit ${r.options.rssSlopeLimit}; ${f(r.rss.rawSlope)} MB/min of all samples)`,
    ...(r.heapFloor
      ? [
          `post-GC heap (V8 heap + external): ${f(r.heapFloor.start)} MB after warm-up, ${f(r.heapFloor.end)} MB at the end of the load (${f(r.heapFloor.windowSeconds)} s, ${r.heapFloor.samples.length} samples); trend ${f(r.heapFloor.slope)} MB/min (limit ${r.options.heapFloor?.slopeLimit})`,
        ]
      : []),
    `certificate rotation at ${f(r.rotation.atSeconds)} s: new certificate served after ${r.rotation.servedAfterMs === undefined ? "never" : `${f(r.rotation.servedAfterMs / 1000)} s`}; ${r.rotation.failedAround} of ${r.rotation.sentAround} requests within 30 s of it failed`,
    `SIGTERM: ${s.inFlight} requests in flight, ${s.inFlightFailed} failed${s.inFlightProblems.length ? ` (${s.inFlightProblems.join("; ")})` : ""}; /readyz ${s.readyz || "refused"} 200 ms after it; vgate exited ${s.exitMs === undefined ? "not within 35 s" : `after ${f(s.exitMs)} ms`}; of ${s.afterSigterm} requests sent after the signal, ${s.afterSigtermAnswered} were answered`,
    r.pass ? "PASS" : `FAIL: ${r.reasons.join("; ")}`,
  ].join("\n");
}
