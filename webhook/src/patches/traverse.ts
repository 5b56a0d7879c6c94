// Resolving a parsed path against plain JSON (spec b.2/b.3 with decision 7). Differences from
// vCluster, on purpose: a missing leaf is never created (b.3, the reverted "set patches"), an
// out-of-range or non-integer index skips that match only instead of aborting the remaining
// wildcard matches (b.6 #5), and a bare `*` is a wildcard in every position (b.5). Object keys are
// read with Object.hasOwn so a `__proto__` or `constructor` key is only ever an own key.

import { indexKey } from "./path.js";
import type { Json, JsonObject, PathSegment } from "./types.js";

/** One matched location: `parent[key]` exists and is reached through `keys` from the root. */
export interface Match {
  parent: JsonObject | Json[];
  key: string | number;
  keys: (string | number)[];
}

interface Cursor {
  value: Json;
  keys: (string | number)[];
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The own value of `key`, or undefined; never a prototype member. */
export function ownValue(object: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Every location `segments` names in `root`, in document order (arrays by index, objects in key
 * order). The empty path names the root itself, which has no parent: callers handle it.
 */
export function findMatches(root: Json, segments: readonly PathSegment[]): Match[] {
  if (segments.length === 0) return [];
  let cursors: Cursor[] = [{ value: root, keys: [] }];
  for (const segment of segments.slice(0, -1)) {
    cursors = cursors.flatMap((cursor) => children(cursor, segment));
    if (cursors.length === 0) return [];
  }
  const last = segments[segments.length - 1]!;
  return cursors.flatMap((cursor) => leaves(cursor, last));
}

function children(cursor: Cursor, segment: PathSegment): Cursor[] {
  return leaves(cursor, segment).map((m) => ({ value: readMatch(m), keys: m.keys }));
}

function leaves(cursor: Cursor, segment: PathSegment): Match[] {
  const { value, keys } = cursor;
  if (Array.isArray(value)) return arrayLeaves(value, keys, segment);
  if (isJsonObject(value)) return objectLeaves(value, keys, segment);
  // b.2: scalars and null have no children.
  return [];
}

function arrayLeaves(array: Json[], keys: (string | number)[], segment: PathSegment): Match[] {
  if (segment.kind === "wildcard") {
    return array.map((_, i) => ({ parent: array, key: i, keys: [...keys, i] }));
  }
  // A key segment on an array is a non-integer index: no match (b.2).
  if (segment.kind !== "index" || segment.index >= array.length) return [];
  return [{ parent: array, key: segment.index, keys: [...keys, segment.index] }];
}

function objectLeaves(
  object: JsonObject,
  keys: (string | number)[],
  segment: PathSegment,
): Match[] {
  if (segment.kind === "wildcard") {
    return Object.keys(object).map((k) => ({ parent: object, key: k, keys: [...keys, k] }));
  }
  const key = segment.kind === "index" ? indexKey(segment) : segment.key;
  if (!Object.hasOwn(object, key)) return [];
  return [{ parent: object, key, keys: [...keys, key] }];
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
  Object.defineProperty(object, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/**
 * A deep copy of untrusted JSON-like data with JSON.stringify's rules (undefined and functions
 * are left out of objects and become null in arrays, non-finite numbers become null) and a
 * `__proto__` key kept as a plain own key. Throws on what JSON cannot hold: bigints and cycles.
 * With `freeze`, the copy is frozen all the way down.
 */
export function copyJson(value: unknown, freeze = false): Json {
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
