// SandboxPool: runs patch jobs in sandbox child processes (docs/decisions.md EPS-8). The server
// process never loads SES and never runs an expression. Each child has its own V8 heap and stack
// limits; the pool kills a child (SIGKILL) that overruns its deadline or its memory limit, or that
// breaks the protocol, and never waits on a child's cooperation to do so.
//
// The pool assembles four parts, one job each:
// - scheduling (job-queue.ts): a job goes only to an idle child, never behind a busy one. The jobs
//   of one applyBatch call may share a message (a chunk); jobs of different calls never do;
// - child supervision (child-supervisor.ts): one supervisor per child checks what it sends and
//   keeps its clocks. A deadline is per job, from the moment the child starts it, and counts the
//   CPU time of the child's main thread, read from /proc. When a deadline or the memory limit is
//   reached, the child's monitor thread (child-monitor.ts) is asked which job and patch run, for
//   the error message (ask-monitor.ts); without an answer the child is killed anyway;
// - blame (chunk-blame.ts): which job of a dead child's chunk fails, and which run again;
// - memory polling (memory-watch.ts): the resident memory of working children.
// The pool itself holds the configs, the children and a warm spare child: a killed child is
// replaced at once by the spare, and a new spare is started in the background. Children are
// replaced, too, when a batch leaves them close to their heap or resident limit.
import { availableParallelism } from "node:os";
import { PatchError } from "../types.js";
import { settleDeadChunk, type BlameContext } from "./chunk-blame.js";
import {
  ChildSupervisor,
  type ChildReports,
  type ChildSettings,
  type Work,
} from "./child-supervisor.js";
import { CHUNK_BYTES, JobQueue, settle, type Call, type Pending } from "./job-queue.js";
import { residentLimitBytes, resolveLimits, type ResourceLimits } from "./limits.js";
import { MemoryWatch } from "./memory-watch.js";
import {
  DEFAULT_RESULT_LIMITS,
  STATE_JOB,
  type ResultLimits,
  type SandboxConfig,
  type SandboxJob,
  type SandboxResult,
  type WireError,
} from "./protocol.js";
import { childrenFailToStart, poolClosed } from "./sandbox-unavailable.js";
import { exitDetail, stopReason, type Stop, type StopLimits } from "./stop.js";
import { patchErrorOf, type BatchResult } from "./wire-result.js";

export type { SandboxConfig, SandboxJob, SandboxResult } from "./protocol.js";
export { DEFAULT_RESOURCE_LIMITS, type ResourceLimits } from "./limits.js";

export interface SandboxPoolOptions {
  /** Children that run jobs at the same time; default os.availableParallelism(). One more waits as a spare. */
  size?: number;
  /** Hard limit per object (job), from the moment a child starts it; default 100 ms. */
  deadlineMs?: number;
  /** Per-child limits: V8 heap and stack, and resident memory. */
  resourceLimits?: ResourceLimits;
  /** Limits on one expression result and on the patched object. */
  resultLimits?: Partial<ResultLimits>;
  /**
   * Jobs of one applyBatch call packed into one message at most; default 1024. A child is idle
   * for a round trip between two messages (about 1 ms on a busy machine), which 256 small objects
   * (5 us each) did not hide: it was idle 40% of the time.
   */
  maxJobsPerMessage?: number;
  /** How long a child may take to start or to compile a config before it counts as hung; default 10 s. */
  startupMs?: number;
}

export type { BatchResult } from "./wire-result.js";

/** Children that die before they are ready this many times in a row break the pool. */
const MAX_STARTUP_FAILURES = 3;

interface LoadWait {
  slots: Set<ChildSupervisor>;
  errors: WireError[];
  failure: PatchError | undefined;
  done: () => void;
}

export class SandboxPool {
  readonly size: number;
  readonly deadlineMs: number;
  /** What a stopped child's error names. */
  private readonly limits: StopLimits;
  private readonly settings: ChildSettings;
  private readonly maxJobsPerMessage: number;
  private readonly slots: ChildSupervisor[] = [];
  private spare: ChildSupervisor | undefined;
  private readonly configs = new Map<string, SandboxConfig>();
  private readonly loads = new Map<number, LoadWait>();
  private readonly queue = new JobQueue();
  /** Results that came in, settled once the child has its next chunk (see onHandled). */
  private arrived: [Pending, BatchResult][] = [];
  private readonly memory: MemoryWatch;
  private chunkSeq = 0;
  private loadSeq = 0;
  private startupFailures = 0;
  private restartCount = 0;
  private readonly jobsSent: number[] = [];
  private referenced = false;
  private closed = false;
  /** Why the pool is broken: how the last child that failed to start ended. */
  private broken: string | undefined;
  /** What the children tell the pool, and what blame asks of it. */
  private readonly reports: ChildReports;
  private readonly blame: BlameContext;

