// SandboxPool: runs patch jobs in a pool of locked-down worker threads (docs/decisions.md EPS-8).
// The main thread never loads SES. Each worker holds at most `maxInFlight` messages; queued jobs
// are packed into messages of up to `maxJobsPerMessage` so round trips are amortised. A watchdog
// per worker reads the shared progress block: a job running longer than the deadline gets its
// worker terminated and replaced; that job fails naming the patch, the worker's other jobs are
// re-queued.
import { availableParallelism } from "node:os";
import { Worker, type ResourceLimits } from "node:worker_threads";
import { PatchError, type PatchSpec } from "../types.js";
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
  type FromWorker,
  type ResultLimits,
  type SandboxConfig,
  type SandboxJob,
  type SandboxResult,
  type ToWorker,
  type WireError,
  type WireResult,
  type WorkerInit,
} from "./protocol.js";

export type { SandboxConfig, SandboxJob, SandboxResult } from "./protocol.js";

export interface SandboxPoolOptions {
  /** Worker threads; default os.availableParallelism(). */
  size?: number;
  /** Hard limit per object (job), from the moment the worker starts it; default 100 ms. */
  deadlineMs?: number;
  /** Per-worker V8 limits; default 64 MiB old generation, 16 MiB young generation, 4 MiB stack. */
  resourceLimits?: ResourceLimits;
  /** Limits on one expression result; default 1 MiB of JSON, 100 000 values, 512 levels. */
  resultLimits?: Partial<ResultLimits>;
  /** Messages one worker may hold at once (the next is sent while one runs); default 2. */
  maxInFlight?: number;
  /** Jobs packed into one message at most; default 256. */
  maxJobsPerMessage?: number;
  /** How long a message may wait in a worker (startup, config compile) before it counts as hung. */
  startupMs?: number;
}

export type BatchResult = { ok: true; value: SandboxResult } | { ok: false; error: PatchError };

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 64,
  maxYoungGenerationSizeMb: 16,
  stackSizeMb: 4,
};

const WORKER_URL = new URL("./worker.js", import.meta.url);
/** A job re-queued this often (its worker died under other jobs each time) fails instead. */
const MAX_ATTEMPTS = 3;
/** Workers that die before they are ready this many times in a row break the pool. */
const MAX_STARTUP_FAILURES = 3;

interface Pending {
  key: string;
  job: SandboxJob;
  attempts: number;
  settle: (result: BatchResult) => void;
}

interface InFlight {
  id: number;
  jobs: Pending[];
  sentAt: number;
}

interface Slot {
  index: number;
  worker: Worker;
  ints: Int32Array;
  floats: Float64Array;
  ready: boolean;
  dead: boolean;
  inFlight: InFlight[];
  timer: NodeJS.Timeout | undefined;
  loads: Map<number, (error: WireError | undefined) => void>;
  crash: Error | undefined;
}

type Stop =
  { kind: "deadline" } | { kind: "unresponsive" } | { kind: "crash"; error: Error | undefined };

export class SandboxPool {
  readonly size: number;
  readonly deadlineMs: number;
  private readonly resourceLimits: ResourceLimits;
  private readonly resultLimits: ResultLimits;
  private readonly maxInFlight: number;
  private readonly maxJobsPerMessage: number;
  private readonly startupMs: number;
  private readonly slots: Slot[] = [];
  private readonly configs = new Map<string, SandboxConfig>();
  private queue: Pending[] = [];
  private batchSeq = 0;
  private loadSeq = 0;
  private startupFailures = 0;
  private restartCount = 0;
  private readonly jobsSent: number[] = [];
  private closed = false;
  private broken: Error | undefined;

  constructor(options: SandboxPoolOptions = {}) {
    this.size = positiveInt(options.size, availableParallelism());
    this.deadlineMs = positiveInt(options.deadlineMs, 100);
    this.resourceLimits = { ...DEFAULT_RESOURCE_LIMITS, ...options.resourceLimits };
    this.resultLimits = { ...DEFAULT_RESULT_LIMITS, ...options.resultLimits };
    this.maxInFlight = positiveInt(options.maxInFlight, 2);
    this.maxJobsPerMessage = positiveInt(options.maxJobsPerMessage, 256);
    this.startupMs = positiveInt(options.startupMs, 2000);
    for (let i = 0; i < this.size; i++) {
      this.slots.push(this.spawn(i));
      this.jobsSent.push(0);
    }
  }

