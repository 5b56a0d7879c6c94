// SandboxPool: runs patch jobs in sandbox child processes (docs/decisions.md EPS-8). The server
// process never loads SES and never runs an expression. Each child has its own V8 heap and stack
// limits; the pool kills a child (SIGKILL) that overruns its deadline or its memory limit, or that
// breaks the protocol, and never waits on a child's cooperation to do so.
//
// Scheduling:
// - a job goes only to an idle child, never behind a busy one. The jobs of one applyBatch call
//   may share a message (a chunk), which amortises the round trip; jobs of different calls never
//   do, so one object's expression can delay another's only by occupying a child;
// - a warm spare child stands ready: a killed child is replaced at once by the spare, and a new
//   spare is started in the background;
// - a deadline is per job, from the moment the child starts it, and counts the CPU time of the
//   child's main thread, which the pool reads from /proc (see check()). When a deadline or the
//   memory limit is reached, the child's monitor thread (child-monitor.ts) is asked which job and
//   patch run, for the error message; without an answer the child is killed anyway.
// A job is blamed when the pool knows it was the one running; the other jobs of a dead child's
// chunk are run again, each on its own, so that a repeat offender is blamed precisely. A blamed job
// whose patch the pool could not learn (no answer from the monitor, or a child that died at once)
// while its config has several expressions is run once more, alone, before it is settled: the
// monitor is asked again, and the error names the patch when it answers (see rerunToName).
// Children are replaced, too, when a batch leaves them close to their heap or resident limit.
import { availableParallelism } from "node:os";
import { PatchError } from "../types.js";
import { SandboxProcess, type ExitInfo } from "./child-process.js";
import { childLimits, residentLimitBytes, resolveLimits, type ResourceLimits } from "./limits.js";
import {
  DEFAULT_RESULT_LIMITS,
  STATE_EXPRESSION,
  STATE_IDLE,
  STATE_JOB,
  type Progress,
  type ResultLimits,
  type SandboxConfig,
  type SandboxJob,
  type SandboxResult,
  type WireError,
} from "./protocol.js";
import {
  blame,
  exitDetail,
  gaveUp,
  protocolError,
  stopReason,
  type Culprit,
  type Stop,
  type StopLimits,
} from "./stop.js";
import { fromWire, wireError, type BatchResult } from "./wire-result.js";

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
  /** Jobs of one applyBatch call packed into one message at most; default 256. */
  maxJobsPerMessage?: number;
  /** How long a child may take to start or to compile a config before it counts as hung; default 10 s. */
  startupMs?: number;
}

export type { BatchResult } from "./wire-result.js";

/** A job re-queued this often (its child died under other jobs each time) fails instead. */
const MAX_ATTEMPTS = 3;
/** Children that die before they are ready this many times in a row break the pool. */
const MAX_STARTUP_FAILURES = 3;
/** A chunk stops growing at this many bytes of input, so a child's answer stays small. */
const CHUNK_BYTES = 1024 * 1024;
/**
 * A job that has had its deadline in wall time this many times over is stopped even if it got
 * little CPU: nothing an expression can do sleeps, so only an overloaded machine gets here.
 */
const WALL_FACTOR = 10;
/** How often a working child's resident memory is read. */
const MEMORY_POLL_MS = 5;
/**
 * How long a child over its resident limit may take to say what it ran before it is killed. Its
 * monitor answers in about 2 ms, 10 ms at the 90th percentile, on a loaded 2-core machine: the
 * 5 ms this once was missed one answer in five. It is not longer because the child keeps growing
 * meanwhile: memory outside the V8 heap (a regular expression's compiler) grows up to ~1.7 GiB/s
 * here, so 15 ms lets it pass its limit by ~25 MiB more than an immediate kill (10% of the
 * default 256 MiB), on top of the ~9 MiB a 5 ms poll already allows. The grace counts the time
 * this process runs (see ask), so while this process alone is held up the child may grow longer,
 * as it already may before the poll sees it. A child that cannot answer in time is run again to
 * be named (see rerunToName).
 */
const MEMORY_GRACE_MS = 15;
/** How often a monitor query's grace looks at the clock; one look counts two ticks at most (see ask). */
const ASK_TICK_MS = 5;
/** How much longer than ask's own wait a monitor query waits before it gives up on its own. */
const ASK_BACKSTOP_MS = 1000;
/** A child this close to its heap or resident limit after a batch is replaced (see tooFull). */
const RETIRE_FRACTION = 0.75;

