import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { checkResult } from "../../../../webhook/src/patches/sandbox/json-result.js";
import {
  DEFAULT_RESULT_LIMITS,
  type ResultLimits,
} from "../../../../webhook/src/patches/sandbox/protocol.js";
import { checkThenCopy } from "./json-result-before.js";

function rejects(value: unknown, pattern: RegExp): void {
  const checked = checkResult(value);
  assert.equal(checked.ok, false);
  if (!checked.ok) assert.match(checked.error, pattern);
}

describe("patches/sandbox/json-result", () => {
  it("accepts plain JSON and returns an equal copy", () => {
    const values: unknown[] = ["s", 1, -0.5, true, null, [], {}, { a: [1, { b: null }] }];
    for (const v of values) assert.deepEqual(checkResult(v), { ok: true, value: v });
    const object = { a: [1, { b: null }] };
    const copy = checkResult(object);
    assert.ok(copy.ok);
    const value = copy.value as { a: [number, object] };
    assert.notEqual(value, object);
    assert.notEqual(value.a, object.a);
    assert.notEqual(value.a[1], object.a[1]);
  });

  it("copies null-prototype objects as plain ones and shared subtrees once per place", () => {
    const shared = { x: 1 };
    const checked = checkResult({
      n: Object.assign(Object.create(null) as object, { a: 1 }),
      s: [shared, shared],
    });
    assert.ok(checked.ok);
    const value = checked.value as { n: object; s: [object, object] };
    assert.equal(Object.getPrototypeOf(value.n), Object.prototype);
    assert.notEqual(value.s[0], value.s[1]);
    assert.deepEqual(value.s, [{ x: 1 }, { x: 1 }]);
  });

  it("accepts a top-level undefined (docs/decisions.md EPS-5: delete the key)", () => {
    assert.deepEqual(checkResult(undefined), { ok: true, value: undefined });
  });

  it("accepts null-prototype objects, shared subtrees and a __proto__ own key", () => {
    const shared = { x: 1 };
    const withProto = JSON.parse('{"__proto__": {"y": 2}}') as unknown;
    assert.equal(checkResult(Object.assign(Object.create(null) as object, { a: 1 })).ok, true);
    assert.equal(checkResult([shared, shared]).ok, true);
    assert.equal(checkResult(withProto).ok, true);
  });

  it("rejects undefined inside arrays and objects", () => {
    rejects([1, undefined], /result\[1\] is undefined/);
    rejects({ a: undefined }, /result\["a"\] is undefined/);
  });

  it("rejects functions, symbols, bigints and non-finite numbers", () => {
    rejects(() => 1, /is a function/);
    rejects(Symbol("s"), /is a symbol/);
    rejects(1n, /is a bigint/);
    rejects(NaN, /NaN/);
    rejects([Infinity], /Infinity/);
  });

  it("rejects cycles", () => {
    const o: Record<string, unknown> = {};
    o["self"] = o;
    rejects(o, /cycle/);
  });

  it("rejects Map, Date, Promise, class instances and errors", () => {
    rejects(new Map(), /a Map/);
    rejects(new Date(0), /a Date/);
    rejects(Promise.resolve(1), /a Promise/);
    rejects(
      new (class Thing {
        readonly x = 1;
      })(),
      /custom prototype/,
    );
    rejects(new Error("x"), /an Error/);
  });

  it("rejects getters without calling them", () => {
    let called = false;
    const o = {
      get a(): number {
        called = true;
        return 1;
      },
    };
    rejects(o, /getter/);
    assert.equal(called, false);
  });

  it("rejects proxies without running a trap", () => {
    let trapped = false;
    const handler: ProxyHandler<object> = {
      ownKeys: () => {
        trapped = true;
        return [];
      },
      getPrototypeOf: () => {
        trapped = true;
        return null;
      },
    };
    rejects(new Proxy({}, handler), /Proxy/);
    rejects(new Proxy([], handler), /Proxy/);
    assert.equal(trapped, false);
  });

  it("rejects holes, extra array properties, symbol keys and non-enumerable keys", () => {
    // eslint-disable-next-line no-sparse-arrays
    rejects([1, , 2], /holes/);
    rejects(Object.assign([1], { extra: 1 }), /extra properties/);
    rejects({ [Symbol("k")]: 1 }, /symbol keys/);
    rejects(Object.defineProperty({}, "hidden", { value: 1, enumerable: false }), /not enumerable/);
  });

  it("enforces the size, count and depth limits", () => {
    rejects("x".repeat(DEFAULT_RESULT_LIMITS.maxBytes), /larger than/);
    assert.equal(checkResult("x".repeat(DEFAULT_RESULT_LIMITS.maxBytes - 2)).ok, true);
    rejects(new Array(DEFAULT_RESULT_LIMITS.maxNodes + 1).fill(0), /more than 100000 values/);
    rejects(new Array(1e9), /more than 100000 values/);
    let deep: unknown = 1;
    for (let i = 0; i < DEFAULT_RESULT_LIMITS.maxDepth + 1; i++) deep = [deep];
    rejects(deep, /nested deeper/);
    let ok: unknown = 1;
    for (let i = 0; i < DEFAULT_RESULT_LIMITS.maxDepth - 1; i++) ok = [ok];
    assert.equal(checkResult(ok).ok, true);
  });

  it("honours custom limits", () => {
    const limits = { ...DEFAULT_RESULT_LIMITS, maxBytes: 20, maxNodes: 3, maxDepth: 2 };
    assert.equal(checkResult("abc", limits).ok, true);
    assert.equal(checkResult("x".repeat(19), limits).ok, false);
    assert.equal(checkResult([1, 2, 3], limits).ok, false);
    assert.equal(checkResult([[1]], limits).ok, true);
    assert.equal(checkResult([[[1]]], limits).ok, false);
  });

  describe("the copying walk against the check then copyJson it replaced", () => {
    it("gives the same answer on hostile values, calling no getter and no trap", () => {
      fc.assert(
        fc.property(hostileSpec, limitsArb, (spec, limits) => {
          const touched = { count: 0 };
          const value = build(spec, touched, []);
          const before = checkThenCopy(value, limits);
          const after = checkResult(value, limits);
          assert.equal(touched.count, 0);
          assert.deepStrictEqual(after, before);
          if (after.ok) assertFresh(after.value, value);
        }),
        { numRuns: 600 },
      );
    });

    it("gives the same answer on nesting far past the depth limit", () => {
      for (const depth of [DEFAULT_RESULT_LIMITS.maxDepth - 1, DEFAULT_RESULT_LIMITS.maxDepth]) {
        for (const wrap of [(v: unknown) => [v], (v: unknown) => ({ k: v })]) {
          let deep: unknown = -0;
          for (let i = 0; i < depth; i++) deep = wrap(deep);
          assert.deepStrictEqual(checkResult(deep), checkThenCopy(deep));
        }
      }
      let huge: unknown = 1;
      for (let i = 0; i < 200_000; i++) huge = i % 2 ? [huge] : { k: huge };
      const after = checkResult(huge);
      assert.deepStrictEqual(after, checkThenCopy(huge));
      assert.equal(after.ok, false);
    });
  });
});