  /** Workers replaced so far (deadline, crash, memory limit). */
  get restarts(): number {
    return this.restartCount;
  }

  /** For metrics and tests: queue length, jobs in workers, jobs ever sent to each worker slot. */
  stats(): { queued: number; inFlight: number; restarts: number; jobsPerWorker: number[] } {
    const inFlight = this.slots.reduce(
      (n, s) => n + s.inFlight.reduce((m, b) => m + b.jobs.length, 0),
      0,
    );
    return {
      queued: this.queue.length,
      inFlight,
      restarts: this.restartCount,
      jobsPerWorker: [...this.jobsSent],
    };
  }

  /** Compiles `config` in every worker; a compile error rejects naming patches[i] and keeps the old config. */
  async loadConfig(configKey: string, config: SandboxConfig): Promise<void> {
    this.assertOpen();
    const previous = this.configs.get(configKey);
    this.configs.set(configKey, config);
    const loadId = ++this.loadSeq;
    const acks = this.slots
      .filter((slot) => !slot.dead)
      .map(
        (slot) =>
          new Promise<WireError | undefined>((resolve) => {
            slot.loads.set(loadId, resolve);
            this.post(slot, { type: "load", loadId, key: configKey, config });
          }),
      );
    const error = (await Promise.all(acks)).find((e) => e !== undefined);
    if (error === undefined) return;
    if (this.configs.get(configKey) === config) this.restore(configKey, previous);
    throw new PatchError(error.message, error.patchIndex, error.path);
  }

  /** Forgets a config in every worker. */
  unloadConfig(configKey: string): void {
    this.configs.delete(configKey);
    for (const slot of this.slots)
      if (!slot.dead) this.post(slot, { type: "unload", key: configKey });
  }

  /** Patches one object; rejects with a PatchError. */
  async apply(configKey: string, job: SandboxJob): Promise<SandboxResult> {
    const promise = this.enqueue(configKey, job);
    this.pump();
    const result = await promise;
    if (!result.ok) throw result.error;
    return result.value;
  }

  /** Patches many objects; each result succeeds or fails on its own. */
  async applyBatch(configKey: string, jobs: readonly SandboxJob[]): Promise<BatchResult[]> {
    const promises = jobs.map((job) => this.enqueue(configKey, job));
    this.pump();
    return Promise.all(promises);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new PatchError("the sandbox pool is closed");
    const stopping = this.slots.map((slot) => this.detach(slot));
    for (const slot of this.slots) {
      for (const batch of slot.inFlight) for (const p of batch.jobs) p.settle({ ok: false, error });
      slot.inFlight = [];
    }
    this.failQueue(error);
    await Promise.all(stopping);
  }

  private assertOpen(): void {
    if (this.closed) throw new PatchError("the sandbox pool is closed");
    if (this.broken !== undefined) throw new PatchError(this.broken.message);
  }

  private restore(configKey: string, previous: SandboxConfig | undefined): void {
    if (previous === undefined) {
      this.unloadConfig(configKey);
      return;
    }
    this.configs.set(configKey, previous);
    for (const slot of this.slots) {
      if (!slot.dead)
        this.post(slot, { type: "load", loadId: 0, key: configKey, config: previous });
    }
  }

  private enqueue(key: string, job: SandboxJob): Promise<BatchResult> {
    return new Promise((settle) => {
      try {
        this.assertOpen();
      } catch (err) {
        settle({ ok: false, error: err as PatchError });
        return;
      }
      if (!this.configs.has(key)) {
        settle({
          ok: false,
          error: new PatchError(`no patch config ${JSON.stringify(key)} is loaded`),
        });
        return;
      }
      this.queue.push({ key, job, attempts: 0, settle });
    });
  }

  // ---- dispatch ----

