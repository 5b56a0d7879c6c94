// Length guards on built-ins that can allocate without ever checking for interrupts. Node 20
// worker `resourceLimits` are not a hard wall: when such a built-in (e.g. `new Array(1e9).fill(0)`,
// `Array.from({length: 1e8})`, `"x".repeat(2**24).split("")`) runs past the heap limit, V8 reports
// a *fatal* OOM and the whole process aborts, and `worker.terminate()` cannot stop it either.
// Called in the worker before lockdown(), which then freezes the guarded versions.

/** 1 Mi elements or characters: beyond any Kubernetes object, far below the 64 MiB heap limit. */
export const MAX_BUILTIN_LENGTH = 2 ** 20;

function limitError(what: string): RangeError {
  return new RangeError(`sandbox: ${what} is limited to ${MAX_BUILTIN_LENGTH} elements`);
}

function lengthOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const length = (value as { length?: unknown }).length;
  return typeof length === "number" ? length : 0;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;
type TooLarge = (self: unknown, first: unknown) => boolean;

/**
 * Replaces `owner[name]` with a guard that refuses when `tooLarge` holds; name and length are
 * kept. The engine itself calls these built-ins on its hot paths inside the worker, so the guard
 * forwards by arity with `call` (no `arguments` object, no array) and falls back to
 * `Reflect.apply` only for three or more arguments. Forwarding the exact argument count matters:
 * `splice(0)` and `splice(0, undefined)` differ.
 */
function guard(owner: object, name: string, what: string, tooLarge: TooLarge): void {
  const original = (owner as Record<string, Method>)[name];
  if (typeof original !== "function") return;
  const guarded = {
    [name](this: unknown, a?: unknown, b?: unknown): unknown {
      if (tooLarge(this, a)) throw limitError(what);
      switch (arguments.length) {
        case 0:
          return original.call(this);
        case 1:
          return original.call(this, a);
        case 2:
          return original.call(this, a, b);
        default:
          // eslint-disable-next-line prefer-rest-params
          return Reflect.apply(original, this, arguments);
      }
    },
  }[name]!;
  Object.defineProperty(guarded, "length", { value: original.length });
  Object.defineProperty(owner, name, {
    value: guarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

const longThis: TooLarge = (self) =>
  (typeof self === "string" || Array.isArray(self) ? self.length : lengthOf(self)) >
  MAX_BUILTIN_LENGTH;

const STRING_METHODS = [
  "split",
  "normalize",
  "toUpperCase",
  "toLowerCase",
  "replaceAll",
  "replace",
  "match",
  "matchAll",
];
const OBJECT_FUNCTIONS = [
  "keys",
  "values",
  "entries",
  "getOwnPropertyNames",
  "getOwnPropertyDescriptors",
  "assign",
];
const ARRAY_METHODS = [
  "fill",
  "copyWithin",
  "join",
  "toString",
  "toLocaleString",
  "slice",
  "splice",
  "concat",
  "flat",
  "flatMap",
  "sort",
  "reverse",
  "toSorted",
  "toReversed",
  "toSpliced",
  "with",
  "map",
  "filter",
  "indexOf",
  "lastIndexOf",
  "includes",
];

function guardArrays(): void {
  for (const name of ARRAY_METHODS) {
    guard(Array.prototype, name, `Array.prototype.${name} on an array`, longThis);
  }
  guard(Array, "from", "Array.from", (_self, items) => lengthOf(items) > MAX_BUILTIN_LENGTH);
}

function guardStrings(): void {
  guard(
    String.prototype,
    "repeat",
    "String.prototype.repeat",
    (self, count) => String(self).length * Number(count) > MAX_BUILTIN_LENGTH,
  );
  for (const name of ["padStart", "padEnd"]) {
    guard(
      String.prototype,
      name,
      `String.prototype.${name}`,
      (_self, max) => Number(max) > MAX_BUILTIN_LENGTH,
    );
  }
  for (const name of STRING_METHODS) {
    guard(String.prototype, name, `String.prototype.${name} on a string`, longThis);
  }
}

function guardObjects(): void {
  for (const name of OBJECT_FUNCTIONS) {
    guard(
      Object,
      name,
      `Object.${name} on a string`,
      (_self, arg) => typeof arg === "string" && arg.length > MAX_BUILTIN_LENGTH,
    );
  }
}

export function tameBuiltins(): void {
  guardArrays();
  guardStrings();
  guardObjects();
}

/**
 * Globals a patch expression never needs whose memory lives outside the V8 heap limit
 * (`new Uint8Array(2**31)` allocates 2 GiB the worker's resourceLimits do not count).
 */
export const SHADOWED_GLOBALS = [
  "ArrayBuffer",
  "SharedArrayBuffer",
  "DataView",
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "TextEncoder",
  "TextDecoder",
  "WeakRef",
  "FinalizationRegistry",
];
