// Sandbox worker entry (docs/decisions.md EPS-8). Only this thread is locked down; the main thread
// (express, client-node) never loads SES. Messages are handled strictly in order; after each job
// the worker waits one macrotask so microtasks an expression queued run (and overrun) inside that
// job.
import "ses";
import { parentPort, workerData } from "node:worker_threads";
import { loadConfig, runJob, type LoadedConfig, type Progress } from "./job.js";
import { tameBuiltins } from "./tame-builtins.js";
import {
  nowMs,
  P_BATCH,
  P_JOB,
  P_PATCH,
  P_START_F64,
  STATE_DRAINING,
  STATE_EXPRESSION,
  STATE_IDLE,
  STATE_JOB,
  type FromWorker,
  type ToWorker,
  type WireResult,
  type WorkerInit,
} from "./protocol.js";

tameBuiltins();
lockdown({
  // Guest errors carry no host stack (no file paths, no V8 stack API); we never show stacks.
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
  // An uncaught error ends the worker and the pool replaces it; a guest's unhandled rejection is
  // swallowed below instead of crashing the worker.
  errorTrapping: "none",
  unhandledRejectionTrapping: "none",
});

process.on("unhandledRejection", () => undefined);

const port = parentPort!;
const init = workerData as WorkerInit;
const ints = new Int32Array(init.progress, 0, 4);
const floats = new Float64Array(init.progress);
const configs = new Map<string, LoadedConfig>();

const progress: Progress = {
  expression(patchIndex) {
    ints[P_PATCH] = patchIndex;
    Atomics.store(ints, 0, STATE_EXPRESSION);
  },
  outside() {
    Atomics.store(ints, 0, STATE_JOB);
  },
};

function post(message: FromWorker): void {
  port.postMessage(message);
}

const drain = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function runBatch(message: Extract<ToWorker, { type: "batch" }>): Promise<void> {
  const results: WireResult[] = [];
  for (const [index, job] of message.jobs.entries()) {
    floats[P_START_F64] = nowMs();
    ints[P_JOB] = index;
    ints[P_PATCH] = -1;
    ints[P_BATCH] = message.batchId;
    Atomics.store(ints, 0, STATE_JOB);
    results.push(runJob(job, configs.get(job.key), progress, init.limits));
    Atomics.store(ints, 0, STATE_DRAINING);
    await drain();
  }
  Atomics.store(ints, 0, STATE_IDLE);
  post({ type: "batch", batchId: message.batchId, results });
}

function load(message: Extract<ToWorker, { type: "load" }>): void {
  const loaded = loadConfig(message.config);
  // A failed reload keeps the previous config, so the pool can keep serving it.
  if (loaded.ok) configs.set(message.key, loaded.value);
  post({ type: "loaded", loadId: message.loadId, ...(loaded.ok ? {} : { error: loaded.error }) });
}

async function handle(message: ToWorker): Promise<void> {
  if (message.type === "batch") return runBatch(message);
  if (message.type === "load") return load(message);
  configs.delete(message.key);
}

let queue = Promise.resolve();
port.on("message", (message: ToWorker) => {
  queue = queue
    .then(() => handle(message))
    // A bug here must not wedge the queue: crash, and the pool replaces this worker.
    .catch((err: unknown) => {
      setImmediate(() => {
        throw err;
      });
    });
});
post({ type: "ready" });