  private pump(): void {
    while (this.queue.length > 0) {
      const free = this.slots.filter(
        (s) => s.ready && !s.dead && s.inFlight.length < this.maxInFlight,
      );
      if (free.length === 0) return;
      // Prefer idle workers; spread the queue over every free position.
      free.sort((a, b) => a.inFlight.length - b.inFlight.length);
      const positions = free.reduce((n, s) => n + this.maxInFlight - s.inFlight.length, 0);
      const take = Math.min(this.maxJobsPerMessage, Math.ceil(this.queue.length / positions));
      this.send(free[0]!, this.queue.splice(0, take));
    }
  }

  private send(slot: Slot, jobs: Pending[]): void {
    const batch: InFlight = { id: ++this.batchSeq, jobs, sentAt: nowMs() };
    slot.inFlight.push(batch);
    this.jobsSent[slot.index] = (this.jobsSent[slot.index] ?? 0) + jobs.length;
    this.post(slot, {
      type: "batch",
      batchId: batch.id,
      jobs: jobs.map(({ key, job }) => ({
        key,
        objectJson: job.objectJson,
        direction: job.direction,
        changeSet: job.changeSet,
        hostObjectJson: job.hostObjectJson,
        virtualObjectJson: job.virtualObjectJson,
        referenceObjectsJson: job.referenceObjectsJson,
        explain: job.explain,
      })),
    });
    if (slot.timer === undefined) this.watch(slot, this.deadlineMs);
  }

  private post(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }

  // ---- workers ----

  private spawn(index: number): Slot {
    const progress = new SharedArrayBuffer(PROGRESS_BYTES);
    const init: WorkerInit = { progress, limits: this.resultLimits };
    const worker = new Worker(WORKER_URL, {
      workerData: init,
      resourceLimits: this.resourceLimits,
    });
    const slot: Slot = {
      index,
      worker,
      ints: new Int32Array(progress, 0, 4),
      floats: new Float64Array(progress),
      ready: false,
      dead: false,
      inFlight: [],
      timer: undefined,
      loads: new Map(),
      crash: undefined,
    };
    worker.on("message", (message: FromWorker) => this.onMessage(slot, message));
    worker.on("error", (error: Error) => {
      slot.crash = error;
    });
    worker.on("exit", () => this.onExit(slot));
    for (const [key, config] of this.configs)
      this.post(slot, { type: "load", loadId: 0, key, config });
    return slot;
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    if (slot.dead) return;
    if (message.type === "ready") {
      slot.ready = true;
      this.startupFailures = 0;
      this.pump();
    } else if (message.type === "loaded") {
      slot.loads.get(message.loadId)?.(message.error);
      slot.loads.delete(message.loadId);
    } else {
      this.onResults(slot, message.batchId, message.results);
    }
  }

  private onResults(slot: Slot, batchId: number, results: WireResult[]): void {
    const at = slot.inFlight.findIndex((b) => b.id === batchId);
    if (at < 0) return;
    const [batch] = slot.inFlight.splice(at, 1);
    for (const [i, pending] of batch!.jobs.entries()) pending.settle(fromWire(results[i]));
    this.pump();
  }

  private onExit(slot: Slot): void {
    if (slot.dead) return;
    if (!slot.ready && ++this.startupFailures >= MAX_STARTUP_FAILURES) {
      this.broken = new Error(`sandbox workers fail to start: ${slot.crash?.message ?? "exited"}`);
      void this.detach(slot);
      this.failQueue(new PatchError(this.broken.message));
      return;
    }
    this.stop(slot, { kind: "crash", error: slot.crash });
  }

  private detach(slot: Slot): Promise<number> {
    slot.dead = true;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    // Replacements load every config themselves, so pending acks are simply answered.
    for (const ack of slot.loads.values()) ack(undefined);
    slot.loads.clear();
    return slot.worker.terminate();
  }

  private failQueue(error: PatchError): void {
    const queue = this.queue;
    this.queue = [];
    for (const p of queue) p.settle({ ok: false, error });
  }

  // ---- watchdog ----

