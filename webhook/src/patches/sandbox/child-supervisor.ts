// One sandbox child under the pool's watch (docs/decisions.md EPS-8): what it was asked to do, in
// order, each message it sends checked against that, and its clocks: a startup or compile timer,
// and a deadline per job from the moment the child starts it. The supervisor ends the child
// (SIGKILL) when it overruns, breaks the protocol or crashes, and never waits on its cooperation
// to do so; what becomes of its work is the pool's business, told through ChildReports.
import { askMonitor, WALL_FACTOR } from "./ask-monitor.js";
import { SandboxProcess, type ExitInfo } from "./child-process.js";
import type { Pending } from "./job-queue.js";
import { childLimits, residentLimitBytes, type ResourceLimits } from "./limits.js";
import type { WatchedChild } from "./memory-watch.js";
import {
  STATE_IDLE,
  type Progress,
  type ResultLimits,
  type SandboxConfig,
  type WireError,
} from "./protocol.js";
import { protocolError, type Stop } from "./stop.js";
import { fromWire, wireError, type BatchResult } from "./wire-result.js";

/**
 * How long a child over its resident limit may take to say what it ran before it is killed. Its
 * monitor answers in about 2 ms, 10 ms at the 90th percentile, on a loaded 2-core machine: the
 * 5 ms this once was missed one answer in five. It is not longer because the child keeps growing
 * meanwhile: memory outside the V8 heap (a regular expression's compiler) grows up to ~1.7 GiB/s
 * here, so 15 ms lets it pass its limit by ~25 MiB more than an immediate kill (10% of the
 * default 256 MiB), on top of the ~9 MiB a 5 ms poll already allows. The grace counts the time
 * this process runs (see askMonitor), so while this process alone is held up the child may grow
 * longer, as it already may before the poll sees it. A child that cannot answer in time is run
 * again to be named (see chunk-blame.ts rerunToName).
 */
const MEMORY_GRACE_MS = 15;
/** A child this close to its heap or resident limit after a batch is replaced (see tooFull). */
const RETIRE_FRACTION = 0.75;

