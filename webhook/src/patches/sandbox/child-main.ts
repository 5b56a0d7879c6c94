// A sandbox child process (docs/decisions.md EPS-8): the only place SES and patch expressions
// run. The server (pool.ts) spawns it with its own V8 heap and stack limits and talks to it in
// frames on fd 3, which the child reads and writes synchronously: it has nothing else to do.
// fd 4 belongs to the monitor thread (child-monitor.ts). Messages are handled strictly in order.
// After a job that made a promise the child waits one macrotask, so microtasks an expression
// queued run (and overrun) inside that job. An expression can queue a microtask only through a
// promise (no queueMicrotask, timers or FinalizationRegistry in a compartment), and V8's promise
// hook tells when one was made; most jobs make none and need no wait.
//
// The child never exits gracefully: Node joins threads on exit, and the monitor is blocked in a
// read, so every way out is SIGKILL to itself. Whatever happens here, the server only sees a
// child that is gone, and replaces it.
import "ses";
import { writeSync } from "node:fs";
import { getHeapStatistics, promiseHooks } from "node:v8";
import { Worker } from "node:worker_threads";
import { FrameChannel } from "./frames.js";
import {
  describeThrown,
  loadConfig,
  runJob,
  type JobResult,
  type LoadedConfig,
  type Progress,
} from "./job.js";
import {
  DEFAULT_RESULT_LIMITS,
  nowMs,
  P_BATCH,
  P_JOB,
  P_PATCH,
  P_START_F64,
  P_STATE,
  PROGRESS_BYTES,
  STATE_DRAINING,
  STATE_EXPRESSION,
  STATE_IDLE,
  STATE_JOB,
  type FromChild,
  type ResultLimits,
  type ToChild,
  type WireResult,
} from "./protocol.js";
import { hostIntrinsics, removeFromRealm } from "./realm.js";

const CHANNEL_FD = 3;
const MONITOR_FD = 4;
/**
 * Results are sent once this much is buffered: no frame, and no server buffer, grows large, and
 * the server decodes a batch's results while the child still works on it (measured: 64 KiB does
 * 10-15% more small objects per second than 256 KiB).
 */
const FLUSH_BYTES = 64 * 1024;
/** The server is trusted; this only stops a broken pipe from filling the heap. */
const MAX_FRAME_BYTES = 512 * 1024 * 1024;

function die(why: string): never {
  try {
    writeSync(2, `vgate sandbox child: ${why}\n`);
  } finally {
    process.kill(process.pid, "SIGKILL");
  }
  throw new Error("unreachable");
}

// describeThrown runs no code of the value it describes, whoever made it.
process.on("uncaughtException", (err) => die(`internal error: ${describeThrown(err)}`));
// An expression's unhandled rejection is its own business; it must not end the child.
process.on("unhandledRejection", () => undefined);

const { SharedArrayBuffer, Int32Array, Float64Array, Atomics } = hostIntrinsics;
const record = new SharedArrayBuffer(PROGRESS_BYTES);
const ints = new Int32Array(record, 0, 4);
const floats = new Float64Array(record);

const monitor = new Worker(new URL("./child-monitor.js", import.meta.url), {
  workerData: { progress: record, fd: MONITOR_FD },
  resourceLimits: { maxOldGenerationSizeMb: 12, maxYoungGenerationSizeMb: 2 },
  stdout: false,
  stderr: false,
});
monitor.on("error", (err) => die(`the monitor thread failed: ${describeThrown(err)}`));
monitor.on("exit", () => die("the monitor thread exited"));
monitor.unref();

removeFromRealm();
lockdown({
  // Guest errors carry no stack (no file paths, no V8 stack API).
  errorTaming: "safe",
  stackFiltering: "concise",
  // 'min' breaks common assignment patterns; the notes' default 'moderate' is enough here.
  overrideTaming: "moderate",
  consoleTaming: "safe",
  // Compartment#evaluate needs the safe evaluator.
  evalTaming: "safe-eval",
  localeTaming: "safe",
  regExpTaming: "safe",
  domainTaming: "safe",
  // The handlers above decide what ends the child.
  errorTrapping: "none",
  unhandledRejectionTrapping: "none",
});

const channel = new FrameChannel(CHANNEL_FD, MAX_FRAME_BYTES);
const configs = new Map<string, LoadedConfig>();
let limits: ResultLimits = DEFAULT_RESULT_LIMITS;