/** A value to build: JSON and everything near it that an expression could return. */
type Spec =
  | { t: "leaf"; v: unknown }
  | { t: "array"; items: Spec[]; flaw: ArrayFlaw }
  | { t: "object"; entries: [string, Spec][]; flaw: ObjectFlaw };

const ARRAY_FLAWS = ["none", "none", "none", "hole", "extra", "symbol", "proxy", "cycle"] as const;
type ArrayFlaw = (typeof ARRAY_FLAWS)[number];
const OBJECT_FLAWS = [
  ...["none", "none", "none", "none", "nullProto", "shared", "protoKey", "protoSet"],
  ...["getter", "setter", "nonEnumerable", "symbolKey", "proxy", "class", "date", "map", "cycle"],
] as const;
type ObjectFlaw = (typeof OBJECT_FLAWS)[number];

const leaf = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constantFrom<unknown>(null, undefined, -0, NaN, Infinity, 1n, Symbol("s"), () => 1),
);

const { node: hostileSpec } = fc.letrec<{ node: Spec }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf.map((v): Spec => ({ t: "leaf", v })),
    fc.record({
      t: fc.constant("array" as const),
      items: fc.array(tie("node"), { maxLength: 4 }),
      flaw: fc.constantFrom(...ARRAY_FLAWS),
    }),
    fc.record({
      t: fc.constant("object" as const),
      entries: fc.array(
        fc.tuple(
          fc.constantFrom("a", "b", "0", "10", "__proto__", "constructor", "x y"),
          tie("node"),
        ),
        { maxLength: 4 },
      ),
      flaw: fc.constantFrom(...OBJECT_FLAWS),
    }),
  ),
}));

