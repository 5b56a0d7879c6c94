// One job inside a sandbox child: parse the object, run the engine with the compartment's
// expressions as the ExpressionRunner, serialise the result. Never throws: every failure becomes
// an error result for that object only.
import { types } from "node:util";
import { applyPatches, compilePatches } from "../engine.js";
import { resolverFromObjects } from "../reference-resolver.js";
import { copyTree } from "../traverse.js";
import {
  PatchError,
  TO_HOST_KEYWORDS,
  type CompiledPatch,
  type Direction,
  type DirectionKeywords,
  type ExplainEntry,
  type ExpressionRunner,
  type Json,
  type JsonObject,
  type PatchSpec,
  type VClusterInfo,
} from "../types.js";
import {
  compileExpressions,
  type CompiledExpression,
  type CompiledExpressions,
} from "./compile.js";
import { checkResult } from "./json-result.js";
import type { ResolvedReference } from "../reference.js";
import type { ResultLimits, SandboxConfig, SandboxJob, WireError } from "./protocol.js";

export interface LoadedConfig {
  specs: PatchSpec[];
  patches: CompiledPatch[];
  expressions: CompiledExpressions;
  vcluster: VClusterInfo;
  keywords: DirectionKeywords;
}

/** Where the child records what it is doing, for its monitor thread to report (protocol.ts). */
export interface Progress {
  expression(patchIndex: number): void;
  outside(): void;
}

/** One job's outcome in the child; child-main.ts puts the patched object into a message's bytes. */
export type JobResult =
  | {
      ok: true;
      objectJson: string;
      /** objectJson's length in UTF-8. */
      objectBytes: number;
      explain: ExplainEntry[];
      warnings: string[];
      references: ResolvedReference[];
    }
  | { ok: false; error: WireError };

export type LoadOutcome = { ok: true; value: LoadedConfig } | { ok: false; error: WireError };

