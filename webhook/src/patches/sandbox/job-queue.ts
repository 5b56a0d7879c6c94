// The pool's queue of jobs waiting for an idle child, and how a child's next message is cut from
// it (docs/decisions.md EPS-8). The jobs of one apply or applyBatch call may share a message (a
// chunk), which amortises the round trip; jobs of different calls never do, so one object's
// expression can delay another's only by occupying a child.
import type { PatchError } from "../types.js";
import type { SandboxJob } from "./protocol.js";
import type { BatchResult } from "./wire-result.js";

/** A chunk stops growing at this many bytes of input, so a child's answer stays small. */
export const CHUNK_BYTES = 1024 * 1024;

/** Where the results of one apply or applyBatch call go. */
export interface Call {
  settle(index: number, result: BatchResult): void;
}

/** A job waiting for a child, or running in one. */
export interface Pending {
  key: string;
  job: SandboxJob;
  /** Its call, and its place there: only jobs of one call share a chunk. */
  call: Call;
  index: number;
  attempts: number;
  /** Run on its own: it was in a chunk whose child died, and it may have been the cause. */
  alone: boolean;
  /** Run again to learn which patch killed its child (see chunk-blame.ts rerunToName); once at most. */
  reran: boolean;
}

export function settle(pending: Pending, result: BatchResult): void {
  pending.call.settle(pending.index, result);
}

export class JobQueue {
  private jobs: Pending[] = [];

  get length(): number {
    return this.jobs.length;
  }

  add(key: string, job: SandboxJob, call: Call, index: number): void {
    this.jobs.push({ key, job, call, index, attempts: 0, alone: false, reran: false });
  }

  /** Jobs of a dead child's chunk, run again before anything that waits. */
  requeue(jobs: Pending[]): void {
    this.jobs.unshift(...jobs);
  }

  /** Empties the queue, failing every job with `error`. */
  failAll(error: PatchError): void {
    const jobs = this.jobs;
    this.jobs = [];
    for (const p of jobs) settle(p, { ok: false, error });
  }

  /**
   * The queue's head, with the following jobs of the same call, shared out over `idle` children,
   * `maxJobs` at most. Call only when the queue is not empty.
   */
  takeChunk(idle: number, maxJobs: number): Pending[] {
    const head = this.jobs[0]!;
    let run = 1;
    if (!head.alone) {
      while (run < this.jobs.length) {
        const next = this.jobs[run]!;
        if (next.call !== head.call || next.alone) break;
        run++;
      }
    }
    const wanted = Math.min(maxJobs, Math.ceil(run / idle));
    let take = 1;
    let bytes = jobBytes(head.job);
    while (take < wanted) {
      bytes += jobBytes(this.jobs[take]!.job);
      if (bytes > CHUNK_BYTES) break;
      take++;
    }
    return this.jobs.splice(0, take);
  }
}

function jobBytes(job: SandboxJob): number {
  return (
    job.objectJson.length +
    (job.hostObjectJson?.length ?? 0) +
    (job.virtualObjectJson?.length ?? 0) +
    (job.referenceObjectsJson?.length ?? 0)
  );
}
