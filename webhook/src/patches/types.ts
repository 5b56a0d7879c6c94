// The contracts of the Endpoint-sync patch engine (docs/decisions.md EPS-1 to EPS-10; the facts are
// in docs/reference.md#patch-config and the sections after it). The engine is pure: plain JSON in,
// plain JSON out. Expressions are run through an ExpressionRunner, which is a SES compartment
// inside a sandbox child process in production (patches/sandbox/) and a plain function in the unsandboxed
// benchmark baseline.

import type { Json, JsonObject } from "../shared/json.js";

export type { Json, JsonObject };

/** `toHost`: virtual → host, runs `expression`. `toVirtual`: host → virtual, runs `reverseExpression`. */
export type Direction = "toHost" | "toVirtual";

export type ExpressionKeyword = "expression" | "reverseExpression";

/**
 * Which expression keyword runs in each direction for one kind's patches (config/patch-kinds.ts,
 * docs/decisions.md KND-2); null where the kind never syncs that way.
 */
export interface DirectionKeywords {
  toHost: ExpressionKeyword | null;
  toVirtual: ExpressionKeyword | null;
}

/** sync.toHost kinds, Endpoints among them: `expression` virtual → host, `reverseExpression` back. */
export const TO_HOST_KEYWORDS: DirectionKeywords = Object.freeze({
  toHost: "expression",
  toVirtual: "reverseExpression",
});

/** sync.toHost.endpoints.patches[i].reference */
export interface ReferenceSpec {
  apiVersion: string;
  kind: string;
  apiVersionPath?: string;
  kindPath?: string;
  namePath?: string;
  namespacePath?: string;
}

/** sync.toHost.endpoints.patches[i], as written in vcluster.yaml. */
export interface PatchSpec {
  path: string;
  expression?: string;
  reverseExpression?: string;
  reference?: ReferenceSpec;
  labels?: Record<string, never>;
}

/**
 * One parsed path segment. `index` is set for `[N]` / `N` segments that parse as non-negative
 * integers. vCluster resolves such a segment as an array index on arrays and as the key `N` on
 * objects ("`[0]` on an object means key "0""), so an index segment keeps its source text in `key`
 * (e.g. `007`); without it, `String(index)` is the object key.
 */
export type PathSegment =
  | { kind: "key"; key: string; bracketed: boolean; quoted?: boolean }
  | { kind: "index"; index: number; key?: string; bracketed?: boolean }
  | { kind: "wildcard"; bracketed?: boolean };

/** A patch with its paths parsed once, as the engine runs it. */
export interface CompiledPatch {
  index: number;
  spec: PatchSpec;
  segments: PathSegment[];
  ref?: {
    nameSegments?: PathSegment[];
    namespaceSegments?: PathSegment[];
    kindSegments?: PathSegment[];
    apiVersionSegments?: PathSegment[];
  };
}

/** The vCluster a patch runs for (context.vcluster). */
export interface VClusterInfo {
  name: string;
  namespace: string;
  /** The whole vcluster.yaml merged with defaults. */
  config: Json;
  /**
   * Multi-namespace mode (sync.toHost.namespaces.enabled): virtual namespace → host namespace by
   * sync.toHost.namespaces.mappings.byName (exact or one `*` with the same `*` on the host side).
   */
  namespaceMappings?: Record<string, string>;
}

/** What an expression sees as `context`. */
export interface ExpressionContext {
  vcluster: { name: string; namespace: string; config: Json };
  hostObject: Json;
  virtualObject: Json;
  /**
   * The canonical matched path, e.g. `subsets.0.addresses.1.hostname` (docs/decisions.md EPS-4).
   */
  path: string;
}

/**
 * Runs the expression of patch `patchIndex` for the current direction on `value`.
 * Returns the completion value (plain JSON, or undefined). Throws a PatchError on failure.
 */
export type ExpressionRunner = (
  patchIndex: number,
  value: Json,
  context: ExpressionContext,
) => Json | undefined;

/** Resolves a host object back to its virtual name, from bookkeeping annotations of known objects. */
export interface ReferenceResolver {
  hostToVirtual(
    ref: { apiVersion: string; kind: string },
    hostNamespace: string,
    hostName: string,
  ): { namespace: string; name: string } | null;
}

/** One line of `vgate patch --explain`. */
export interface ExplainEntry {
  patchIndex: number;
  path: string;
  /** Canonical matched paths; empty when the patch matched nothing. */
  matched: string[];
  action: "expression" | "reverseExpression" | "drop" | "reference" | "labels" | "skip";
  note?: string;
}

/** What one patch does in the current direction. */
export type PatchMode = ExplainEntry["action"];

/**
 * What a patch decided for one matched value: keep it, replace it or delete it
 * (docs/decisions.md EPS-5). `note` explains a keep or a change for `vgate patch --explain`.
 */
export type Outcome =
  | { kind: "keep"; note?: string }
  | { kind: "set"; value: Json; note?: string }
  | { kind: "delete"; note?: string };

export interface PatchErrorOptions extends ErrorOptions {
  /** The message without its leading words that name the patch (see PatchError.detail). */
  detail?: string;
}

export class PatchError extends Error {
  override readonly name = "PatchError";
  // A private field: the error serialises (JSON, log lines) as it always has.
  readonly #detail: string;
  constructor(
    message: string,
    readonly patchIndex?: number,
    readonly path?: string,
    options?: PatchErrorOptions,
  ) {
    super(message, options);
    this.#detail = options?.detail ?? message;
  }

  /**
   * What went wrong, without the leading `patches[i] at "path": ` or `patches[i] (path): ` that
   * names the patch: for a caller that names the patch itself from patchIndex and path. The
   * message when it names no patch that way.
   */
  get detail(): string {
    return this.#detail;
  }
}