/** Where the results of one apply or applyBatch call go. */
interface Call {
  settle(index: number, result: BatchResult): void;
}

interface Pending {
  key: string;
  job: SandboxJob;
  /** Its call, and its place there: only jobs of one call share a chunk. */
  call: Call;
  index: number;
  attempts: number;
  /** Run on its own: it was in a chunk whose child died, and it may have been the cause. */
  alone: boolean;
  /** Run again to learn which patch killed its child (see rerunToName); once at most. */
  reran: boolean;
}

function settle(pending: Pending, result: BatchResult): void {
  pending.call.settle(pending.index, result);
}

interface Chunk {
  kind: "batch";
  id: number;
  jobs: Pending[];
  /** Results received so far; jobs[answered…] are still open. */
  answered: number;
  startedAt: number;
  /** CPU time of the child's main thread when the chunk was sent; undefined without /proc. */
  cpuAtStart: number | undefined;
  /** Monitor answers that found the chunk done but its results not yet here. */
  lateChecks: number;
}

interface Load {
  kind: "load";
  loadId: number;
  key: string;
  startedAt: number;
}

type Work = Chunk | Load;

interface Slot {
  /** Position in `slots`; -1 for the spare. */
  index: number;
  proc: SandboxProcess;
  ready: boolean;
  /** Has been idle once: started, with every config compiled. */
  started: boolean;
  /** Messages the child has not finished, in the order it handles them. */
  work: Work[];
  timer: NodeJS.Timeout | undefined;
  /** Over its memory limit, to be ended once its monitor has answered. */
  killing: boolean;
  ended: boolean;
  exited: Promise<void>;
}

interface LoadWait {
  slots: Set<Slot>;
  errors: WireError[];
  failure: string | undefined;
  done: () => void;
}

export class SandboxPool {
  readonly size: number;
  readonly deadlineMs: number;
  private readonly limits: Required<ResourceLimits>;
  private readonly resultLimits: ResultLimits;
  private readonly maxJobsPerMessage: number;
  private readonly startupMs: number;
  private readonly maxFrameBytes: number;
  private readonly slots: Slot[] = [];
  private spare: Slot | undefined;
  private readonly configs = new Map<string, SandboxConfig>();
  private readonly loads = new Map<number, LoadWait>();
  private queue: Pending[] = [];
  /** Results that came in, settled once the child has its next chunk (see onMessage). */
  private arrived: [Pending, BatchResult][] = [];
  private chunkSeq = 0;
  private loadSeq = 0;
  private startupFailures = 0;
  private restartCount = 0;
  private readonly jobsSent: number[] = [];
  private memoryPoll: NodeJS.Timeout | undefined;
  private referenced = false;
  private closed = false;
  private broken: Error | undefined;