/** Parses every path and compiles every expression; all problems are reported, naming patches[i]. */
export function loadConfig(config: SandboxConfig): LoadOutcome {
  if (!Array.isArray(config.patches))
    return { ok: false, error: { message: "patches must be a list" } };
  let patches: CompiledPatch[];
  try {
    patches = compilePatches(config.patches);
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
  const keywords = config.keywords ?? TO_HOST_KEYWORDS;
  const compiled = compileExpressions(config.patches, config.vcluster, keywords);
  if (!compiled.ok) {
    const message = compiled.problems
      .map((p) => `patches[${p.patchIndex}].${p.field}: ${p.message}`)
      .join("; ");
    const first = compiled.problems[0]!;
    const path = config.patches[first.patchIndex]?.path;
    return { ok: false, error: { message, patchIndex: first.patchIndex, path } };
  }
  return {
    ok: true,
    value: {
      specs: config.patches,
      patches,
      expressions: compiled.value,
      vcluster: config.vcluster,
      keywords,
    },
  };
}

function referenceObjects(json: string): Json[] {
  const list = parseJson(json, "referenceObjectsJson");
  if (!Array.isArray(list)) throw new Error("referenceObjectsJson must be a JSON array");
  return list as Json[];
}

export function runJob(
  job: SandboxJob,
  config: LoadedConfig | undefined,
  progress: Progress,
  limits: ResultLimits,
): JobResult {
  if (config === undefined)
    return { ok: false, error: { message: "the patch config is not loaded" } };
  try {
    const object = parseJson(job.objectJson, "objectJson");
    if (typeof object !== "object" || object === null || Array.isArray(object)) {
      return { ok: false, error: { message: "objectJson must be a JSON object" } };
    }
    const fns =
      job.direction === "toVirtual" ? config.expressions.toVirtual : config.expressions.toHost;
    const result = applyPatches(
      {
        object: object as JsonObject,
        direction: job.direction,
        changeSet: job.changeSet === true,
        hostObject: optionalJson(job.hostObjectJson, "hostObjectJson"),
        virtualObject: optionalJson(job.virtualObjectJson, "virtualObjectJson"),
        owned: true, // just parsed from the job's JSON
      },
      {
        patches: config.patches,
        vcluster: config.vcluster,
        keywords: config.keywords,
        run: makeRunner(fns, job.direction, progress, limits),
        ownedResults: true, // checkResult's copy
        explain: job.explain === true,
        resolver: job.referenceObjectsJson
          ? resolverFromObjects(referenceObjects(job.referenceObjectsJson))
          : undefined,
      },
    );
    const objectJson = JSON.stringify(result.object);
    const objectBytes = Buffer.byteLength(objectJson, "utf8");
    if (objectBytes > limits.maxObjectBytes) {
      return {
        ok: false,
        error: {
          message: `the patched object is larger than ${limits.maxObjectBytes} bytes as JSON`,
        },
      };
    }
    return {
      ok: true,
      objectJson,
      objectBytes,
      explain: result.explain,
      warnings: result.warnings,
      references: result.references,
    };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}

function parseJson(text: unknown, field: string): Json {
  if (typeof text !== "string") throw new PatchError(`${field} must be a string of JSON`);
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new PatchError(`${field} is not valid JSON: ${(err as Error).message}`);
  }
}

function optionalJson(text: string | undefined, field: string): Json {
  return text === undefined ? null : parseJson(text, field);
}

/**
 * The ExpressionRunner: a private, mutable copy of `value` per call (so `value.sort()` works and
 * cannot touch the object being patched), the engine's frozen context, and a plain-JSON check of
 * the result before the engine sees it, which hands the engine a fresh copy (ownedResults).
 */
export function makeRunner(
  fns: readonly (CompiledExpression | null)[],
  direction: Direction,
  progress: Progress,
  limits: ResultLimits,
): ExpressionRunner {
  return (patchIndex, value, context) => {
    const fn = fns[patchIndex];
    if (fn === null || fn === undefined) {
      throw new Error(`there is no expression for direction ${direction}`);
    }
    const input = copyTree(value);
    const frozenContext = Object.freeze(context);
    let out: unknown;
    progress.expression(patchIndex);
    try {
      out = fn(input, frozenContext);
    } catch (err) {
      // No `cause`: the thrown value is the guest's and may be a Proxy or carry getters.
      // eslint-disable-next-line preserve-caught-error
      throw new Error(`the expression threw ${describeThrown(err)}`);
    } finally {
      progress.outside();
    }
    const checked = checkResult(out, limits);
    if (!checked.ok) throw new Error(`the result is not plain JSON: ${checked.error}`);
    return checked.value;
  };
}

const MAX_MESSAGE = 500;

/** Describes a thrown value without running guest code (no getters, no toString, no proxy traps). */
export function describeThrown(err: unknown): string {
  if (err === null || (typeof err !== "object" && typeof err !== "function")) {
    return typeof err === "symbol" ? "a symbol" : `${typeof err} ${clip(String(err))}`;
  }
  if (types.isProxy(err)) return "a Proxy";
  if (!types.isNativeError(err)) return "a value that is not an Error";
  const message = dataProperty(err, "message");
  const own = dataProperty(err, "name");
  const name = typeof own === "string" ? own : intrinsicErrorName(err);
  return `${clip(name)}: ${clip(typeof message === "string" ? message : "")}`;
}

const ERROR_NAMES = new Map<unknown, string>(
  [
    Error,
    TypeError,
    RangeError,
    ReferenceError,
    SyntaxError,
    EvalError,
    URIError,
    AggregateError,
  ].map((ctor) => [ctor.prototype, ctor.name]),
);

/** lockdown turns `name` on the error prototypes into accessors, so identify the prototype instead. */
function intrinsicErrorName(err: object): string {
  let proto: unknown = err;
  for (let depth = 0; depth < 16 && typeof proto === "object" && proto !== null; depth++) {
    if (types.isProxy(proto)) return "Error";
    proto = Object.getPrototypeOf(proto);
    const name = ERROR_NAMES.get(proto);
    if (name !== undefined) return name;
  }
  return "Error";
}

function dataProperty(object: object | null, key: string): unknown {
  if (object === null || types.isProxy(object)) return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && Object.hasOwn(descriptor, "value")
    ? descriptor.value
    : undefined;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

export function toWireError(err: unknown): WireError {
  if (err instanceof PatchError) {
    const out: WireError = { message: err.message };
    if (err.patchIndex !== undefined) out.patchIndex = err.patchIndex;
    if (err.path !== undefined) out.path = err.path;
    if (err.detail !== err.message) out.detail = err.detail;
    return out;
  }
  return { message: err instanceof Error ? err.message : String(err) };
}
