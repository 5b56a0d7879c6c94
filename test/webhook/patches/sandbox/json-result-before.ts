// The result check as it was before it made the copy itself (issue 26): a walk that only checks,
// then the engine's copyJson. json-result.test.ts holds the new walk to this behaviour on hostile
// values. A frozen copy of the old code; do not change it with the new one.
import { types } from "node:util";
import {
  DEFAULT_RESULT_LIMITS,
  type ResultLimits,
} from "../../../../webhook/src/patches/sandbox/protocol.js";
import { copyJson } from "../../../../webhook/src/patches/traverse.js";
import type { Json } from "../../../../webhook/src/patches/types.js";

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
 * found.
 */
export function checkThenCopy(value: unknown, limits = DEFAULT_RESULT_LIMITS): CheckedResult {
  const checked = checkResult(value, limits);
  if (!checked.ok || checked.value === undefined) return checked;
  return { ok: true, value: copyJson(checked.value) };
}

function checkResult(value: unknown, limits: ResultLimits): CheckedResult {
  if (value === undefined) return { ok: true, value: undefined };
  const walk: Walk = { limits, nodes: 0, bytes: 0, ancestors: undefined, at: [] };
  try {
    visit(value, walk);
  } catch (err) {
    if (err instanceof NotJson) return { ok: false, error: err.message };
    throw err;
  }
  return { ok: true, value: value as Json };
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

function visit(value: unknown, walk: Walk): void {
  switch (typeof value) {
    case "string":
      return count(walk, value.length + 2);
    case "boolean":
      return count(walk, 5);
    case "number":
      if (!Number.isFinite(value))
        throw new NotJson(`${where(walk)} is ${String(value)}, which JSON cannot hold`);
      return count(walk, 8);
    case "object":
      if (value === null) return count(walk, 4);
      return visitContainer(value, walk);
    case "undefined":
      throw new NotJson(`${where(walk)} is undefined; only a whole result may be undefined`);
    default:
      throw new NotJson(`${where(walk)} is a ${typeof value}, which is not JSON`);
  }
}

function visitContainer(value: object, walk: Walk): void {
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
  if (array) visitArray(value as unknown[], walk);
  else visitObject(value, walk);
  walk.ancestors.delete(value);
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

function visitArray(array: unknown[], walk: Walk): void {
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
  for (let i = 0; i < length; i++) {
    walk.at.push(i);
    visit(dataValue(Reflect.getOwnPropertyDescriptor(array, i), walk), walk);
    walk.at.pop();
  }
}

function visitObject(object: object, walk: Walk): void {
  const own = Reflect.ownKeys(object);
  // Symbols come last.
  if (own.length > 0 && typeof own[own.length - 1] === "symbol") {
    throw new NotJson(`${where(walk)} has symbol keys, which JSON cannot hold`);
  }
  for (const key of own as string[]) {
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
    walk.at.push(key);
    if (descriptor?.enumerable !== true) throw new NotJson(`${where(walk)} is not enumerable`);
    // docs/decisions.md EPS-5 applies to the whole result only; inside, undefined would silently
    // vanish.
    visit(dataValue(descriptor, walk), walk);
    walk.at.pop();
    walk.bytes += key.length + 3;
  }
}

/** A property's value, read from its descriptor: a getter is reported, never called. */
function dataValue(descriptor: PropertyDescriptor | undefined, walk: Walk): unknown {
  if (descriptor === undefined) throw new NotJson(`${where(walk)} is missing`);
  if (!Object.hasOwn(descriptor, "value"))
    throw new NotJson(`${where(walk)} is a getter or setter, not data`);
  return descriptor.value;
}