/** Jobs sent to a child in one message. */
export interface Chunk {
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

/** A config sent to a child to compile. */
export interface Load {
  kind: "load";
  loadId: number;
  key: string;
  startedAt: number;
}

export type Work = Chunk | Load;

/** What a supervisor tells the pool. */
export interface ChildReports {
  /** The child compiled load `loadId`, or refused it with `error`. */
  loaded(child: ChildSupervisor, loadId: number, error: WireError | undefined): void;
  /** A job's result came in; the pool passes it on once the child has its next chunk. */
  result(pending: Pending, result: BatchResult): void;
  /** The child became idle for the first time: started, with every config compiled. */
  started(): void;
  /** A message of the child was handled (it may be idle now). */
  handled(): void;
  /** The child was ended; `work` is what it had not finished, in order. */
  ended(child: ChildSupervisor, why: Stop, work: Work[]): void;
}

export interface ChildSettings {
  limits: Required<ResourceLimits>;
  resultLimits: ResultLimits;
  maxFrameBytes: number;
  deadlineMs: number;
  startupMs: number;
}

export class ChildSupervisor implements WatchedChild {
  /** The pool's: the child's position in its slots; -1 for the spare. */
  index: number;
  /** Resolves once the child process has exited. */
  readonly exited: Promise<void>;
  private readonly proc: SandboxProcess;
  private ready = false;
  /** Has been idle once: started, with every config compiled. */
  private startedOnce = false;
  /** Messages the child has not finished, in the order it handles them. */
  private work: Work[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Over its memory limit, to be ended once its monitor has answered. */
  private killing = false;
  private gone = false;

  /** Starts a child and has it compile `configs`; `referenced` keeps the event loop alive for it. */
  constructor(
    index: number,
    private readonly settings: ChildSettings,
    private readonly reports: ChildReports,
    configs: ReadonlyMap<string, SandboxConfig>,
    referenced: boolean,
  ) {
    this.index = index;
    let exited!: () => void;
    this.exited = new Promise((resolve) => (exited = resolve));
    // The callbacks run only once the child talks or exits.
    this.proc = new SandboxProcess(childLimits(settings.limits), settings.maxFrameBytes, {
      message: (message) => this.onMessage(message),
      exit: (info) => {
        this.onExit(info);
        exited();
      },
    });
    this.proc.send({ type: "init", limits: settings.resultLimits });
    for (const [key, config] of configs) this.load(0, key, config);
    // Until it is ready, the startup timer runs (see arm()).
    this.arm();
    if (referenced) this.proc.ref();
  }

  get pid(): number {
    return this.proc.pid;
  }

  get ended(): boolean {
    return this.gone;
  }

  /** Has been idle once: started, with every config compiled. */
  get started(): boolean {
    return this.startedOnce;
  }

  /** Ready, and nothing to do. */
  get idle(): boolean {
    return this.ready && !this.gone && this.work.length === 0;
  }

  /** Has a chunk of jobs, running or waiting behind a load. */
  get working(): boolean {
    return this.work.some((w) => w.kind === "batch");
  }

  /** Jobs sent and not yet answered. */
  get openJobs(): number {
    let open = 0;
    for (const w of this.work) if (w.kind === "batch") open += w.jobs.length - w.answered;
    return open;
  }

  rssBytes(): number | undefined {
    return this.proc.rssBytes();
  }

  ref(): void {
    this.proc.ref();
  }

  unref(): void {
    this.proc.unref();
  }

  /** Has the child compile `config` under `key`; loadId 0 is a load nobody waits for. */
  load(loadId: number, key: string, config: SandboxConfig): void {
    this.work.push({ kind: "load", loadId, key, startedAt: performance.now() });
    this.proc.send({ type: "load", loadId, key, config });
    if (this.work.length === 1) this.arm();
  }

  unload(key: string): void {
    this.proc.send({ type: "unload", key });
  }

  /** Sends a chunk of jobs, numbered `id`; the deadline runs from now. */
  run(id: number, jobs: Pending[]): void {
    const chunk: Chunk = {
      kind: "batch",
      id,
      jobs,
      answered: 0,
      startedAt: performance.now(),
      cpuAtStart: this.proc.cpuMs(),
      lateChecks: 0,
    };
    this.work.push(chunk);
    this.proc.send({ type: "batch", batchId: id, key: jobs[0]!.key, jobs: jobs.map((p) => p.job) });
    this.arm();
  }

  /** Kills a child over its resident limit, after asking its monitor, briefly, what it ran. */
  overMemory(residentBytes: number): void {
    if (this.killing) return;
    this.killing = true;
    void askMonitor(this.proc, MEMORY_GRACE_MS).then((progress) =>
      this.end({ kind: "memory", residentBytes, progress }),
    );
  }

  /** Ends the child now: SIGKILL, and its work goes back to the pool. */
  end(why: Stop): void {
    if (this.gone) return;
    this.gone = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.proc.kill();
    const work = this.work;
    this.work = [];
    this.reports.ended(this, why, work);
  }

  // ---- messages ----

  /** Every message is checked against what the child was asked to do; anything else ends it. */
  private onMessage(raw: unknown): void {
    if (this.gone) return;
    const head = this.work[0];
    if (!this.handle(raw)) {
      this.end({ kind: "crash", exit: protocolError("an unexpected message") });
    } else if (!this.gone && (this.work[0] !== head || head === undefined)) {
      // What the child does next starts now.
      const next = this.work[0];
      if (next !== undefined) next.startedAt = performance.now();
      if (this.ready && next === undefined && !this.startedOnce) {
        this.startedOnce = true;
        this.reports.started();
      }
      this.arm();
    }
    this.reports.handled();
  }

  private handle(raw: unknown): boolean {
    switch ((raw as { type?: unknown } | null)?.type) {
      case "ready":
        if (this.ready) return false;
        this.ready = true;
        return true;
      case "loaded":
        return this.onLoaded(raw);
      case "results":
        return this.onResults(raw);
      default:
        return false;
    }
  }

  private onLoaded(raw: unknown): boolean {
    const m = raw as { loadId?: unknown; error?: unknown };
    const head = this.work[0];
    if (head?.kind !== "load" || m.loadId !== head.loadId) return false;
    const error = m.error === undefined ? undefined : wireError(m.error);
    if (m.error !== undefined && error === undefined) return false;
    this.work.shift();
    this.reports.loaded(this, head.loadId, error);
    return true;
  }

  private onResults(raw: unknown): boolean {
    const m = raw as { batchId?: unknown; first?: unknown; results?: unknown; done?: unknown };
    const chunk = this.work[0];
    if (chunk?.kind !== "batch" || m.batchId !== chunk.id || m.first !== chunk.answered) {
      return false;
    }
    if (!Array.isArray(m.results) || chunk.answered + m.results.length > chunk.jobs.length) {
      return false;
    }
    const bytes = (raw as { bytes?: unknown }).bytes;
    if (!(bytes instanceof Uint8Array)) return false;
    for (const result of fromWire(m.results as unknown[], bytes)) {
      this.reports.result(chunk.jobs[chunk.answered++]!, result);
    }
    if (m.done !== true) return true;
    if (chunk.answered !== chunk.jobs.length) return false;
    this.work.shift();
    if (this.tooFull((raw as { heapUsed?: unknown }).heapUsed)) this.end({ kind: "retired" });
    return true;
  }

  /**
   * A child that a batch left with a nearly full heap, or holding most of its resident limit
   * (memory a process keeps after it is freed), is replaced: the next job must not inherit what
   * an expression left, nor be killed for it.
   */
  private tooFull(heapUsed: unknown): boolean {
    const { limits } = this.settings;
    const heapLimit = limits.maxOldGenerationSizeMb * 1024 * 1024;
    if (typeof heapUsed === "number" && heapUsed > heapLimit * RETIRE_FRACTION) return true;
    const resident = this.proc.rssBytes();
    return resident !== undefined && resident > residentLimitBytes(limits) * RETIRE_FRACTION;
  }

  private onExit(exit: ExitInfo): void {
    if (!this.gone) this.end({ kind: "crash", exit });
  }

  // ---- clocks ----

  /** (Re)starts the timer for what the child does now: starting, compiling, or running a chunk. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.gone) return;
    const head = this.work[0];
    const { deadlineMs, startupMs } = this.settings;
    if (!this.ready || head?.kind === "load") {
      const since = head?.startedAt ?? performance.now();
      const left = since + startupMs - performance.now();
      this.timer = setTimeout(() => this.end({ kind: "unresponsive" }), Math.max(1, left));
      this.timer.unref();
      return;
    }
    if (head !== undefined) this.after(deadlineMs - (performance.now() - head.startedAt));
  }

  private after(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), Math.max(1, Math.ceil(ms)));
  }

  /**
   * A chunk's deadline may have come. A deadline counts the CPU time of the child's main thread
   * (read from /proc by the pool, not reported by the child), so a job that waited for a CPU on a
   * busy machine is not killed for it; wall time counts only where /proc is missing, and as a
   * backstop at WALL_FACTOR deadlines. A chunk of several jobs asks the child's monitor which job
   * runs and since when, and charges it the child's share of CPU over the chunk so far.
   */
  private async check(): Promise<void> {
    this.timer = undefined;
    const chunk = this.work[0];
    if (this.gone || chunk?.kind !== "batch") return;
    const { deadlineMs, startupMs } = this.settings;
    const { wall, cpu } = this.usage(chunk);
    const single = chunk.jobs.length === 1;
    const spent = cpu ?? wall;
    if (single && spent < deadlineMs && wall < deadlineMs * WALL_FACTOR) {
      return this.after(deadlineMs - spent);
    }
    const progress = await askMonitor(this.proc, this.graceMs());
    if (this.gone || this.work[0] !== chunk) return;
    if (
      progress !== undefined &&
      (progress.batchId !== chunk.id || progress.state === STATE_IDLE)
    ) {
      // Done; the results are on their way. Wait a little for them, not for ever.
      if (++chunk.lateChecks * deadlineMs > startupMs) {
        return this.end({ kind: "unresponsive" });
      }
      return this.after(deadlineMs);
    }
    if (single) return this.end({ kind: "deadline", progress });
    if (progress === undefined) {
      // The jobs cannot be told apart: together they get every open job's deadline.
      const open = chunk.jobs.length - chunk.answered;
      if (spent < deadlineMs * open) return this.after(deadlineMs);
      return this.end({ kind: "deadline", progress: undefined });
    }
    this.charge(progress, wall, cpu);
  }

  /** A job of a chunk of several, by the monitor's answer: its share of the CPU since it began. */
  private charge(progress: Progress, wall: number, cpu: number | undefined): void {
    const { deadlineMs } = this.settings;
    const share = cpu === undefined || wall <= 0 ? 1 : Math.min(1, cpu / wall);
    const jobSpent = progress.elapsedMs * share;
    if (jobSpent >= deadlineMs || progress.elapsedMs >= deadlineMs * WALL_FACTOR) {
      return this.end({ kind: "deadline", progress });
    }
    this.after(deadlineMs - jobSpent);
  }

  /** Wall and main-thread CPU time since the chunk was sent, in ms. */
  private usage(chunk: Chunk): { wall: number; cpu: number | undefined } {
    const wall = performance.now() - chunk.startedAt;
    const now = this.proc.cpuMs();
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
   * child dying as it is asked) askMonitor and the re-run of the culprit (rerunToName) do.
   */
  private graceMs(): number {
    return Math.min(100, Math.max(20, this.settings.deadlineMs / 2));
  }
}
