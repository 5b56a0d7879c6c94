// The messages between SandboxPool (the server process) and its sandbox children, and the layout
// of the progress record a child's monitor thread reports (docs/decisions.md EPS-8). Messages
// travel as frames (frames.ts); a child's messages are untrusted and checked before use.
import type {
  Direction,
  DirectionKeywords,
  ExplainEntry,
  PatchSpec,
  VClusterInfo,
} from "../types.js";
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
  /** The keyword each direction runs for the kind patched; absent: sync.toHost's (Endpoints). */
  keywords?: DirectionKeywords;
}

export interface SandboxResult {
  objectJson: string;
  explain: ExplainEntry[];
  warnings: string[];
  references: ResolvedReference[];
}

/**
 * A result as a child sends it. The patched objects of one `results` message travel together as
 * UTF-8 JSON in its `bytes`: an ok result's object is the bytes from where the previous ok
 * result's ended up to its `end`. The server receives them as a view on the frame it read,
 * outside the V8 heap, and decodes one only when a caller reads `objectJson` (wire-result.ts): a
 * string of every patched object would be copied by each scavenge that finds it alive, and that
 * was half of the server's CPU in `make bench`. One buffer per message, not one per object: a
 * Buffer costs V8's serializer a callback each way, which was a third of a small object's time.
 * Empty lists are left out.
 */
export interface WireSandboxResult {
  ok: true;
  end: number;
  explain?: ExplainEntry[];
  warnings?: string[];
  references?: ResolvedReference[];
}

export interface WireError {
  message: string;
  patchIndex?: number;
  path?: string;
  /** PatchError.detail, when it is not the message. */
  detail?: string;
}

export type WireResult = WireSandboxResult | { ok: false; error: WireError };

/** Limits a child enforces on every expression result and on the patched object. */
export interface ResultLimits {
  maxBytes: number;
  maxNodes: number;
  maxDepth: number;
  /**
   * The patched object as JSON. Kubernetes refuses larger requests (3 MiB), and the limit keeps
   * what a child sends back, and so the server's memory, bounded whatever an expression returns.
   */
  maxObjectBytes: number;
}

export const DEFAULT_RESULT_LIMITS: ResultLimits = {
  maxBytes: 1024 * 1024,
  maxNodes: 100_000,
  maxDepth: 512,
  maxObjectBytes: 3 * 1024 * 1024,
};

export type ToChild =
  | { type: "init"; limits: ResultLimits }
  | { type: "load"; loadId: number; key: string; config: SandboxConfig }
  | { type: "unload"; key: string }
  /** Jobs of one config (the jobs of one applyBatch call, or one apply). */
  | { type: "batch"; batchId: number; key: string; jobs: readonly SandboxJob[] };

export type FromChild =
  | { type: "ready" }
  | { type: "loaded"; loadId: number; error?: WireError }
  /**
   * Results of `batch` jobs `first`… in order; a batch's results may come in several messages,
   * the last with `done`. `heapUsed` (bytes, after the batch) lets the pool retire a child whose
   * heap an expression left full.
   */
  | {
      type: "results";
      batchId: number;
      first: number;
      results: WireResult[];
      /** The patched objects of the ok results, one after the other (WireSandboxResult). */
      bytes: Uint8Array;
      done: boolean;
      heapUsed: number;
    };

/** Int32 slots of the progress record (the child's main thread writes, its monitor reads). */
export const P_STATE = 0;
export const P_BATCH = 1;
export const P_JOB = 2;
export const P_PATCH = 3;
/** Float64 slot (at byte 16): when the current job started, in nowMs(). */
export const P_START_F64 = 2;
export const PROGRESS_BYTES = 24;
/** The monitor's answer: the four Int32 slots, then a Float64: milliseconds since the job started. */
export const ANSWER_BYTES = 24;

export const STATE_IDLE = 0;
/** Parsing, engine work, serialising: not inside an expression. */
export const STATE_JOB = 1;
export const STATE_EXPRESSION = 2;
/** The job's result is ready; waiting for microtasks the expressions queued to settle. */
export const STATE_DRAINING = 3;

/** Where a child was, as its monitor answered. */
export interface Progress {
  state: number;
  batchId: number;
  job: number;
  patchIndex: number;
  elapsedMs: number;
}

/** A clock both threads of a child share: performance.now() alone has a per-thread origin. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Decodes a monitor answer; undefined when it is not one. */
export function decodeAnswer(bytes: Buffer): Progress | undefined {
  if (bytes.length !== ANSWER_BYTES) return undefined;
  const elapsedMs = bytes.readDoubleLE(16);
  if (!Number.isFinite(elapsedMs)) return undefined;
  return {
    state: bytes.readInt32LE(0),
    batchId: bytes.readInt32LE(4),
    job: bytes.readInt32LE(8),
    patchIndex: bytes.readInt32LE(12),
    elapsedMs,
  };
}