  constructor(options: SandboxPoolOptions = {}) {
    this.size = positiveInt(options.size, availableParallelism());
    this.deadlineMs = positiveInt(options.deadlineMs, 100);
    const limits = resolveLimits(options.resourceLimits);
    const resultLimits = { ...DEFAULT_RESULT_LIMITS, ...options.resultLimits };
    this.maxJobsPerMessage = positiveInt(options.maxJobsPerMessage, 1024);
    this.settings = {
      limits,
      resultLimits,
      // One chunk's worth of results, one patched object, and room for explain entries.
      maxFrameBytes: 4 * resultLimits.maxObjectBytes + 4 * CHUNK_BYTES,
      deadlineMs: this.deadlineMs,
      startupMs: positiveInt(options.startupMs, 10_000),
    };
    this.limits = { deadlineMs: this.deadlineMs, limits };
    this.reports = {
      loaded: (slot, loadId, error) => this.onLoaded(slot, loadId, error),
      result: (pending, result) => this.arrived.push([pending, result]),
      started: () => (this.startupFailures = 0),
      handled: () => this.onHandled(),
      ended: (slot, why, work) => this.onEnded(slot, why, work),
    };
    this.blame = {
      patches: (key) => this.configs.get(key)?.patches,
      limits: this.limits,
    };
    this.memory = new MemoryWatch(residentLimitBytes(limits), () =>
      this.slots.filter((s) => !s.ended && s.working),
    );
    for (let i = 0; i < this.size; i++) {
      this.slots.push(this.spawn(i));
      this.jobsSent.push(0);
    }
    this.spare = this.spawn(-1);
  }

  /** Children replaced so far (deadline, crash, memory limit). */
  get restarts(): number {
    return this.restartCount;
  }

  /** For metrics and tests: queue length, jobs in children, jobs ever sent to each slot, child pids. */
  stats(): {
    queued: number;
    inFlight: number;
    restarts: number;
    jobsPerWorker: number[];
    pids: number[];
  } {
    return {
      queued: this.queue.length,
      inFlight: this.slots.reduce((n, s) => n + s.openJobs, 0),
      restarts: this.restartCount,
      jobsPerWorker: [...this.jobsSent],
      pids: this.live().map((s) => s.pid),
    };
  }

  /** Compiles `config` in every child; a compile error rejects naming patches[i] and keeps the old config. */
  async loadConfig(configKey: string, config: SandboxConfig): Promise<void> {
    this.assertOpen();
    const previous = this.configs.get(configKey);
    this.configs.set(configKey, config);
    const loadId = ++this.loadSeq;
    const wait = await new Promise<LoadWait>((resolve) => {
      const w: LoadWait = {
        slots: new Set(this.live()),
        errors: [],
        failure: undefined,
        done: () => resolve(w),
      };
      this.loads.set(loadId, w);
      for (const slot of w.slots) slot.load(loadId, configKey, config);
      this.updateRefs();
      if (w.slots.size === 0) w.done();
    });
    this.loads.delete(loadId);
    this.updateRefs();
    const error = wait.errors[0];
    if (error === undefined && wait.failure === undefined) return;
    if (this.configs.get(configKey) === config) this.restore(configKey, previous);
    if (error !== undefined) throw patchErrorOf(error);
    throw wait.failure!;
  }

  /** Forgets a config in every child. */
  unloadConfig(configKey: string): void {
    this.configs.delete(configKey);
    for (const slot of this.live()) slot.unload(configKey);
  }

  /** Patches one object; rejects with a PatchError. */
  async apply(configKey: string, job: SandboxJob): Promise<SandboxResult> {
    const result = await new Promise<BatchResult>((resolve) => {
      this.enqueue(configKey, job, { settle: (_, r) => resolve(r) }, 0);
      this.pump();
    });
    if (!result.ok) throw result.error;
    return result.value;
  }

