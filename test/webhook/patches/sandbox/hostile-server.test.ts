// The hostile cases against a running `vgate serve` (a separate process, over real HTTPS with real
// AdmissionReviews), one case at a time, each with a good request sent while it runs. For every
// case: the server is still running and healthy, its RSS stays within a bound, the good request
// (and one sent right after the hostile one) is answered correctly and on time, and the server's
// children stayed under their resident limit (plus one poll's growth) unless the answer says one
// was killed for passing it; whichever wall or result the case ended in. Between cases the test waits until the server's
// children are quiet again (a replacement started): "a hostile object at the same time", not a
// sustained attack. The sustained attack comes last: hostile requests back to back, for seconds,
// with good ones among them; there, good requests must all be answered, and the figures are
// printed: the server's RSS, the children's, and the good requests' latencies.
//
// One vcluster.yaml holds every case, each on its own annotation ("case-N"), as a reverseExpression
// (`--side virtual`: an UPDATE's change set is patched, no bookkeeping needed); an object carries
// only the annotation of the case it is for. The cases on the whole annotations map, and the ones
// SES refuses at load time, run in hostile.test.ts only.
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import { httpsRequest } from "../../../support/https-client.js";
import {
  CASES,
  CHILD_KILLED,
  CONTAINED_BOMB,
  HOST_DETAIL,
  KILLED_OVER_RESIDENT,
  type HostileCase,
} from "./hostile-cases.js";
import {
  CHILD_RSS_BOUND,
  childrenOf,
  endpointsUpdate,
  residentBytes,
  startPatchServe,
  statFields,
} from "./serve-patches.js";

const DEADLINE_MS = 100;
const WORKERS = 2;
/** As in hostile.test.ts: the deadline, plus slack for a shared, noisy 2-CPU machine. */
const ON_TIME_MS = DEADLINE_MS + 900;
/** As in hostile.test.ts: past this, a request sent after the hostile one is stuck, not slow. */
const STUCK_MS = 5000;
/**
 * The server's RSS may grow this much over its size after start-up and warm-up: TLS, express and
 * the garbage of the requests. Everything an expression allocates is in a child.
 */
const SERVER_RSS_GROWTH = 64 * 1024 * 1024;
/** How long the sustained attack lasts. */
const SUSTAINED_MS = 5000;

const cases = CASES.filter(
  (
    c,
  ): c is HostileCase & {
    expect: { value: unknown } | { error: RegExp } | { bombOrValue: unknown };
  } => c.path === undefined && !("loadError" in c.expect),
);

function configJson(): string {
  const patches = cases.map((c, i) => ({
    path: `metadata.annotations["case-${i}"]`,
    expression: "value",
    reverseExpression: c.source,
  }));
  patches.push({
    path: 'metadata.annotations["good"]',
    expression: "value",
    reverseExpression: "value + '!'",
  });
  return JSON.stringify({ sync: { toHost: { endpoints: { enabled: true, patches } } } });
}

interface Answer {
  allowed: boolean;
  message: string;
  /** The annotation's value after the patch: unchanged "hello", patched, or undefined if removed. */
  value: unknown;
}

async function admit(url: string, annotation: string): Promise<Answer> {
  const res = await httpsRequest(url, {
    body: JSON.stringify(endpointsUpdate(annotation, "hello", "old")),
    headers: { "Content-Type": "application/json" },
    timeoutMs: 30_000,
  });
  assert.equal(res.status, 200, res.text);
  const r = res.json<{
    response: { allowed: boolean; patch?: string; status?: { message?: string } };
  }>().response;
  let value: unknown = "hello";
  const ops = r.patch
    ? (JSON.parse(Buffer.from(r.patch, "base64").toString("utf8")) as {
        op: string;
        path: string;
        value?: unknown;
      }[])
    : [];
  const key = `/metadata/annotations/${annotation}`;
  for (const op of ops) {
    if (op.path === key) value = op.op === "remove" ? undefined : op.value;
    if (op.path === "/metadata/annotations" && op.op !== "remove") {
      value = (op.value as Record<string, unknown>)[annotation];
    }
  }
  return { allowed: r.allowed, message: r.status?.message ?? "", value };
}

/** CPU time (user + system) of a process, in clock ticks. */
function ticksOf(pid: number): number {
  const fields = statFields(pid);
  return Number(fields[11]) + Number(fields[12]);
}

/** Waits until the server has all its children and none of them is working (or starting). */
async function quiet(server: number, children: number): Promise<void> {
  const end = performance.now() + 10_000;
  let last = new Map<number, number>();
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    const now = new Map<number, number>();
    try {
      for (const pid of childrenOf(server)) now.set(pid, ticksOf(pid));
    } catch {
      continue;
    }
    const idle = [...now].every(([pid, ticks]) => last.get(pid) === ticks);
    if ((now.size === children && idle) || performance.now() > end) return;
    last = now;
  }
}

const rssOf = (pid: number): number => residentBytes(pid);

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

