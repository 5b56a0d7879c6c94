// The messages between SandboxPool (main thread) and its workers, and the layout of the shared
// progress block the worker writes so the main thread can tell which job and patch overran.
import type { Direction, ExplainEntry, PatchSpec, VClusterInfo } from "../types.js";
import type { ResolvedReference } from "../reference.js";

/** One object to patch, as the caller hands it to the pool. */
export interface SandboxJob {
  objectJson: string;
  direction: Direction;
  changeSet?: boolean;
  hostObjectJson?: string;
  virtualObjectJson?: string;
  /** Objects from the other side (a JSON array), to resolve references host → virtual. */
  referenceObjectsJson?: string;
  explain?: boolean;
}

export interface SandboxConfig {
  patches: PatchSpec[];
  vcluster: VClusterInfo;
}

export interface SandboxResult {
  objectJson: string;
  explain: ExplainEntry[];
  warnings: string[];
  references: ResolvedReference[];
}

export interface WireError {
  message: string;
  patchIndex?: number;
  path?: string;
}

export type WireResult = ({ ok: true } & SandboxResult) | { ok: false; error: WireError };

/** Result limits the worker enforces on every expression result. */
export interface ResultLimits {
  maxBytes: number;
  maxNodes: number;
  maxDepth: number;
}

export const DEFAULT_RESULT_LIMITS: ResultLimits = {
  maxBytes: 1024 * 1024,
  maxNodes: 100_000,
  maxDepth: 512,
};

export interface WorkerInit {
  progress: SharedArrayBuffer;
  limits: ResultLimits;
}

export type ToWorker =
  | { type: "load"; loadId: number; key: string; config: SandboxConfig }
  | { type: "unload"; key: string }
  | { type: "batch"; batchId: number; jobs: ({ key: string } & SandboxJob)[] };

export type FromWorker =
  | { type: "ready" }
  | { type: "loaded"; loadId: number; error?: WireError }
  | { type: "batch"; batchId: number; results: WireResult[] };

/** Int32 slots of the progress block. */
export const P_STATE = 0;
export const P_BATCH = 1;
export const P_JOB = 2;
export const P_PATCH = 3;
/** Float64 slot (at byte 16): when the current job started, in ms since the epoch. */
export const P_START_F64 = 2;
export const PROGRESS_BYTES = 24;

export const STATE_IDLE = 0;
/** Parsing, engine work, serialising: not inside an expression. */
export const STATE_JOB = 1;
export const STATE_EXPRESSION = 2;
/** The job's result is ready; waiting for microtasks the expressions queued to settle. */
export const STATE_DRAINING = 3;

/** A clock both threads share: performance.now() alone has a per-thread origin. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
