import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { checkResult } from "../../../../webhook/src/patches/sandbox/json-result.js";
import { DEFAULT_RESULT_LIMITS } from "../../../../webhook/src/patches/sandbox/protocol.js";

function rejects(value: unknown, pattern: RegExp): void {
  const checked = checkResult(value);
  assert.equal(checked.ok, false);
  if (!checked.ok) assert.match(checked.error, pattern);
}

describe("patches/sandbox/json-result", () => {
  it("accepts plain JSON and returns the same value", () => {
    const values: unknown[] = ["s", 1, -0.5, true, null, [], {}, { a: [1, { b: null }] }];
    for (const v of values) assert.deepEqual(checkResult(v), { ok: true, value: v });
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
});