  /** Patches many objects; each result succeeds or fails on its own. */
  applyBatch(configKey: string, jobs: readonly SandboxJob[]): Promise<BatchResult[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const results = new Array<BatchResult>(jobs.length);
      let left = jobs.length;
      const call: Call = {
        settle(index, result) {
          results[index] = result;
          if (--left === 0) resolve(results);
        },
      };
      for (const [i, job] of jobs.entries()) this.enqueue(configKey, job, call, i);
      this.pump();
    });
  }

  /** Kills every child (SIGKILL) and fails what is pending; resolves once they have exited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = this.live();
    for (const slot of all) slot.end({ kind: "closed" });
    this.queue.failAll(poolClosed());
    this.updateRefs();
    await Promise.all(all.map((s) => s.exited));
  }

  // ---- what the children report (ChildReports) ----

  private onLoaded(slot: ChildSupervisor, loadId: number, error: WireError | undefined): void {
    const wait = this.loads.get(loadId);
    if (wait === undefined || !wait.slots.delete(slot)) return;
    if (error !== undefined) wait.errors.push(error);
    if (wait.slots.size === 0) wait.done();
  }

  private onHandled(): void {
    // The child gets its next chunk first; the callers hear of these results after.
    this.pump();
    const arrived = this.arrived;
    this.arrived = [];
    for (const [pending, result] of arrived) settle(pending, result);
  }

  /** A child ended: settle or re-queue its work, put the spare in its place. */
  private onEnded(slot: ChildSupervisor, why: Stop, work: Work[]): void {
    this.abandonLoads(slot, work, why);
    const chunk = work.find((w) => w.kind === "batch");
    if (chunk !== undefined) {
      this.queue.requeue(settleDeadChunk(chunk, why, work[0] === chunk, this.blame));
    }
    if (why.kind === "closed") return;
    if (why.kind !== "retired") this.restartCount++;
    if (!slot.started && why.kind !== "retired") this.onStartupFailure(why);
    this.replace(slot);
    this.pump();
  }

  // ---- configs ----

  private assertOpen(): void {
    if (this.closed) throw poolClosed();
    if (this.broken !== undefined) throw childrenFailToStart(this.broken);
  }

  private restore(configKey: string, previous: SandboxConfig | undefined): void {
    if (previous === undefined) {
      this.unloadConfig(configKey);
      return;
    }
    this.configs.set(configKey, previous);
    for (const slot of this.live()) slot.load(0, configKey, previous);
  }

  /** A child that ended with loads outstanding: the one it was compiling may be the cause. */
  private abandonLoads(slot: ChildSupervisor, work: Work[], why: Stop): void {
    for (const load of work) {
      if (load.kind !== "load") continue;
      const wait = this.loads.get(load.loadId);
      if (wait === undefined || !wait.slots.delete(slot)) continue;
      const compiling = work[0] === load;
      if (compiling && why.kind !== "closed" && why.kind !== "retired") {
        wait.failure = new PatchError(
          `compiling the patches failed: ${stopReason(why, STATE_JOB, this.limits)}`,
        );
        // Replacements must not load it again.
        this.configs.delete(load.key);
      }
      if (why.kind === "closed") wait.failure = poolClosed();
      if (wait.slots.size === 0) wait.done();
    }
  }

  // ---- jobs ----

  private enqueue(key: string, job: SandboxJob, call: Call, index: number): void {
    try {
      this.assertOpen();
    } catch (err) {
      call.settle(index, { ok: false, error: err as PatchError });
      return;
    }
    if (!this.configs.has(key)) {
      const error = new PatchError(`no patch config ${JSON.stringify(key)} is loaded`);
      call.settle(index, { ok: false, error });
      return;
    }
    this.queue.add(key, job, call, index);
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const idle = this.slots.filter((s) => s.idle);
      if (idle.length === 0) break;
      this.send(idle[0]!, this.queue.takeChunk(idle.length, this.maxJobsPerMessage));
    }
    this.updateRefs();
  }

  private send(slot: ChildSupervisor, jobs: Pending[]): void {
    this.chunkSeq = (this.chunkSeq % 0x7fff_ffff) + 1;
    this.jobsSent[slot.index] = (this.jobsSent[slot.index] ?? 0) + jobs.length;
    slot.run(this.chunkSeq, jobs);
    this.memory.start();
  }

  // ---- children ----

  private live(): ChildSupervisor[] {
    const all = this.spare ? [...this.slots, this.spare] : [...this.slots];
    return all.filter((s) => !s.ended);
  }

  private spawn(index: number): ChildSupervisor {
    return new ChildSupervisor(index, this.settings, this.reports, this.configs, this.referenced);
  }

  private replace(slot: ChildSupervisor): void {
    if (this.closed || this.broken !== undefined) return;
    if (slot.index < 0) {
      this.spare = this.spawn(-1);
      return;
    }
    const spare = this.spare;
    this.spare = this.spawn(-1);
    if (spare !== undefined && !spare.ended) {
      spare.index = slot.index;
      this.slots[slot.index] = spare;
    } else {
      this.slots[slot.index] = this.spawn(slot.index);
    }
  }

  private onStartupFailure(why: Stop): void {
    if (++this.startupFailures < MAX_STARTUP_FAILURES) return;
    const detail =
      why.kind === "crash" ? exitDetail(why.exit, true) : stopReason(why, STATE_JOB, this.limits);
    this.broken = detail;
    this.queue.failAll(childrenFailToStart(detail));
    for (const slot of this.live()) slot.end({ kind: "closed" });
    for (const wait of this.loads.values()) {
      wait.failure = childrenFailToStart(detail);
      wait.done();
    }
  }

  /** Children keep the server's event loop alive while the pool has work, and only then. */
  private updateRefs(): void {
    const busy = this.queue.length > 0 || this.loads.size > 0 || this.slots.some((s) => s.working);
    if (busy === this.referenced) return;
    this.referenced = busy;
    for (const slot of this.live()) {
      if (busy) slot.ref();
      else slot.unref();
    }
  }
}

function positiveInt(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}
