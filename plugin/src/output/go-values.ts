// How Go prints the values of a decoded JSON document (map[string]interface{}, []interface{},
// string, int64, float64, bool, nil), which is what kubectl hands to its printers:
// encoding/json (sorted keys, `<`, `>`, `&`, U+2028 and U+2029 escaped) and fmt's `%v`
// (`map[a:1 b:[x y]]`, `<nil>`, floats as `%g`). JSON numbers that are whole are Go's int64,
// the others float64.

import { isObject, type JsonObject } from "../../../webhook/src/shared/json.js";

/** A float64 that came from a template literal (`{1.0}`): a float to Go even when it is whole. */
export class GoFloat {
  constructor(readonly value: number) {}
}

export type { JsonObject };

/**
 * A JSON object as kubectl's printers see it (Go's map[string]interface{}): an object, and not a
 * GoFloat, which is a number to Go.
 */
export function isJsonObject(v: unknown): v is JsonObject {
  return isObject(v) && !(v instanceof GoFloat);
}

/** Go compares strings byte by byte in UTF-8, which is code point order (not UTF-16's). */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every other UTF-16 unit.
    const xs = x >= 0xd800 && x < 0xe000;
    const ys = y >= 0xd800 && y < 0xe000;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

export const sortedKeys = (o: JsonObject): string[] => Object.keys(o).sort(compareGoStrings);

const isGoInt = (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 63;

/** Go's strconv.FormatFloat(f, 'g', -1, 64), which fmt's `%v` uses. */
export function goFloatV(f: number): string {
  if (Number.isNaN(f)) return "NaN";
  if (!Number.isFinite(f)) return f > 0 ? "+Inf" : "-Inf";
  if (f === 0) return Object.is(f, -0) ? "-0" : "0";
  const [mantissa = "", expText = "0"] = f.toExponential().split("e");
  const exp = Number(expText);
  // Shortest %g switches to an exponent below 1e-4 and from 1e6 on (strconv's eprec 6).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(f);
}

/** Nesting beyond this prints as "..." (kubectl has no limit; we keep the stack safe). */
const MAX_SPRINT_DEPTH = 100;

/** fmt.Sprint of a decoded JSON value (`%v`). */
export function goSprint(v: unknown, depth = 0): string {
  if (depth > MAX_SPRINT_DEPTH) return "...";
  if (v === undefined) return "<invalid reflect.Value>";
  if (v === null) return "<nil>";
  if (v instanceof GoFloat) return goFloatV(v.value);
  if (typeof v === "number") return isGoInt(v) ? String(v) : goFloatV(v);
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => goSprint(x, depth + 1)).join(" ")}]`;
  if (isJsonObject(v)) {
    return `map[${sortedKeys(v)
      .map((k) => `${k}:${goSprint(v[k], depth + 1)}`)
      .join(" ")}]`;
  }
  return String(v);
}

function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => {
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

function goJsonNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${goFloatV(n)}`);
  return Object.is(n, -0) ? "-0" : String(n);
}

/** goJson's output grew past the limit it was given. */
export class JsonTooLargeError extends Error {}

/**
 * Go's json.Marshal (indent "") or json.MarshalIndent(v, "", indent) of a decoded JSON value.
 * Iterative, so a deeply nested document cannot overflow the stack; throws JsonTooLargeError
 * once the text passes `limit` characters.
 */
export function goJson(value: unknown, indent = "", limit = Infinity): string {
  const out: string[] = [];
  let size = 0;
  const push = (...parts: string[]) => {
    for (const part of parts) {
      size += part.length;
      out.push(part);
    }
    if (size > limit) throw new JsonTooLargeError(`more than ${limit} characters`);
  };
  type Frame = { close: string; items: [string | null, unknown][]; i: number; depth: number };
  const stack: Frame[] = [];
  const nl = (depth: number) => (indent ? `\n${indent.repeat(depth)}` : "");
  const sep = indent ? ": " : ":";
  const emit = (v: unknown, depth: number) => {
    if (v === null || v === undefined) push("null");
    else if (v instanceof GoFloat) push(goJsonNumber(v.value));
    else if (typeof v === "number") push(goJsonNumber(v));
    else if (typeof v === "string") push(goJsonString(v));
    else if (typeof v === "boolean") push(String(v));
    else if (Array.isArray(v)) {
      if (v.length === 0) push("[]");
      else {
        push("[");
        stack.push({ close: "]", items: v.map((x) => [null, x]), i: 0, depth: depth + 1 });
      }
    } else if (isJsonObject(v)) {
      const keys = sortedKeys(v);
      if (keys.length === 0) push("{}");
      else {
        push("{");
        stack.push({ close: "}", items: keys.map((k) => [k, v[k]]), i: 0, depth: depth + 1 });
      }
    } else push("null");
  };
  emit(value, 0);
  while (stack.length) {
    const top = stack.at(-1)!;
    if (top.i === top.items.length) {
      stack.pop();
      push(nl(top.depth - 1), top.close);
      continue;
    }
    const [key, v] = top.items[top.i]!;
    push(top.i === 0 ? "" : ",", nl(top.depth));
    if (key !== null) push(goJsonString(key), sep);
    top.i += 1;
    emit(v, top.depth);
  }
  return out.join("");
}

const isContainer = (v: unknown): v is unknown[] | JsonObject =>
  Array.isArray(v) || isJsonObject(v);

function scalarJson(v: unknown): string {
  if (v instanceof GoFloat) return goJsonNumber(v.value);
  if (typeof v === "number") return goJsonNumber(v);
  if (typeof v === "string") return goJsonString(v);
  if (typeof v === "boolean") return String(v);
  return "null";
}

/**
 * Compact goJson with a cache of every container's text, built bottom-up without recursion: a
 * template that prints many nested parts of one document (`{..}`) then costs one pass, and the
 * texts share their parts.
 */
export function goJsonCached(value: unknown, cache: Map<object, string>): string {
  if (!isContainer(value)) return scalarJson(value);
  const stack: { v: unknown[] | JsonObject; expanded: boolean }[] = [{ v: value, expanded: false }];
  const text = (v: unknown) => (isContainer(v) ? cache.get(v)! : scalarJson(v));
  while (stack.length) {
    const top = stack.at(-1)!;
    if (cache.has(top.v)) {
      stack.pop();
      continue;
    }
    const kids = Array.isArray(top.v)
      ? top.v
      : sortedKeys(top.v).map((k) => (top.v as JsonObject)[k]);
    if (!top.expanded) {
      top.expanded = true;
      for (const kid of kids)
        if (isContainer(kid) && !cache.has(kid)) stack.push({ v: kid, expanded: false });
      continue;
    }
    if (Array.isArray(top.v)) cache.set(top.v, `[${top.v.map(text).join(",")}]`);
    else {
      const o = top.v;
      cache.set(
        o,
        `{${sortedKeys(o)
          .map((k) => `${goJsonString(k)}:${text(o[k])}`)
          .join(",")}}`,
      );
    }
    stack.pop();
  }
  return cache.get(value)!;
}
