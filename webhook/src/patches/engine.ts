// The translate-patch engine (docs/reference.md#patch-change-sets and the sections after it;
// docs/decisions.md EPS-4 to EPS-6): plain JSON in, plain JSON out, no I/O. Patches run in list
// order and each sees the previous one's output (docs/reference.md#patch-change-sets). Expressions
// run through the injected ExpressionRunner; reference and labels patches delegate to their
// modules.

import { applyLabelsPatch } from "./labels-patch.js";
import { canonicalPath, parsePath, PathSyntaxError } from "./path.js";
import { applyReferencePatch, type ResolvedReference } from "./reference.js";
import { copyJson, deleteMatch, findMatches, writeMatch, type Match } from "./traverse.js";
import {
  PatchError,
  type CompiledPatch,
  TO_HOST_KEYWORDS,
  type Direction,
  type DirectionKeywords,
  type ExplainEntry,
  type ExpressionContext,
  type ExpressionRunner,
  type Json,
  type JsonObject,
  type Outcome,
  type PatchMode,
  type PatchSpec,
  type PathSegment,
  type ReferenceResolver,
  type VClusterInfo,
} from "./types.js";
import { isObject } from "../shared/json.js";

// The engine's types live in types.ts, so the translators the engine calls can use them without
// importing the engine back. Re-exported for the callers that know them from here.
export type { CompiledPatch, Outcome, PatchMode } from "./types.js";

export interface ApplyInput {
  object: JsonObject;
  direction: Direction;
  /** Update change set: null leaves are deletions and pass through (docs/decisions.md EPS-5). */
  changeSet?: boolean;
  hostObject: Json;
  virtualObject: Json;
  /**
   * The caller hands `object` over (it was just parsed from JSON and nobody else holds it), so the
   * engine patches it in place instead of copying it first.
   */
  owned?: boolean;
}

export interface ApplyOptions {
  patches: CompiledPatch[];
  vcluster: VClusterInfo;
  run: ExpressionRunner;
  resolver?: ReferenceResolver;
  explain?: boolean;
  /** Which keyword runs in which direction for the kind patched (default: TO_HOST_KEYWORDS). */
  keywords?: DirectionKeywords;
  /**
   * `run` returns checked plain JSON that it made for this call and nobody else holds (the
   * sandbox's runner copies in its check, sandbox/json-result.ts), so the engine keeps it as it is
   * instead of copying it again. Without it, the engine copies every result.
   */
  ownedResults?: boolean;
}

export interface ApplyResult {
  object: JsonObject;
  /** One entry per patch when `explain` is set, else empty. */
  explain: ExplainEntry[];
  warnings: string[];
  /** Every reference a reference patch rewrote, so the sync controller can copy or import it. */
  references: ResolvedReference[];
}

type RefPathField = "namePath" | "namespacePath" | "kindPath" | "apiVersionPath";

/** Parses every path; a syntax error names `patches[i]` and the offending field. */
export function compilePatches(specs: PatchSpec[]): CompiledPatch[] {
  return specs.map((spec, index) => compilePatch(spec, index));
}

function compilePatch(spec: PatchSpec, index: number): CompiledPatch {
  const segments = parseField(spec.path, index, "path");
  const compiled: CompiledPatch = { index, spec, segments };
  const reference = spec.reference;
  if (reference === undefined || reference === null) return compiled;
  const segmentsOf = (field: RefPathField): PathSegment[] | undefined => {
    const text = reference[field];
    // `omitempty` strings: "" is the same as absent (docs/reference.md#patch-config).
    return text === undefined || text === "" ? undefined : parseField(text, index, field);
  };
  compiled.ref = {
    nameSegments: segmentsOf("namePath"),
    namespaceSegments: segmentsOf("namespacePath"),
    kindSegments: segmentsOf("kindPath"),
    apiVersionSegments: segmentsOf("apiVersionPath"),
  };
  return compiled;
}

function parseField(text: unknown, index: number, field: string): PathSegment[] {
  const where =
    field === "path" ? `patches[${index}].path` : `patches[${index}].reference.${field}`;
  if (typeof text !== "string") throw new PatchError(`${where} must be a string`, index);
  try {
    return parsePath(text);
  } catch (err) {
    if (!(err instanceof PathSyntaxError)) throw err;
    throw new PatchError(`${where}: ${err.message}`, index, text, { cause: err });
  }
}

/** The normalised path of a compiled patch, for duplicate detection. */
export function compiledPathKey(patch: CompiledPatch): string {
  return canonicalPath(patch.segments);
}

