// What becomes of the jobs of a chunk whose child died (docs/decisions.md EPS-8). A job is blamed
// when the pool knows it was the one running; the other jobs of the chunk are run again, each on
// its own, so that a repeat offender is blamed precisely. A blamed job whose patch the pool could
// not learn (no answer from the monitor, or a child that died at once) while its config has
// several expressions is run once more, alone, before it is settled: the monitor is asked again,
// and the error names the patch when it answers (see rerunToName).
import type { PatchSpec } from "../types.js";
import type { Chunk } from "./child-supervisor.js";
import { settle, type Pending } from "./job-queue.js";
import { STATE_EXPRESSION, STATE_IDLE, STATE_JOB } from "./protocol.js";
import { poolClosed } from "./sandbox-unavailable.js";
import { blame, gaveUp, type Culprit, type Stop, type StopLimits } from "./stop.js";

/** A job re-queued this often (its child died under other jobs each time) fails instead. */
export const MAX_ATTEMPTS = 3;

/** What blame needs to know of the pool. */
export interface BlameContext {
  /** The patches of a loaded config. */
  patches(key: string): readonly PatchSpec[] | undefined;
  limits: StopLimits;
}

/**
 * Settles a dead child's chunk: blames the job that was running (`running`: the chunk was the
 * child's current work) when it is known, and answers the jobs to run again.
 */
export function settleDeadChunk(
  chunk: Chunk,
  why: Stop,
  running: boolean,
  pool: BlameContext,
): Pending[] {
  const open = chunk.jobs.slice(chunk.answered);
  if (why.kind === "closed") {
    for (const p of open) settle(p, { ok: false, error: poolClosed() });
    return [];
  }
  const culprit = running ? culpritOf(chunk, why, pool) : undefined;
  const again: Pending[] = [];
  for (const [i, pending] of open.entries()) {
    if (culprit !== undefined && chunk.answered + i === culprit.job) {
      if (rerunToName(pending, culprit, pool)) again.push(pending);
      else {
        const error = blame(why, culprit, pool.patches(pending.key), pool.limits);
        settle(pending, { ok: false, error });
      }
      continue;
    }
    pending.attempts++;
    // Without a culprit, any open job may have been the cause: each runs again on its own.
    pending.alone ||= culprit === undefined && running;
    if (pending.attempts < MAX_ATTEMPTS) again.push(pending);
    else settle(pending, { ok: false, error: gaveUp(why, MAX_ATTEMPTS) });
  }
  return again;
}

/**
 * The job (index in the chunk), state and patch to blame, when the pool can know them: from the
 * monitor's answer, or, for a child that died at once (V8 aborts at its heap limit) or did not
 * answer, the only open job, and the patch if its config has a single expression for the job's
 * direction.
 */
function culpritOf(chunk: Chunk, why: Stop, pool: BlameContext): Culprit | undefined {
  if (why.kind === "retired") return undefined;
  const p = why.kind === "deadline" || why.kind === "memory" ? why.progress : undefined;
  if (p !== undefined && p.batchId === chunk.id && p.state !== STATE_IDLE) {
    if (p.job >= chunk.answered && p.job < chunk.jobs.length) {
      return { job: p.job, state: p.state, patchIndex: p.patchIndex, answered: true };
    }
  }
  if (chunk.jobs.length - chunk.answered !== 1) return undefined;
  const found = expressions(chunk.jobs[chunk.jobs.length - 1]!, pool);
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
function rerunToName(pending: Pending, culprit: Culprit, pool: BlameContext): boolean {
  if (culprit.answered || culprit.patchIndex >= 0 || pending.reran) return false;
  if (pending.attempts + 1 >= MAX_ATTEMPTS || expressions(pending, pool).length < 2) return false;
  pending.reran = true;
  pending.alone = true;
  pending.attempts++;
  return true;
}

/** The indexes of the patches with an expression for the job's direction. */
function expressions(pending: Pending, pool: BlameContext): number[] {
  const field = pending.job.direction === "toVirtual" ? "reverseExpression" : "expression";
  const patches = pool.patches(pending.key) ?? [];
  return patches.flatMap((p, i) => (typeof p[field] === "string" && p[field] ? [i] : []));
}