  private watch(slot: Slot, delayMs: number): void {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => this.check(slot), Math.max(1, Math.ceil(delayMs)));
  }

  private check(slot: Slot): void {
    slot.timer = undefined;
    if (slot.dead || slot.inFlight.length === 0) return;
    const now = nowMs();
    const state = Atomics.load(slot.ints, P_STATE);
    const running = slot.inFlight.some((b) => b.id === Atomics.load(slot.ints, P_BATCH));
    if (running && state !== STATE_IDLE) {
      const elapsed = now - slot.floats[P_START_F64]!;
      if (elapsed >= this.deadlineMs) return this.stop(slot, { kind: "deadline" });
      return this.watch(slot, this.deadlineMs - elapsed);
    }
    // Not started yet: the worker is starting, compiling a config, or a result is on its way.
    const waited = now - slot.inFlight[0]!.sentAt;
    if (waited >= this.deadlineMs + this.startupMs)
      return this.stop(slot, { kind: "unresponsive" });
    this.watch(slot, this.deadlineMs);
  }

  /** Terminates and replaces a worker; fails the job it was running, re-queues the others. */
  private stop(slot: Slot, why: Stop): void {
    const state = Atomics.load(slot.ints, P_STATE);
    const runningBatch = Atomics.load(slot.ints, P_BATCH);
    const runningJob = Atomics.load(slot.ints, P_JOB);
    const patchIndex = Atomics.load(slot.ints, P_PATCH);
    const blameRunning = why.kind !== "unresponsive" && state !== STATE_IDLE;
    const retry: Pending[] = [];
    for (const batch of slot.inFlight) {
      for (const [i, pending] of batch.jobs.entries()) {
        if (blameRunning && batch.id === runningBatch && i === runningJob) {
          pending.settle({ ok: false, error: this.blame(why, state, patchIndex, pending.key) });
        } else {
          retry.push(pending);
        }
      }
    }
    slot.inFlight = [];
    void this.detach(slot);
    this.restartCount++;
    this.requeue(retry, why);
    if (!this.closed) this.slots[slot.index] = this.spawn(slot.index);
    this.pump();
  }

  private requeue(retry: Pending[], why: Stop): void {
    const again = retry.filter((p) => {
      p.attempts++;
      if (p.attempts < MAX_ATTEMPTS) return true;
      const reason = why.kind === "crash" ? "crashed" : "was stopped";
      p.settle({
        ok: false,
        error: new PatchError(
          `the sandbox worker ${reason} ${MAX_ATTEMPTS} times while this object waited`,
        ),
      });
      return false;
    });
    this.queue.unshift(...again);
  }

  private blame(why: Stop, state: number, patchIndex: number, key: string): PatchError {
    const specs: PatchSpec[] | undefined = this.configs.get(key)?.patches;
    // Outside an expression (parsing, engine work) no patch is to blame.
    const named = patchIndex >= 0 && state !== STATE_JOB;
    const path = named ? specs?.[patchIndex]?.path : undefined;
    const who = named ? `patches[${patchIndex}] (${path ?? "?"}): ` : "";
    return new PatchError(who + this.stopReason(why, state), named ? patchIndex : undefined, path);
  }

  private stopReason(why: Stop, state: number): string {
    const what = state === STATE_EXPRESSION ? "expression" : "patching";
    if (why.kind === "deadline" && state === STATE_DRAINING) {
      return `asynchronous work left by the expression did not finish within ${this.deadlineMs}ms`;
    }
    if (why.kind === "deadline") return `${what} did not finish within ${this.deadlineMs}ms`;
    if (why.kind === "crash" && isOutOfMemory(why.error)) {
      const mb = this.resourceLimits.maxOldGenerationSizeMb ?? 0;
      return `${what} exceeded the sandbox memory limit (${mb} MiB heap)`;
    }
    const detail =
      why.kind === "crash" ? (why.error?.message ?? "it exited") : "it stopped responding";
    return `the sandbox worker crashed: ${detail}`;
  }
}

function isOutOfMemory(error: Error | undefined): boolean {
  return (error as { code?: unknown } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
}

function positiveInt(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}

function fromWire(result: WireResult | undefined): BatchResult {
  if (result === undefined)
    return { ok: false, error: new PatchError("the sandbox returned no result") };
  if (!result.ok) {
    const { message, patchIndex, path } = result.error;
    return { ok: false, error: new PatchError(message, patchIndex, path) };
  }
  const { objectJson, explain, warnings, references } = result;
  return { ok: true, value: { objectJson, explain, warnings, references } };
}