describe("patches/sandbox hostile expressions against vgate serve", function () {
  this.timeout(60_000);
  let dir: string;
  let serve: ChildProcess;
  let base: string;
  let rssBaseline = 0;
  let serverMax = 0;
  let childMax = 0;
  /** The server's children, listed at most every 100 ms (a scan of /proc is slow). */
  let children: number[] = [];
  let listedAt = 0;
  /** The highest VmHWM of any child since the case began. */
  let casePeak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const goodMs: number[] = [];

  before(async function () {
    if (!existsSync("/proc/self/status")) this.skip();
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), "vgate-hostile-"));
    writeFileSync(join(dir, "vcluster.yaml"), configJson());
    ({ serve, base } = await startPatchServe(join(dir, "vcluster.yaml"), {
      patchTimeout: `${DEADLINE_MS}ms`,
      workers: WORKERS,
    }));
    // Warm up: TLS, express, the JSON paths; then the baseline.
    for (let i = 0; i < 50; i++)
      assert.equal((await admit(`${base}/mutate/endpoints`, "good")).value, "hello!");
    rssBaseline = rssOf(serve.pid!);
    sampler = setInterval(sample, 5);
  });

  function sample(): void {
    try {
      serverMax = Math.max(serverMax, rssOf(serve.pid!));
      if (performance.now() - listedAt > 100) {
        children = childrenOf(serve.pid!);
        listedAt = performance.now();
      }
    } catch {
      return;
    }
    for (const pid of children) {
      try {
        childMax = Math.max(childMax, rssOf(pid));
        casePeak = Math.max(casePeak, residentBytes(pid, "VmHWM"));
      } catch {
        // A child that just ended.
      }
    }
  }

  after(async () => {
    clearInterval(sampler);
    serve?.kill("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (goodMs.length === 0) return;
    const sorted = [...goodMs].sort((a, b) => a - b);
    console.log(
      `      under attack: server RSS ${mib(rssBaseline)} at rest, at most ${mib(serverMax)}; ` +
        `children at most ${mib(childMax)}; good requests (${sorted.length}) ` +
        `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, ` +
        `max ${sorted[sorted.length - 1]!.toFixed(1)} ms`,
    );
  });

  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      await quiet(serve.pid!, WORKERS + 1);
      listedAt = 0;
      casePeak = 0;
      sample();
      const url = `${base}/mutate/endpoints`;
      const hostile = admit(url, `case-${i}`).then((a) => ({ answer: a, at: performance.now() }));
      // Sent while the hostile one runs.
      await new Promise((r) => setTimeout(r, 5));
      const start = performance.now();
      const good = await admit(url, "good");
      const goodAt = performance.now();
      const ms = goodAt - start;
      goodMs.push(ms);
      const { answer, at: hostileAt } = await hostile;
      sample();
      const nextStart = performance.now();
      const next = await admit(url, "good");
      const nextMs = performance.now() - nextStart;

      assert.equal(serve.exitCode, null, "the server is running");
      assert.equal((await httpsRequest(`${base}/healthz`)).status, 200);
      assert.equal(good.value, "hello!", good.message);
      // On time; or else not queued behind the hostile one. Waiting for its child would make a good
      // request late only after a late hostile answer: on a starved machine (3 busy loops on 2
      // CPUs) good requests took 1.0-1.5 s here next to hostile ones answered at once.
      const queuedShape =
        !answer.allowed &&
        CHILD_KILLED.test(answer.message) &&
        goodAt > hostileAt &&
        hostileAt - start >= ON_TIME_MS;
      assert.ok(
        ms < ON_TIME_MS || !queuedShape,
        `the good request took ${ms.toFixed(0)} ms, after a hostile answer at ${(hostileAt - start).toFixed(0)} ms`,
      );
      assert.equal(next.value, "hello!", next.message);
      assert.ok(nextMs < STUCK_MS, `the request right after took ${nextMs.toFixed(0)} ms`);
      const rss = rssOf(serve.pid!);
      assert.ok(rss - rssBaseline < SERVER_RSS_GROWTH, `the server grew to ${mib(rss)}`);
      // Whatever the outcome: under the resident limit, or killed for passing it.
      if (answer.allowed || !KILLED_OVER_RESIDENT.test(answer.message)) {
        assert.ok(casePeak < CHILD_RSS_BOUND, `a child reached ${mib(casePeak)}`);
      }

      // A bomb a fast machine finishes inside the walls: the exact result is containment too (the
      // child's peak was checked above).
      if ("bombOrValue" in c.expect && answer.allowed) {
        assert.deepEqual(answer.value, c.expect.bombOrValue);
      } else if ("error" in c.expect || "bombOrValue" in c.expect) {
        assert.equal(
          answer.allowed,
          false,
          `expected a denial, got ${JSON.stringify(answer.value)}`,
        );
        assert.match(answer.message, "error" in c.expect ? c.expect.error : CONTAINED_BOMB);
        assert.doesNotMatch(answer.message, HOST_DETAIL);
      } else {
        assert.equal(answer.allowed, true, answer.message);
        assert.deepEqual(answer.value, c.expect.value);
      }
    });
  }

  it("a sustained attack: hostile requests back to back, good ones among them all answered", async function () {
    this.timeout(120_000);
    await quiet(serve.pid!, WORKERS + 1);
    const url = `${base}/mutate/endpoints`;
    const spinner = cases.findIndex((c) => c.source === "while(true){}");
    const until = performance.now() + SUSTAINED_MS;
    const hostile = (async () => {
      let n = 0;
      while (performance.now() < until) {
        await Promise.all(Array.from({ length: WORKERS }, () => admit(url, `case-${spinner}`)));
        n += WORKERS;
      }
      return n;
    })();
    const latencies: number[] = [];
    while (performance.now() < until) {
      const start = performance.now();
      assert.equal((await admit(url, "good")).value, "hello!");
      latencies.push(performance.now() - start);
      await new Promise((r) => setTimeout(r, 20));
    }
    const attacks = await hostile;
    assert.equal(serve.exitCode, null, "the server is running");
    assert.ok(rssOf(serve.pid!) - rssBaseline < SERVER_RSS_GROWTH);
    const sorted = latencies.sort((a, b) => a - b);
    console.log(
      `      sustained (${attacks} hostile requests in ${SUSTAINED_MS / 1000} s, ${WORKERS} children): ` +
        `good requests (${sorted.length}) p50 ${percentile(sorted, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(sorted, 99).toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`,
    );
  });
});
