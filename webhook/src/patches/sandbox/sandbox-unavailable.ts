// The sandbox pool's own failures, as opposed to one object's: the pool is closed, or its children
// fail to start. Callers tell them apart by type (isSandboxUnavailable), as Go code does with
// errors.Is, never by message; the messages are what users have always read.
import { PatchError } from "../types.js";

/** Why the pool cannot run a job at all. */
export type SandboxUnavailableReason = "Closed" | "ChildrenFailToStart";

/** A job failed because the pool cannot run jobs, whatever the job. Still a PatchError. */
export class SandboxUnavailableError extends PatchError {
  constructor(
    readonly reason: SandboxUnavailableReason,
    message: string,
  ) {
    super(message);
  }
}

/** The pool was closed (SandboxPool.close). */
export function poolClosed(): SandboxUnavailableError {
  return new SandboxUnavailableError("Closed", "the sandbox pool is closed");
}

/** Children died before they were ready too often in a row; `detail` says how the last one did. */
export function childrenFailToStart(detail: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    "ChildrenFailToStart",
    `sandbox children fail to start: ${detail}`,
  );
}

/** Whether `err` is the pool's own failure (closed, or its children fail to start). */
export function isSandboxUnavailable(err: unknown): err is SandboxUnavailableError {
  return err instanceof SandboxUnavailableError;
}