/** The default limits, or small ones that the values reach. */
const limitsArb = fc.oneof(
  fc.constant(DEFAULT_RESULT_LIMITS),
  fc.record<ResultLimits>({
    maxBytes: fc.integer({ min: 1, max: 200 }),
    maxNodes: fc.integer({ min: 1, max: 20 }),
    maxDepth: fc.integer({ min: 1, max: 5 }),
    maxObjectBytes: fc.constant(DEFAULT_RESULT_LIMITS.maxObjectBytes),
  }),
);

class Thing {
  readonly kind = "thing";
}

/** Builds the value; a getter, setter or proxy trap that runs counts in `touched`. */
function build(spec: Spec, touched: { count: number }, ancestors: object[]): unknown {
  if (spec.t === "leaf") return spec.v;
  const trap = (): never => {
    touched.count++;
    throw new Error("a trap ran");
  };
  const traps: ProxyHandler<object> = {
    get: trap,
    getOwnPropertyDescriptor: trap,
    getPrototypeOf: trap,
    ownKeys: trap,
    has: trap,
  };
  if (spec.t === "array") {
    const array: unknown[] = [];
    const inner = [...ancestors, array];
    for (const item of spec.items) array.push(build(item, touched, inner));
    switch (spec.flaw) {
      case "hole":
        array.length += 1;
        break;
      case "extra":
        Object.assign(array, { extra: 1 });
        break;
      case "symbol":
        Object.assign(array, { [Symbol("k")]: 1 });
        break;
      case "cycle":
        array.push(ancestors[0] ?? array);
        break;
      case "proxy":
        return new Proxy(array, traps);
    }
    return array;
  }
  const flaw = spec.flaw;
  const object: Record<string, unknown> =
    flaw === "nullProto"
      ? (Object.create(null) as Record<string, unknown>)
      : flaw === "class"
        ? (new Thing() as unknown as Record<string, unknown>)
        : flaw === "date"
          ? (new Date(0) as unknown as Record<string, unknown>)
          : flaw === "map"
            ? (new Map() as unknown as Record<string, unknown>)
            : {};
  const inner = [...ancestors, object];
  for (const [key, item] of spec.entries) {
    const value = build(item, touched, inner);
    // A JSON.parse'd "__proto__" is an own key; protoSet assigns it, which sets the prototype.
    if (flaw === "protoSet") object[key] = value;
    else
      Object.defineProperty(object, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  switch (flaw) {
    case "protoKey":
      Object.defineProperty(object, "__proto__", { value: { y: [1] }, enumerable: true });
      break;
    case "shared": {
      const shared = { s: [1, "x"] };
      Object.assign(object, { s1: shared, s2: shared });
      break;
    }
    case "getter":
      Object.defineProperty(object, "g", { get: trap, enumerable: true });
      break;
    case "setter":
      Object.defineProperty(object, "g", { set: trap, enumerable: true });
      break;
    case "nonEnumerable":
      Object.defineProperty(object, "hidden", { value: 1, enumerable: false });
      break;
    case "symbolKey":
      object[Symbol("k") as unknown as string] = 1;
      break;
    case "cycle":
      object["self"] = ancestors[0] ?? object;
      break;
    case "proxy":
      return new Proxy(object, traps);
  }
  return object;
}

/** The copy shares no container with the input, nor within itself, and is plain all through. */
function assertFresh(copy: unknown, input: unknown): void {
  const inputs = new Set<object>();
  const collect = (v: unknown): void => {
    if (typeof v !== "object" || v === null) return;
    inputs.add(v);
    for (const item of Object.values(v)) collect(item);
  };
  collect(input);
  const seen = new Set<object>();
  const check = (v: unknown): void => {
    if (typeof v !== "object" || v === null) return;
    assert.ok(!inputs.has(v), "the copy shares a container with the input");
    assert.ok(!seen.has(v), "the copy shares a container within itself");
    seen.add(v);
    const proto: unknown = Object.getPrototypeOf(v);
    assert.equal(proto, Array.isArray(v) ? Array.prototype : Object.prototype);
    for (const item of Object.values(v)) check(item);
  };
  check(copy);
}