  constructor(options: SandboxPoolOptions = {}) {
    this.size = positiveInt(options.size, availableParallelism());
    this.deadlineMs = positiveInt(options.deadlineMs, 100);
    this.limits = resolveLimits(options.resourceLimits);
    this.resultLimits = { ...DEFAULT_RESULT_LIMITS, ...options.resultLimits };
    this.maxJobsPerMessage = positiveInt(options.maxJobsPerMessage, 256);
    this.startupMs = positiveInt(options.startupMs, 10_000);
    // One chunk's worth of results, one patched object, and room for explain entries.
    this.maxFrameBytes = 4 * this.resultLimits.maxObjectBytes + 4 * CHUNK_BYTES;
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
    const chunks = this.slots.flatMap((s) => s.work.filter((w) => w.kind === "batch"));
    return {
      queued: this.queue.length,
      inFlight: chunks.reduce((n, c) => n + c.jobs.length - c.answered, 0),
      restarts: this.restartCount,
      jobsPerWorker: [...this.jobsSent],
      pids: this.live().map((s) => s.proc.pid),
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
      for (const slot of w.slots) this.sendLoad(slot, loadId, configKey, config);
      this.updateRefs();
      if (w.slots.size === 0) w.done();
    });
    this.loads.delete(loadId);
    this.updateRefs();
    const error = wait.errors[0];
    if (error === undefined && wait.failure === undefined) return;
    if (this.configs.get(configKey) === config) this.restore(configKey, previous);
    if (error !== undefined) throw new PatchError(error.message, error.patchIndex, error.path);
    throw new PatchError(wait.failure!);
  }

  /** Forgets a config in every child. */
  unloadConfig(configKey: string): void {
    this.configs.delete(configKey);
    for (const slot of this.live()) slot.proc.send({ type: "unload", key: configKey });
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
    for (const slot of all) this.end(slot, { kind: "closed" });
    this.failQueue(new PatchError("the sandbox pool is closed"));
    this.updateRefs();
    await Promise.all(all.map((s) => s.exited));
  }

  // ---- configs ----

  private assertOpen(): void {
    if (this.closed) throw new PatchError("the sandbox pool is closed");
    if (this.broken !== undefined) throw new PatchError(this.broken.message);
  }

  private sendLoad(slot: Slot, loadId: number, key: string, config: SandboxConfig): void {
    slot.work.push({ kind: "load", loadId, key, startedAt: performance.now() });
    slot.proc.send({ type: "load", loadId, key, config });
    if (slot.work.length === 1) this.arm(slot);
  }

  private restore(configKey: string, previous: SandboxConfig | undefined): void {
    if (previous === undefined) {
      this.unloadConfig(configKey);
      return;
    }
    this.configs.set(configKey, previous);
    for (const slot of this.live()) this.sendLoad(slot, 0, configKey, previous);
  }

  private onLoaded(slot: Slot, loadId: number, error: WireError | undefined): void {
    const wait = this.loads.get(loadId);
    if (wait === undefined || !wait.slots.delete(slot)) return;
    if (error !== undefined) wait.errors.push(error);
    if (wait.slots.size === 0) wait.done();
  }

  /** A child that ended with loads outstanding: the one it was compiling may be the cause. */
  private abandonLoads(slot: Slot, work: Work[], why: Stop): void {
    for (const load of work) {
      if (load.kind !== "load") continue;
      const wait = this.loads.get(load.loadId);
      if (wait === undefined || !wait.slots.delete(slot)) continue;
      const compiling = work[0] === load;
      if (compiling && why.kind !== "closed" && why.kind !== "retired") {
        wait.failure = `compiling the patches failed: ${stopReason(why, STATE_JOB, this.stopLimits())}`;
        // Replacements must not load it again.
        this.configs.delete(load.key);
      }
      if (why.kind === "closed") wait.failure = "the sandbox pool is closed";
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
    this.queue.push({ key, job, call, index, attempts: 0, alone: false, reran: false });
  }

  private idle(slot: Slot): boolean {
    return slot.ready && !slot.ended && slot.work.length === 0;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const idle = this.slots.filter((s) => this.idle(s));
      if (idle.length === 0) break;
      this.send(idle[0]!, this.takeChunk(idle.length));
    }
    this.updateRefs();
  }

  /** The queue's head, with the following jobs of the same call, shared out over `idle` children. */
  private takeChunk(idle: number): Pending[] {
    const head = this.queue[0]!;
    let run = 1;
    if (!head.alone) {
      while (run < this.queue.length) {
        const next = this.queue[run]!;
        if (next.call !== head.call || next.alone) break;
        run++;
      }
    }
    const wanted = Math.min(this.maxJobsPerMessage, Math.ceil(run / idle));
    let take = 1;
    let bytes = jobBytes(head.job);
    while (take < wanted) {
      bytes += jobBytes(this.queue[take]!.job);
      if (bytes > CHUNK_BYTES) break;
      take++;
    }
    return this.queue.splice(0, take);
  }

  private send(slot: Slot, jobs: Pending[]): void {
    this.chunkSeq = (this.chunkSeq % 0x7fff_ffff) + 1;
    const chunk: Chunk = {
      kind: "batch",
      id: this.chunkSeq,
      jobs,
      answered: 0,
      startedAt: performance.now(),
      cpuAtStart: slot.proc.cpuMs(),
      lateChecks: 0,
    };
    slot.work.push(chunk);
    this.jobsSent[slot.index] = (this.jobsSent[slot.index] ?? 0) + jobs.length;
    slot.proc.send({
      type: "batch",
      batchId: chunk.id,
      key: jobs[0]!.key,
      jobs: jobs.map((p) => p.job),
    });
    this.arm(slot);
    this.watchMemory();
  }

  // ---- children ----

  private live(): Slot[] {
    const all = this.spare ? [...this.slots, this.spare] : [...this.slots];
    return all.filter((s) => !s.ended);
  }

  private spawn(index: number): Slot {
    let exited!: () => void;
    // The callbacks run only once the child talks or exits, after `slot` exists.
    const proc = new SandboxProcess(childLimits(this.limits), this.maxFrameBytes, {
      message: (message) => this.onMessage(slot, message),
      exit: (info) => {
        this.onExit(slot, info);
        exited();
      },
    });
    const slot: Slot = {
      index,
      proc,
      ready: false,
      started: false,
      work: [],
      timer: undefined,
      killing: false,
      ended: false,
      exited: new Promise((resolve) => (exited = resolve)),
    };
    slot.proc.send({ type: "init", limits: this.resultLimits });
    for (const [key, config] of this.configs) this.sendLoad(slot, 0, key, config);
    // Until it is ready, the startup timer runs (see arm()).
    this.arm(slot);
    if (this.referenced) slot.proc.ref();
    return slot;
  }

  /** Every message is checked against what the child was asked to do; anything else ends it. */
  private onMessage(slot: Slot, raw: unknown): void {
    if (slot.ended) return;
    const head = slot.work[0];
    if (!this.handle(slot, raw)) {
      this.end(slot, { kind: "crash", exit: protocolError("an unexpected message") });
    } else if (!slot.ended && (slot.work[0] !== head || head === undefined)) {
      // What the child does next starts now.
      const next = slot.work[0];
      if (next !== undefined) next.startedAt = performance.now();
      if (slot.ready && next === undefined && !slot.started) {
        slot.started = true;
        this.startupFailures = 0;
      }
      this.arm(slot);
    }
    // The child gets its next chunk first; the callers hear of these results after.
    this.pump();
    const arrived = this.arrived;
    this.arrived = [];
    for (const [pending, result] of arrived) settle(pending, result);
  }

  private handle(slot: Slot, raw: unknown): boolean {
    switch ((raw as { type?: unknown } | null)?.type) {
      case "ready":
        if (slot.ready) return false;
        slot.ready = true;
        return true;
      case "loaded":
        return this.onLoadedMessage(slot, raw);
      case "results":
        return this.onResults(slot, raw);
      default:
        return false;
    }
  }

  private onLoadedMessage(slot: Slot, raw: unknown): boolean {
    const m = raw as { loadId?: unknown; error?: unknown };
    const head = slot.work[0];
    if (head?.kind !== "load" || m.loadId !== head.loadId) return false;
    const error = m.error === undefined ? undefined : wireError(m.error);
    if (m.error !== undefined && error === undefined) return false;
    slot.work.shift();
    this.onLoaded(slot, head.loadId, error);
    return true;
  }

  private onResults(slot: Slot, raw: unknown): boolean {
    const m = raw as { batchId?: unknown; first?: unknown; results?: unknown; done?: unknown };
    const chunk = slot.work[0];
    if (chunk?.kind !== "batch" || m.batchId !== chunk.id || m.first !== chunk.answered) {
      return false;
    }
    if (!Array.isArray(m.results) || chunk.answered + m.results.length > chunk.jobs.length) {
      return false;
    }
    for (const wire of m.results as unknown[]) {
      this.arrived.push([chunk.jobs[chunk.answered++]!, fromWire(wire)]);
    }
    if (m.done !== true) return true;
    if (chunk.answered !== chunk.jobs.length) return false;
    slot.work.shift();
    if (this.tooFull(slot, (raw as { heapUsed?: unknown }).heapUsed)) {
      this.end(slot, { kind: "retired" });
    }
    return true;
  }

  /**
   * A child that a batch left with a nearly full heap, or holding most of its resident limit
   * (memory a process keeps after it is freed), is replaced: the next job must not inherit what
   * an expression left, nor be killed for it.
   */
  private tooFull(slot: Slot, heapUsed: unknown): boolean {
    const heapLimit = this.limits.maxOldGenerationSizeMb * 1024 * 1024;
    if (typeof heapUsed === "number" && heapUsed > heapLimit * RETIRE_FRACTION) return true;
    const resident = slot.proc.rssBytes();
    return resident !== undefined && resident > residentLimitBytes(this.limits) * RETIRE_FRACTION;
  }

  private onExit(slot: Slot, exit: ExitInfo): void {
    if (!slot.ended) this.end(slot, { kind: "crash", exit });
  }

  /** Ends a child now: SIGKILL, settle or re-queue its work, put the spare in its place. */
  private end(slot: Slot, why: Stop): void {
    if (slot.ended) return;
    slot.ended = true;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.proc.kill();
    const work = slot.work;
    slot.work = [];
    this.abandonLoads(slot, work, why);
    const chunk = work.find((w): w is Chunk => w.kind === "batch");
    if (chunk !== undefined) this.settleChunk(chunk, why, work[0] === chunk);
    if (why.kind === "closed") return;
    if (why.kind !== "retired") this.restartCount++;
    if (!slot.started && why.kind !== "retired") this.onStartupFailure(why);
    this.replace(slot);
    this.pump();
  }

  private replace(slot: Slot): void {
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
      why.kind === "crash"
        ? exitDetail(why.exit, true)
        : stopReason(why, STATE_JOB, this.stopLimits());
    this.broken = new Error(`sandbox children fail to start: ${detail}`);
    const error = new PatchError(this.broken.message);
    this.failQueue(error);
    for (const slot of this.live()) this.end(slot, { kind: "closed" });
    for (const wait of this.loads.values()) {
      wait.failure = this.broken.message;
      wait.done();
    }
  }

  // ---- failures ----

  /** Settles a dead child's chunk: blame the job that was running when it is known, re-run the rest. */
  private settleChunk(chunk: Chunk, why: Stop, running: boolean): void {
    const open = chunk.jobs.slice(chunk.answered);
    if (why.kind === "closed") {
      for (const p of open)
        settle(p, { ok: false, error: new PatchError("the sandbox pool is closed") });
      return;
    }
    const culprit = running ? this.culprit(chunk, why) : undefined;
    const again: Pending[] = [];
    for (const [i, pending] of open.entries()) {
      if (culprit !== undefined && chunk.answered + i === culprit.job) {
        if (this.rerunToName(pending, culprit)) again.push(pending);
        else settle(pending, { ok: false, error: this.blame(pending, why, culprit) });
        continue;
      }
      pending.attempts++;
      // Without a culprit, any open job may have been the cause: each runs again on its own.
      pending.alone ||= culprit === undefined && running;
      if (pending.attempts < MAX_ATTEMPTS) again.push(pending);
      else settle(pending, { ok: false, error: gaveUp(why, MAX_ATTEMPTS) });
    }
    this.queue.unshift(...again);
  }

  /**
   * The job (index in the chunk), state and patch to blame, when the pool can know them: from the
   * monitor's answer, or, for a child that died at once (V8 aborts at its heap limit) or did not
   * answer, the only open job, and the patch if its config has a single expression for the job's
   * direction.
   */
  private culprit(chunk: Chunk, why: Stop): Culprit | undefined {
    if (why.kind === "retired") return undefined;
    const p = why.kind === "deadline" || why.kind === "memory" ? why.progress : undefined;
    if (p !== undefined && p.batchId === chunk.id && p.state !== STATE_IDLE) {
      if (p.job >= chunk.answered && p.job < chunk.jobs.length) {
        return { job: p.job, state: p.state, patchIndex: p.patchIndex, answered: true };
      }
    }
    if (chunk.jobs.length - chunk.answered !== 1) return undefined;
    const found = this.expressions(chunk.jobs[chunk.jobs.length - 1]!);
    const only = found.length === 1 ? found[0]! : -1;
    return {
      job: chunk.jobs.length - 1,
      state: only < 0 ? STATE_JOB : STATE_EXPRESSION,
      patchIndex: only,
      answered: false,
    };
  }

  /**
   * A culprit whose patch the pool could not learn, though its config has several expressions for
   * its direction, runs once more, alone: the monitor is then asked again (a child under load may
   * answer late, or a kill may have come at a bad moment), and the error names the patch if it
   * answers. Once per job, and within MAX_ATTEMPTS: after that it is blamed with what is known.
   * When the monitor did answer, nothing is to be learned: outside an expression no patch is at
   * fault. A child that V8 aborts at its heap limit cannot answer at all, and costs one more child.
   */
  private rerunToName(pending: Pending, culprit: Culprit): boolean {
    if (culprit.answered || culprit.patchIndex >= 0 || pending.reran) return false;
    if (pending.attempts + 1 >= MAX_ATTEMPTS || this.expressions(pending).length < 2) return false;
    pending.reran = true;
    pending.alone = true;
    pending.attempts++;
    return true;
  }

  private blame(pending: Pending, why: Stop, culprit: Culprit): PatchError {
    return blame(why, culprit, this.configs.get(pending.key)?.patches, this.stopLimits());
  }

  /** The indexes of the patches with an expression for the job's direction. */
  private expressions(pending: Pending): number[] {
    const field = pending.job.direction === "toVirtual" ? "reverseExpression" : "expression";
    const patches = this.configs.get(pending.key)?.patches ?? [];
    return patches.flatMap((p, i) => (typeof p[field] === "string" && p[field] ? [i] : []));
  }

  private stopLimits(): StopLimits {
    return { deadlineMs: this.deadlineMs, limits: this.limits };
  }

  private failQueue(error: PatchError): void {
    const queue = this.queue;
    this.queue = [];
    for (const p of queue) settle(p, { ok: false, error });
  }

  // ---- timers ----

  /** (Re)starts a child's timer for what it does now: starting, compiling, or running a chunk. */
  private arm(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    if (slot.ended) return;
    const head = slot.work[0];
    if (!slot.ready || head?.kind === "load") {
      const since = head?.startedAt ?? performance.now();
      const left = since + this.startupMs - performance.now();
      slot.timer = setTimeout(() => this.end(slot, { kind: "unresponsive" }), Math.max(1, left));
      slot.timer.unref();
      return;
    }
    if (head !== undefined)
      this.after(slot, this.deadlineMs - (performance.now() - head.startedAt));
  }

  private after(slot: Slot, ms: number): void {
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => void this.check(slot), Math.max(1, Math.ceil(ms)));
  }

  /**
   * A chunk's deadline may have come. A deadline counts the CPU time of the child's main thread
   * (read from /proc by the pool, not reported by the child), so a job that waited for a CPU on a
   * busy machine is not killed for it; wall time counts only where /proc is missing, and as a
   * backstop at WALL_FACTOR deadlines. A chunk of several jobs asks the child's monitor which job
   * runs and since when, and charges it the child's share of CPU over the chunk so far.
   */
  private async check(slot: Slot): Promise<void> {
    slot.timer = undefined;
    const chunk = slot.work[0];
    if (slot.ended || chunk?.kind !== "batch") return;
    const { wall, cpu } = this.usage(slot, chunk);
    const single = chunk.jobs.length === 1;
    const spent = cpu ?? wall;
    if (single && spent < this.deadlineMs && wall < this.deadlineMs * WALL_FACTOR) {
      return this.after(slot, this.deadlineMs - spent);
    }
    const progress = await this.ask(slot, this.graceMs());
    if (slot.ended || slot.work[0] !== chunk) return;
    if (
      progress !== undefined &&
      (progress.batchId !== chunk.id || progress.state === STATE_IDLE)
    ) {
      // Done; the results are on their way. Wait a little for them, not for ever.
      if (++chunk.lateChecks * this.deadlineMs > this.startupMs) {
        return this.end(slot, { kind: "unresponsive" });
      }
      return this.after(slot, this.deadlineMs);
    }
    if (single) return this.end(slot, { kind: "deadline", progress });
    if (progress === undefined) {
      // The jobs cannot be told apart: together they get every open job's deadline.
      const open = chunk.jobs.length - chunk.answered;
      if (spent < this.deadlineMs * open) return this.after(slot, this.deadlineMs);
      return this.end(slot, { kind: "deadline", progress: undefined });
    }
    const share = cpu === undefined || wall <= 0 ? 1 : Math.min(1, cpu / wall);
    const jobSpent = progress.elapsedMs * share;
    if (jobSpent >= this.deadlineMs || progress.elapsedMs >= this.deadlineMs * WALL_FACTOR) {
      return this.end(slot, { kind: "deadline", progress });
    }
    this.after(slot, this.deadlineMs - jobSpent);
  }

  /** Wall and main-thread CPU time since the chunk was sent, in ms. */
  private usage(slot: Slot, chunk: Chunk): { wall: number; cpu: number | undefined } {
    const wall = performance.now() - chunk.startedAt;
    const now = slot.proc.cpuMs();
    const cpu =
      now === undefined || chunk.cpuAtStart === undefined ? undefined : now - chunk.cpuAtStart;
    return { wall, cpu };
  }

  /**
   * How long an answer from the monitor may take before the child is killed without it (it only
   * makes the error message exact: the pool knows what it needs to kill without it). The monitor
   * answers in about 2 ms, 10 ms at the 90th percentile, on a loaded 2-core machine, so half the
   * deadline (50 ms by default) is ample. It is not raised: a runaway keeps its core for the whole
   * grace whenever its monitor is slow. What a grace cannot cover (this process busy past it, a
   * child dying as it is asked) ask() and the re-run of the culprit (rerunToName) do.
   */
  private graceMs(): number {
    return Math.min(100, Math.max(20, this.deadlineMs / 2));
  }

  /**
   * Asks a child's monitor, waiting `graceMs` for the answer: time in which this process ran. On
   * a loaded machine everything stalls now and then, for hundreds of milliseconds (measured:
   * 700 ms), the monitor with it; a stall counts as one tick, so the monitor still has its grace
   * once things run again. WALL_FACTOR graces of wall time end the wait in any case. And when the
   * grace ends the answer may be here, unread: Node runs due timers before it reads sockets, so
   * the pool reads what has arrived (setImmediate runs after that) before it gives up.
   */
  private ask(slot: Slot, graceMs: number): Promise<Progress | undefined> {
    return new Promise((resolve) => {
      const started = performance.now();
      let last = started;
      let left = graceMs;
      const tick = (): void => {
        const now = performance.now();
        left -= Math.min(now - last, 2 * ASK_TICK_MS);
        last = now;
        if (left > 0 && now - started < graceMs * WALL_FACTOR) {
          timer = setTimeout(tick, Math.min(ASK_TICK_MS, left));
        } else {
          setImmediate(() => resolve(undefined));
        }
      };
      let timer = setTimeout(tick, Math.min(ASK_TICK_MS, graceMs));
      // The query's own timeout must not end the wait first: it is only a backstop.
      void slot.proc.query(graceMs * WALL_FACTOR + ASK_BACKSTOP_MS).then((progress) => {
        if (progress === undefined) return;
        clearTimeout(timer);
        resolve(progress);
      });
    });
  }

  /** While any child works, reads the resident memory of the working ones. */
  private watchMemory(): void {
    if (this.memoryPoll !== undefined) return;
    const limit = residentLimitBytes(this.limits);
    this.memoryPoll = setInterval(() => {
      const working = this.slots.filter((s) => !s.ended && s.work.some((w) => w.kind === "batch"));
      if (working.length === 0) {
        clearInterval(this.memoryPoll);
        this.memoryPoll = undefined;
        return;
      }
      for (const slot of working) {
        const resident = slot.proc.rssBytes();
        if (resident !== undefined && resident > limit) void this.overMemory(slot, resident);
      }
    }, MEMORY_POLL_MS);
    this.memoryPoll.unref();
  }

  /** Kills a child over its resident limit, after asking its monitor, briefly, what it ran. */
  private async overMemory(slot: Slot, residentBytes: number): Promise<void> {
    if (slot.killing) return;
    slot.killing = true;
    const progress = await this.ask(slot, MEMORY_GRACE_MS);
    this.end(slot, { kind: "memory", residentBytes, progress });
  }

  /** Children keep the server's event loop alive while the pool has work, and only then. */
  private updateRefs(): void {
    const busy =
      this.queue.length > 0 ||
      this.loads.size > 0 ||
      this.slots.some((s) => s.work.some((w) => w.kind === "batch"));
    if (busy === this.referenced) return;
    this.referenced = busy;
    for (const slot of this.live()) {
      if (busy) slot.proc.ref();
      else slot.proc.unref();
    }
  }
}

function positiveInt(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}

function jobBytes(job: SandboxJob): number {
  return (
    job.objectJson.length +
    (job.hostObjectJson?.length ?? 0) +
    (job.virtualObjectJson?.length ?? 0) +
    (job.referenceObjectsJson?.length ?? 0)
  );
}
