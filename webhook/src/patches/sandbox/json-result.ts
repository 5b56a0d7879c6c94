// Checks that an expression's result is plain JSON before the engine touches it. The walk never
// runs guest code: proxies are refused before any trap could fire and properties are read through
// their descriptors, so a getter is reported, not called.
import { types } from "node:util";
import type { Json } from "../types.js";
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
}

class NotJson extends Error {}

/**
 * A top-level `undefined` is allowed (docs/decisions.md EPS-5: it deletes the key); anything
 * JSON.stringify would drop, change or choke on anywhere else is an error naming where it was
 * found.
 */
export function checkResult(value: unknown, limits = DEFAULT_RESULT_LIMITS): CheckedResult {
  if (value === undefined) return { ok: true, value: undefined };
  const walk: Walk = { limits, nodes: 0, bytes: 0, ancestors: undefined };
  try {
    visit(value, walk, "", 0);
  } catch (err) {
    if (err instanceof NotJson) return { ok: false, error: err.message };
    throw err;
  }
  return { ok: true, value: value as Json };
}

function where(at: string): string {
  return at === "" ? "the result" : `result${at}`;
}

function count(walk: Walk, bytes: number, at: string): void {
  walk.nodes++;
  walk.bytes += bytes;
  if (walk.nodes > walk.limits.maxNodes) {
    throw new NotJson(`the result has more than ${walk.limits.maxNodes} values`);
  }
  if (walk.bytes > walk.limits.maxBytes) {
    throw new NotJson(
      `the result is larger than ${walk.limits.maxBytes} bytes as JSON (at ${where(at)})`,
    );
  }
}

function visit(value: unknown, walk: Walk, at: string, depth: number): void {
  switch (typeof value) {
    case "string":
      return count(walk, value.length + 2, at);
    case "boolean":
      return count(walk, 5, at);
    case "number":
      if (!Number.isFinite(value))
        throw new NotJson(`${where(at)} is ${String(value)}, which JSON cannot hold`);
      return count(walk, 8, at);
    case "object":
      if (value === null) return count(walk, 4, at);
      return visitContainer(value, walk, at, depth);
    case "undefined":
      throw new NotJson(`${where(at)} is undefined; only a whole result may be undefined`);
    default:
      throw new NotJson(`${where(at)} is a ${typeof value}, which is not JSON`);
  }
}

function visitContainer(value: object, walk: Walk, at: string, depth: number): void {
  if (types.isProxy(value)) throw new NotJson(`${where(at)} is a Proxy, which is not plain JSON`);
  if (depth >= walk.limits.maxDepth) {
    throw new NotJson(`the result is nested deeper than ${walk.limits.maxDepth} levels`);
  }
  walk.ancestors ??= new Set();
  if (walk.ancestors.has(value))
    throw new NotJson(`${where(at)} is a cycle, which JSON cannot hold`);
  const proto: unknown = Object.getPrototypeOf(value);
  const array = Array.isArray(value);
  if (array ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
    throw new NotJson(`${where(at)} is ${describeObject(value)}, not a plain object or array`);
  }
  count(walk, 2, at);
  walk.ancestors.add(value);
  if (array) visitArray(value as unknown[], walk, at, depth);
  else visitObject(value, walk, at, depth);
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

function visitArray(array: unknown[], walk: Walk, at: string, depth: number): void {
  const length = array.length;
  // A sparse `new Array(1e9)` must not be walked index by index.
  if (length > walk.limits.maxNodes) {
    throw new NotJson(`the result has more than ${walk.limits.maxNodes} values`);
  }
  const descriptors = Object.getOwnPropertyDescriptors(array) as Record<string, PropertyDescriptor>;
  if (
    Object.getOwnPropertySymbols(array).length > 0 ||
    Object.keys(descriptors).length !== length + 1
  ) {
    throw new NotJson(`${where(at)} is an array with holes or extra properties`);
  }
  for (let i = 0; i < length; i++) {
    const item = dataValue(descriptors[String(i)], `${at}[${i}]`);
    visit(item, walk, `${at}[${i}]`, depth + 1);
  }
}

function visitObject(object: object, walk: Walk, at: string, depth: number): void {
  if (Object.getOwnPropertySymbols(object).length > 0) {
    throw new NotJson(`${where(at)} has symbol keys, which JSON cannot hold`);
  }
  const descriptors = Object.getOwnPropertyDescriptors(object) as Record<
    string,
    PropertyDescriptor
  >;
  for (const key of Object.keys(descriptors)) {
    const descriptor = descriptors[key];
    const inner = `${at}[${JSON.stringify(key)}]`;
    if (descriptor?.enumerable !== true) throw new NotJson(`${where(inner)} is not enumerable`);
    const item = dataValue(descriptor, inner);
    // docs/decisions.md EPS-5 applies to the whole result only; inside, undefined would silently
    // vanish.
    visit(item, walk, inner, depth + 1);
    walk.bytes += key.length + 3;
  }
}

function dataValue(descriptor: PropertyDescriptor | undefined, at: string): unknown {
  if (descriptor === undefined) throw new NotJson(`${where(at)} is missing`);
  if (!Object.hasOwn(descriptor, "value"))
    throw new NotJson(`${where(at)} is a getter or setter, not data`);
  return descriptor.value;
}