/**
 * Which action a patch takes when syncing in `direction` (docs/decisions.md EPS-6 and KND-2,
 * docs/reference.md#patch-directions): the keyword `keywords` names for the direction runs; a
 * patch with only the other direction's keyword drops the field; a kind that never syncs this way
 * (a null keyword) skips every expression patch.
 */
export function patchMode(
  spec: PatchSpec,
  direction: Direction,
  keywords: DirectionKeywords = TO_HOST_KEYWORDS,
): PatchMode {
  if (spec.reference !== undefined && spec.reference !== null) return "reference";
  if (spec.labels !== undefined && spec.labels !== null) return "labels";
  const keyword = keywords[direction];
  if (keyword === null) return "skip";
  const other = keywords[direction === "toHost" ? "toVirtual" : "toHost"];
  const forward = spec[keyword];
  const backward = other === null || other === keyword ? undefined : spec[other];
  if (typeof forward === "string" && forward !== "") return keyword;
  // "If you omit expression, vCluster drops that field from the patch when syncing to the
  // control plane cluster" (Patching docs).
  return typeof backward === "string" && backward !== "" ? "drop" : "skip";
}

/** Everything one applyPatches call shares between its patches. */
interface Run {
  input: ApplyInput;
  options: ApplyOptions;
  object: JsonObject;
  explain: ExplainEntry[];
  warnings: string[];
  references: ResolvedReference[];
  /** Built once per applyPatches call and shared by every expression's context. */
  frozen?: { host: Json; virtual: Json; config: Json; vcluster: ExpressionContext["vcluster"] };
}

/** Applies the patches to a deep copy of `input.object` (unless `owned`); the input is never mutated. */
export function applyPatches(input: ApplyInput, options: ApplyOptions): ApplyResult {
  if (!isObject(input.object)) throw new PatchError("the object to patch must be an object");
  const run: Run = {
    input,
    options,
    object: input.owned ? input.object : (copyJson(input.object) as JsonObject),
    explain: [],
    warnings: [],
    references: [],
  };
  for (const patch of options.patches) applyPatch(run, patch);
  return {
    object: run.object,
    explain: options.explain === true ? run.explain : [],
    warnings: run.warnings,
    references: run.references,
  };
}

function applyPatch(run: Run, patch: CompiledPatch): void {
  const mode = patchMode(patch.spec, run.input.direction, run.options.keywords);
  if (patch.segments.length === 0) {
    applyToRoot(run, patch, mode);
    return;
  }
  const matches = findMatches(run.object, patch.segments);
  if (matches.length === 0) {
    record(run, patch, "skip", [], "path not found");
    return;
  }
  // The notes are for explain only.
  const notes = run.options.explain === true ? new Set<string>() : undefined;
  for (const match of matches) {
    const outcome = decide(run, patch, mode, match.value, match.path, false);
    applyOutcome(patch, mode, match, outcome);
    if (outcome.note !== undefined) notes?.add(outcome.note);
  }
  if (notes !== undefined) {
    const matched = matches.map((m) => m.path);
    record(run, patch, mode, matched, notes.size > 0 ? [...notes].join("; ") : undefined);
  }
}

function applyToRoot(run: Run, patch: CompiledPatch, mode: PatchMode): void {
  const outcome = decide(run, patch, mode, run.object, "", true);
  if (outcome.kind === "delete" && mode === "drop") {
    // The change set itself is dropped: nothing of it reaches the other side.
    run.object = {};
  } else if (outcome.kind !== "keep") {
    if (outcome.kind === "delete" || !isObject(outcome.value)) {
      throw patchError(patch, "", `the result for the empty path must be an object`);
    }
    run.object = outcome.value;
  }
  record(run, patch, mode, [""], outcome.note);
}

/**
 * docs/decisions.md EPS-5: null/undefined deletes an object key; an array element cannot be
 * deleted.
 */
function applyOutcome(patch: CompiledPatch, mode: PatchMode, match: Match, outcome: Outcome): void {
  if (outcome.kind === "keep") return;
  if (outcome.kind === "set") {
    writeMatch(match, outcome.value);
    return;
  }
  if (Array.isArray(match.parent)) {
    const why =
      mode === "drop"
        ? "there is no expression for this direction, so the field would be dropped, but an array element cannot be removed"
        : "the result is null or undefined, but an array element cannot be deleted";
    throw patchError(patch, match.path, why);
  }
  deleteMatch(match);
}