function post(message: FromChild): void {
  channel.write(message);
}

const progress: Progress = {
  expression(patchIndex) {
    ints[P_PATCH] = patchIndex;
    Atomics.store(ints, P_STATE, STATE_EXPRESSION);
  },
  outside() {
    Atomics.store(ints, P_STATE, STATE_JOB);
  },
};

const drain = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
let promised = false;
promiseHooks.onInit(() => {
  promised = true;
});

/**
 * The patched objects of the results not yet sent, as UTF-8 (protocol.ts, WireSandboxResult).
 * Kept from batch to batch: posting a message copies what it holds.
 */
let bytes = Buffer.allocUnsafe(FLUSH_BYTES * 2);
let bytesUsed = 0;

/** A job's result as it travels: its object appended to `bytes`, empty lists left out. */
function toWire(result: JobResult): WireResult {
  if (!result.ok) return result;
  if (bytesUsed + result.objectBytes > bytes.length) {
    const larger = Buffer.allocUnsafe(Math.max(bytes.length * 2, bytesUsed + result.objectBytes));
    bytes.copy(larger, 0, 0, bytesUsed);
    bytes = larger;
  }
  bytesUsed += bytes.write(result.objectJson, bytesUsed, "utf8");
  const wire: WireResult = { ok: true, end: bytesUsed };
  if (result.explain.length > 0) wire.explain = result.explain;
  if (result.warnings.length > 0) wire.warnings = result.warnings;
  if (result.references.length > 0) wire.references = result.references;
  return wire;
}

function sizeOf(result: WireResult): number {
  // An ok result's object is counted in bytesUsed.
  if (result.ok) return 0;
  return result.error.message.length + (result.error.detail?.length ?? 0);
}

async function runBatch(message: Extract<ToChild, { type: "batch" }>): Promise<void> {
  const { batchId, jobs } = message;
  let results: WireResult[] = [];
  let first = 0;
  let buffered = 0;
  const flush = (done: boolean): void => {
    const heapUsed = done ? getHeapStatistics().used_heap_size : 0;
    const sent = bytes.subarray(0, bytesUsed);
    post({ type: "results", batchId, first, results, bytes: sent, done, heapUsed });
    first += results.length;
    results = [];
    buffered = 0;
    bytesUsed = 0;
    // A large object made it grow; the next batch starts small again.
    if (bytes.length > FLUSH_BYTES * 8) bytes = Buffer.allocUnsafe(FLUSH_BYTES * 2);
  };
  const config = configs.get(message.key);
  for (const [index, job] of jobs.entries()) {
    floats[P_START_F64] = nowMs();
    ints[P_JOB] = index;
    ints[P_PATCH] = -1;
    ints[P_BATCH] = batchId;
    Atomics.store(ints, P_STATE, STATE_JOB);
    promised = false;
    const result = runJob(job, config, progress, limits);
    if (promised) {
      Atomics.store(ints, P_STATE, STATE_DRAINING);
      await drain();
    }
    const wire = toWire(result);
    results.push(wire);
    buffered += sizeOf(wire);
    if (buffered + bytesUsed >= FLUSH_BYTES && index < jobs.length - 1) flush(false);
  }
  Atomics.store(ints, P_STATE, STATE_IDLE);
  flush(true);
}

function load(message: Extract<ToChild, { type: "load" }>): void {
  const loaded = loadConfig(message.config);
  // A failed reload keeps the previous config, so the server can keep serving it.
  if (loaded.ok) configs.set(message.key, loaded.value);
  post({ type: "loaded", loadId: message.loadId, ...(loaded.ok ? {} : { error: loaded.error }) });
}

async function handle(message: ToChild): Promise<void> {
  switch (message.type) {
    case "batch":
      return runBatch(message);
    case "load":
      return load(message);
    case "unload":
      configs.delete(message.key);
      return;
    case "init":
      limits = message.limits;
      return;
  }
}

async function serve(): Promise<never> {
  post({ type: "ready" });
  for (;;) {
    const message = channel.read() as ToChild | undefined;
    // The server closed the channel: it stopped this child or is gone.
    if (message === undefined) die("the server closed the channel");
    await handle(message);
  }
}

serve().catch((err: unknown) => die(`internal error: ${describeThrown(err)}`));
