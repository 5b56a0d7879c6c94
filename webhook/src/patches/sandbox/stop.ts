// Why the pool stopped a sandbox child, and what the failed object's error says. Messages name
// the patch when the pool knows it (docs/decisions.md EPS-8), and never carry a child's output.
import { PatchError, type PatchSpec } from "../types.js";
import type { ExitInfo } from "./child-process.js";
import type { ResourceLimits } from "./limits.js";
import { STATE_DRAINING, STATE_EXPRESSION, STATE_JOB, type Progress } from "./protocol.js";

export type Stop =
  | { kind: "deadline"; progress: Progress | undefined }
  | { kind: "memory"; residentBytes: number; progress: Progress | undefined }
  | { kind: "unresponsive" }
  | { kind: "crash"; exit: ExitInfo }
  | { kind: "retired" }
  | { kind: "closed" };

/** The job to blame (its index in its chunk), what it was doing, and in which patch (or -1). */
export interface Culprit {
  job: number;
  state: number;
  patchIndex: number;
  /**
   * The child's monitor said so. Otherwise the pool inferred it: the job was the only one open,
   * and its state and patch are known only when its config has one expression for its direction.
   */
  answered: boolean;
}

export interface StopLimits {
  deadlineMs: number;
  limits: Required<ResourceLimits>;
}

/** The error of the object that was running when its child was stopped. */
export function blame(
  why: Stop,
  culprit: Culprit,
  specs: readonly PatchSpec[] | undefined,
  limits: StopLimits,
): PatchError {
  const { state, patchIndex } = culprit;
  // Outside an expression (parsing, engine work) no patch is to blame.
  const named = patchIndex >= 0 && state !== STATE_JOB;
  const path = named ? specs?.[patchIndex]?.path : undefined;
  const who = named ? `patches[${patchIndex}] (${path ?? "?"}): ` : "";
  const detail = stopReason(why, state, limits);
  return new PatchError(who + detail, named ? patchIndex : undefined, path, { detail });
}

export function stopReason(why: Stop, state: number, { deadlineMs, limits }: StopLimits): string {
  const what = state === STATE_EXPRESSION ? "expression" : "patching";
  switch (why.kind) {
    case "deadline":
      return state === STATE_DRAINING
        ? `asynchronous work left by the expression did not finish within ${deadlineMs}ms`
        : `${what} did not finish within ${deadlineMs}ms`;
    case "memory":
      return `${what} exceeded the sandbox memory limit (${limits.maxResidentMb} MiB resident)`;
    case "crash":
      return isOutOfMemory(why.exit)
        ? `${what} exceeded the sandbox memory limit (${limits.maxOldGenerationSizeMb} MiB heap)`
        : `the sandbox child crashed: ${exitDetail(why.exit, false)}`;
    case "unresponsive":
      return "the sandbox child stopped responding";
    default:
      return "the sandbox child was replaced";
  }
}

/** The error of an object whose children died under it too often. */
export function gaveUp(why: Stop, attempts: number): PatchError {
  const reason = why.kind === "crash" ? "crashed" : "was stopped";
  return new PatchError(`the sandbox child ${reason} ${attempts} times while this object waited`);
}

export function protocolError(what: string): ExitInfo {
  return { code: null, signal: null, stderr: "", error: new Error(`protocol error: ${what}`) };
}

/** V8 reports a heap overrun on stderr before it aborts the child. */
function isOutOfMemory(exit: ExitInfo): boolean {
  return /out of memory|heap limit/i.test(exit.stderr);
}

/** Why a child ended, for a message: never the child's output, except `withStderr` at startup. */
export function exitDetail(exit: ExitInfo, withStderr: boolean): string {
  if (exit.error !== undefined) return exit.error.message;
  const how = exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
  if (!withStderr) return how;
  const last = exit.stderr.trim().split("\n").pop()?.slice(0, 200);
  return last ? `${how}: ${last}` : how;
}
