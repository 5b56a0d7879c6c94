// Checks that an expression's result is plain JSON before the engine touches it, and copies it in
// the same walk: the engine gets a fresh tree that no guest holds, so it needs no copy of its own.
// The walk never runs guest code: proxies are refused before any trap could fire and properties
// are read through their descriptors, so a getter is reported, not called.
import { types } from "node:util";
import { setOwn } from "../traverse.js";
import type { Json, JsonObject } from "../types.js";
import { DEFAULT_RESULT_LIMITS, type ResultLimits } from "./protocol.js";

export type CheckedResult = { ok: true; value: Json | undefined } | { ok: false; error: string };

interface Walk {
  limits: ResultLimits;
  nodes: number;
  bytes: number;
  /**
   * Containers on the current path: a repeat is a cycle. Shared (non-cyclic) subtrees are fine.
   * Made at the first container: most results are strings.
   */
  ancestors: Set<object> | undefined;
  /** Where the walk is: keys and indices from the result down; formatted only for an error. */
  at: (string | number)[];
}

class NotJson extends Error {}

/**
 * A top-level `undefined` is allowed (docs/decisions.md EPS-5: it deletes the key); anything
 * JSON.stringify would drop, change or choke on anywhere else is an error naming where it was
 * found. An ok value is a copy: plain objects (Object.prototype, a `__proto__` key kept as an own
 * key) and dense arrays, shared subtrees copied once per place they appear.
 */
export function checkResult(value: unknown, limits = DEFAULT_RESULT_LIMITS): CheckedResult {
  if (value === undefined) return { ok: true, value: undefined };
  // Most results are one string: the walk's checks for it, with no walk.
  if (typeof value === "string" && value.length + 2 <= limits.maxBytes && limits.maxNodes >= 1) {
    return { ok: true, value };
  }
  const walk: Walk = { limits, nodes: 0, bytes: 0, ancestors: undefined, at: [] };
  let copy: Json;
  try {
    copy = visit(value, walk);
  } catch (err) {
    if (err instanceof NotJson) return { ok: false, error: err.message };
    throw err;
  }
  return { ok: true, value: copy };
}

/** `the result`, or `result["a"][0]`: where the walk is. */
function where(walk: Walk): string {
  if (walk.at.length === 0) return "the result";
  let out = "result";
  for (const key of walk.at)
    out += typeof key === "number" ? `[${key}]` : `[${JSON.stringify(key)}]`;
  return out;
}

function count(walk: Walk, bytes: number): void {
  walk.nodes++;
  walk.bytes += bytes;
  if (walk.nodes > walk.limits.maxNodes) {
    throw new NotJson(`the result has more than ${walk.limits.maxNodes} values`);
  }
  if (walk.bytes > walk.limits.maxBytes) {
    throw new NotJson(
      `the result is larger than ${walk.limits.maxBytes} bytes as JSON (at ${where(walk)})`,
    );
  }
}

/** The value's copy; strings, numbers and booleans are their own. */
function visit(value: unknown, walk: Walk): Json {
  switch (typeof value) {
    case "string":
      count(walk, value.length + 2);
      return value;
    case "boolean":
      count(walk, 5);
      return value;
    case "number":
      if (!Number.isFinite(value))
        throw new NotJson(`${where(walk)} is ${String(value)}, which JSON cannot hold`);
      count(walk, 8);
      return value;
    case "object":
      if (value === null) {
        count(walk, 4);
        return null;
      }
      return visitContainer(value, walk);
    case "undefined":
      throw new NotJson(`${where(walk)} is undefined; only a whole result may be undefined`);
    default:
      throw new NotJson(`${where(walk)} is a ${typeof value}, which is not JSON`);
  }
}

function visitContainer(value: object, walk: Walk): Json {
  if (types.isProxy(value)) throw new NotJson(`${where(walk)} is a Proxy, which is not plain JSON`);
  if (walk.at.length >= walk.limits.maxDepth) {
    throw new NotJson(`the result is nested deeper than ${walk.limits.maxDepth} levels`);
  }
  walk.ancestors ??= new Set();
  if (walk.ancestors.has(value))
    throw new NotJson(`${where(walk)} is a cycle, which JSON cannot hold`);
  const proto: unknown = Object.getPrototypeOf(value);
  const array = Array.isArray(value);
  if (array ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
    throw new NotJson(`${where(walk)} is ${describeObject(value)}, not a plain object or array`);
  }
  count(walk, 2);
  walk.ancestors.add(value);
  const copy = array ? visitArray(value as unknown[], walk) : visitObject(value, walk);
  walk.ancestors.delete(value);
  return copy;
}

/** Brand checks only: Object.prototype.toString would read a guest-defined Symbol.toStringTag. */
const BRANDS: [(v: object) => boolean, string][] = [
  [types.isDate, "a Date (use toISOString())"],
  [types.isMap, "a Map"],
  [types.isSet, "a Set"],
  [types.isPromise, "a Promise (expressions are synchronous)"],
  [types.isRegExp, "a RegExp"],
  [types.isBoxedPrimitive, "a boxed primitive"],
  [types.isTypedArray, "a typed array"],
  [types.isNativeError, "an Error"],
];

function describeObject(value: object): string {
  for (const [is, name] of BRANDS) if (is(value)) return name;
  return "an object with a custom prototype";
}

function visitArray(array: unknown[], walk: Walk): Json[] {
  const length = array.length;
  // A sparse `new Array(1e9)` must not be walked index by index.
  if (length > walk.limits.maxNodes) {
    throw new NotJson(`the result has more than ${walk.limits.maxNodes} values`);
  }
  // Own keys come as the indices in order, then "length", then any other string key, then the
  // symbols: exactly length + 1 keys ending with "length" means no hole and nothing extra.
  const own = Reflect.ownKeys(array);
  if (own.length !== length + 1 || own[length] !== "length") {
    throw new NotJson(`${where(walk)} is an array with holes or extra properties`);
  }
  const copy: Json[] = [];
  for (let i = 0; i < length; i++) {
    walk.at.push(i);
    copy.push(visit(dataValue(Reflect.getOwnPropertyDescriptor(array, i), walk), walk));
    walk.at.pop();
  }
  return copy;
}

function visitObject(object: object, walk: Walk): JsonObject {
  const own = Reflect.ownKeys(object);
  // Symbols come last.
  if (own.length > 0 && typeof own[own.length - 1] === "symbol") {
    throw new NotJson(`${where(walk)} has symbol keys, which JSON cannot hold`);
  }
  const copy: JsonObject = {};
  for (const key of own as string[]) {
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
    walk.at.push(key);
    if (descriptor?.enumerable !== true) throw new NotJson(`${where(walk)} is not enumerable`);
    // docs/decisions.md EPS-5 applies to the whole result only; inside, undefined would silently
    // vanish.
    setOwn(copy, key, visit(dataValue(descriptor, walk), walk));
    walk.at.pop();
    walk.bytes += key.length + 3;
  }
  return copy;
}

/** A property's value, read from its descriptor: a getter is reported, never called. */
function dataValue(descriptor: PropertyDescriptor | undefined, walk: Walk): unknown {
  if (descriptor === undefined) throw new NotJson(`${where(walk)} is missing`);
  if (!Object.hasOwn(descriptor, "value"))
    throw new NotJson(`${where(walk)} is a getter or setter, not data`);
  return descriptor.value;
}