function decide(
  run: Run,
  patch: CompiledPatch,
  mode: PatchMode,
  value: Json,
  /** The matched path (formatMatchedPath); "" for the whole object. */
  path: string,
  root: boolean,
): Outcome {
  if (mode === "skip") return { kind: "keep", note: "no expression for either direction" };
  if (mode === "drop") return { kind: "delete", note: "no expression for this direction" };
  // docs/reference.md#patch-gotchas item 1: a null leaf of an update change set is a deletion; pass
  // it through unchanged.
  if (run.input.changeSet === true && value === null && !root) {
    return { kind: "keep", note: "deletion passed through" };
  }
  if (mode === "expression" || mode === "reverseExpression") {
    return runExpression(run, patch, value, path);
  }
  if (mode === "reference")
    return delegate(run, patch, path, () => referenceOutcome(run, patch, value, path));
  if (mode === "labels") {
    return delegate(run, patch, path, () =>
      applyLabelsPatch({
        value,
        direction: run.input.direction,
        vcluster: run.options.vcluster,
        virtualObject: run.input.virtualObject,
      }),
    );
  }
  throw patchError(patch, path, `unknown patch mode ${String(mode)}`);
}

function referenceOutcome(run: Run, patch: CompiledPatch, value: Json, path: string) {
  return applyReferencePatch({
    patch,
    value,
    path,
    direction: run.input.direction,
    vcluster: run.options.vcluster,
    resolver: run.options.resolver,
    hostObject: run.input.hostObject,
    virtualObject: run.input.virtualObject,
  });
}

/** Runs a reference or labels translator, collecting its warnings and naming it in errors. */
function delegate(
  run: Run,
  patch: CompiledPatch,
  path: string,
  translate: () => Outcome & { warning?: string; reference?: ResolvedReference },
): Outcome {
  let result: Outcome & { warning?: string; reference?: ResolvedReference };
  try {
    result = translate();
  } catch (err) {
    throw wrapError(err, patch, path);
  }
  if (result.warning !== undefined) {
    run.warnings.push(`patches[${patch.index}] at ${quotePath(path)}: ${result.warning}`);
  }
  if (result.reference !== undefined) run.references.push(result.reference);
  if (result.kind === "set") return { kind: "set", value: result.value, note: result.note };
  return result.kind === "delete"
    ? { kind: "delete", note: result.note }
    : { kind: "keep", note: result.note };
}

function runExpression(run: Run, patch: CompiledPatch, value: Json, path: string): Outcome {
  let result: unknown;
  try {
    result = run.options.run(patch.index, value, contextFor(run, path));
  } catch (err) {
    throw wrapError(err, patch, path);
  }
  if (result === null || result === undefined) return { kind: "delete" };
  if (run.options.ownedResults === true) return { kind: "set", value: result as Json };
  try {
    return { kind: "set", value: copyJson(result) };
  } catch (err) {
    throw patchError(patch, path, `the result is not JSON: ${messageOf(err)}`, err);
  }
}

/**
 * The expression's `context` (docs/reference.md#patch-expression-context): frozen copies, made once
 * per call, so an expression cannot reach the inputs.
 */
function contextFor(run: Run, path: string): ExpressionContext {
  if (!run.frozen) {
    const { name, namespace } = run.options.vcluster;
    const config = copyJson(run.options.vcluster.config, true);
    run.frozen = {
      host: copyJson(run.input.hostObject, true),
      virtual: copyJson(run.input.virtualObject, true),
      config,
      vcluster: Object.freeze({ name, namespace, config }),
    };
  }
  return {
    vcluster: run.frozen.vcluster,
    hostObject: run.frozen.host,
    virtualObject: run.frozen.virtual,
    path,
  };
}

function record(
  run: Run,
  patch: CompiledPatch,
  action: PatchMode,
  matched: string[],
  note: string | undefined,
): void {
  if (run.options.explain !== true) return;
  const entry: ExplainEntry = { patchIndex: patch.index, path: patch.spec.path, matched, action };
  if (note !== undefined) entry.note = note;
  run.explain.push(entry);
}

function quotePath(path: string): string {
  return path === "" ? "the whole object" : JSON.stringify(path);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function patchError(
  patch: CompiledPatch,
  path: string,
  message: string,
  cause?: unknown,
): PatchError {
  const text = `patches[${patch.index}] at ${quotePath(path)}: ${message}`;
  // The whole object's errors (`at the whole object`) have always been quoted whole where a
  // caller names the patch itself (sync/controller/reconcile.ts); issue 24 changes no message.
  const detail = path === "" ? text : message;
  return new PatchError(
    text,
    patch.index,
    path,
    cause === undefined ? { detail } : { cause, detail },
  );
}

/** Errors from expressions and translators become PatchErrors naming the patch and the path. */
function wrapError(err: unknown, patch: CompiledPatch, path: string): PatchError {
  if (err instanceof PatchError && err.patchIndex === patch.index && err.path === path) return err;
  return patchError(patch, path, messageOf(err), err);
}
