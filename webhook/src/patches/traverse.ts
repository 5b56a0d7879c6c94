// Resolving a parsed path against plain JSON (docs/reference.md#patch-path-resolution with
// docs/decisions.md EPS-7). Differences from vCluster, on purpose: a missing leaf is never created
// (docs/reference.md#patch-path-resolution, the reverted "set patches"), an out-of-range or
// non-integer index skips that match only instead of aborting the remaining wildcard matches
// (docs/reference.md#patch-path-edge-cases item 5), and a bare `*` is a wildcard in every position
// (docs/decisions.md EPS-7). Object keys are read with Object.hasOwn so a `__proto__` or
// `constructor` key is only ever an own key.

import { indexKey, matchedPathPart } from "./path.js";
import type { Json, JsonObject, PathSegment } from "./types.js";
import { isObject } from "../shared/json.js";

/** One matched location: `parent[key]` exists. */
export interface Match {
  parent: JsonObject | Json[];
  key: string | number;
  /**
   * `parent[key]` when the walk found it (null for a missing value): a match's value changes only
   * through the match itself, as the matches of one path are distinct places at one depth.
   */
  value: Json;
  /** formatMatchedPath of the keys from the root, built along the walk: parents share their prefix. */
  path: string;
}

/** The own value of `key`, or undefined; never a prototype member. */
export function ownValue(object: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Every location `segments` names in `root`, in document order (arrays by index, objects in key
 * order). The empty path names the root itself, which has no parent: callers handle it.
 * A depth-first walk: this runs for every patch of every object, so it allocates nothing but the
 * matches and their paths.
 */
export function findMatches(root: Json, segments: readonly PathSegment[]): Match[] {
  const out: Match[] = [];
  if (segments.length > 0) walk(root, { segments, out }, 0, "");
  return out;
}

/** What stays the same through one walk. */
interface Walk {
  segments: readonly PathSegment[];
  out: Match[];
}

function walk(value: Json, w: Walk, depth: number, path: string): void {
  const segment = w.segments[depth]!;
  if (Array.isArray(value)) {
    if (segment.kind === "wildcard") {
      for (let i = 0; i < value.length; i++) visit(value, i, value[i], w, depth, path);
    } else if (segment.kind === "index" && segment.index < value.length) {
      // A key segment on an array is a non-integer index: no match
      // (docs/reference.md#patch-path-resolution).
      visit(value, segment.index, value[segment.index], w, depth, path);
    }
  } else if (isObject(value)) {
    if (segment.kind === "wildcard") {
      for (const k of Object.keys(value)) visit(value, k, value[k], w, depth, path);
    } else {
      const key = segment.kind === "index" ? indexKey(segment) : segment.key;
      if (Object.hasOwn(value, key)) visit(value, key, value[key], w, depth, path);
    }
  }
  // docs/reference.md#patch-path-resolution: scalars and null have no children.
}

function visit(
  parent: JsonObject | Json[],
  key: string | number,
  child: Json | undefined,
  w: Walk,
  depth: number,
  prefix: string,
): void {
  const part = matchedPathPart(key);
  const path = depth === 0 ? part : `${prefix}.${part}`;
  if (depth === w.segments.length - 1) w.out.push({ parent, key, value: child ?? null, path });
  else walk(child ?? null, w, depth + 1, path);
}

export function readMatch(match: Match): Json {
  if (Array.isArray(match.parent)) return match.parent[match.key as number] ?? null;
  return ownValue(match.parent, match.key as string) ?? null;
}

/** Replaces the matched value. Defines the property so a `__proto__` key stays a plain key. */
export function writeMatch(match: Match, value: Json): void {
  if (Array.isArray(match.parent)) {
    match.parent[match.key as number] = value;
    return;
  }
  setOwn(match.parent, match.key as string, value);
}

/** Removes the matched key from its object parent. Array elements are never removed. */
export function deleteMatch(match: Match): void {
  if (!Array.isArray(match.parent)) Reflect.deleteProperty(match.parent, match.key);
}

export function setOwn(object: JsonObject, key: string, value: Json): void {
  // Plain assignment is much faster; only "__proto__" would set the prototype instead of a key.
  if (key !== "__proto__") {
    object[key] = value;
    return;
  }
  Object.defineProperty(object, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/**
 * A deep, mutable copy of the engine's own tree (what JSON.parse made, checked results, the
 * translators' output): plain JSON with no cycle, so unlike copyJson it needs no type or cycle
 * checks. Never for values from elsewhere.
 */
export function copyTree(value: Json): Json {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const array: Json[] = [];
    for (let i = 0; i < value.length; i++) array.push(copyTree(value[i]!));
    return array;
  }
  const object: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(object, key, copyTree(value[key]!));
  return object;
}

/**
 * A deep copy of untrusted JSON-like data with JSON.stringify's rules (undefined and functions
 * are left out of objects and become null in arrays, non-finite numbers become null) and a
 * `__proto__` key kept as a plain own key. Throws on what JSON cannot hold: bigints and cycles.
 * With `freeze`, the copy is frozen all the way down.
 */
export function copyJson(value: unknown, freeze = false): Json {
  // Most values an expression sees or returns are strings: no walk, no Set.
  if (typeof value === "string" || typeof value === "boolean") return value;
  return copyInner(value, new Set(), freeze) ?? null;
}

function copyInner(value: unknown, seen: Set<object>, freeze: boolean): Json | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      throw new TypeError("a bigint is not JSON");
    case "object":
      return value === null ? null : copyContainer(value, seen, freeze);
    default:
      return undefined;
  }
}

function copyContainer(value: object, seen: Set<object>, freeze: boolean): Json {
  if (seen.has(value)) throw new TypeError("a cyclic value is not JSON");
  seen.add(value);
  let out: Json;
  if (Array.isArray(value)) {
    out = value.map((item: unknown) => copyInner(item, seen, freeze) ?? null);
  } else {
    const object: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      const copied = copyInner(item, seen, freeze);
      if (copied !== undefined) setOwn(object, key, copied);
    }
    out = object;
  }
  seen.delete(value);
  return freeze ? (Object.freeze(out) as Json) : out;
}
