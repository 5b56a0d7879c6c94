// Hostile expressions: every case must be contained — a clear error or a harmless result — and
// must leave no trace: the next evaluation (on every worker) sees exactly the baseline state, and
// the main thread is untouched (not locked down, prototypes unchanged).
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "mocha";
import { SandboxPool } from "../../../../webhook/src/patches/sandbox/pool.js";
import { PatchError } from "../../../../webhook/src/patches/types.js";
import { annotation, annotationsOf, toHost } from "./helpers.js";

type Expect =
  /** The expression ran and its (harmless) result is this; undefined means the key was deleted. */
  | { value: unknown }
  /** Patching the object failed with this message. */
  | { error: RegExp }
  /** SES refuses the source when the config is compiled. */
  | { loadError: RegExp };

interface Case {
  name: string;
  source: string;
  /** Default: metadata.annotations.a, whose value is "hello". */
  path?: string;
  expect: Expect;
}

const AT = String.raw`^patches\[0\] at "metadata\.annotations(\.a)?": `;
const threw = (what: string): RegExp => new RegExp(`${AT}the expression threw ${what}`);
const notJson = (what: string): RegExp => new RegExp(`${AT}the result is not plain JSON: ${what}`);
const TIMEOUT =
  /^patches\[0\] \(metadata\.annotations(\.a)?\): expression did not finish within 100ms$/;
const ASYNC_TIMEOUT =
  /^patches\[0\] \(metadata\.annotations\.a\): asynchronous work left by the expression did not finish within 100ms$/;
/** A memory bomb ends in whichever limit it reaches first: heap, deadline, or V8's length limits. */
const CONTAINED_BOMB =
  /^patches\[0\] \(metadata\.annotations\.a\): expression (exceeded the sandbox memory limit \(64 MiB heap\)|did not finish within 100ms)$|the expression threw RangeError: (Invalid (string|array|typed array) length|sandbox: .+ is limited to 1048576 elements)/;
const NO_CONSTRUCTOR = threw(
  "TypeError: Function.prototype.constructor is not a valid constructor",
);
const FROZEN = threw("TypeError: Cannot (add|assign to read only|define) property");

const CASES: Case[] = [
  // CPU
  { name: "while(true){}", source: "while(true){}", expect: { error: TIMEOUT } },
  { name: "for(;;);", source: "for(;;);", expect: { error: TIMEOUT } },
  {
    name: "do-while loop in an IIFE",
    source: "(() => { do {} while (1) })()",
    expect: { error: TIMEOUT },
  },
  {
    name: "unbounded recursion",
    source: "(function f(){return f()})()",
    expect: { error: threw("RangeError: Maximum call stack size exceeded") },
  },
  {
    name: "catastrophic regex",
    source: '/(a+)+$/.test("a".repeat(40)+"!")',
    expect: { error: TIMEOUT },
  },
  {
    name: "loop hidden in sort comparator",
    source: "[2, 1].sort(() => { for (;;); })",
    expect: { error: TIMEOUT },
  },
  {
    name: "loop inside catch/finally",
    source: "(() => { try { throw 1 } finally { for (;;); } })()",
    expect: { error: TIMEOUT },
  },
  // memory
  { name: '"x".repeat(2**28)', source: '"x".repeat(2**28)', expect: { error: CONTAINED_BOMB } },
  {
    name: "new Array(1e9).fill(0)",
    source: "new Array(1e9).fill(0)",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "growing arrays in a loop",
    source: "(() => { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)); })()",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "Array.from({length:1e8})",
    source: "Array.from({length:1e8})",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "split of a 1 Mi string",
    source:
      '(() => { let s = "x"; for (let i = 0; i < 24; i++) s += s; return s.split("").length })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "Object.keys of a huge string",
    source:
      '(() => { let s = "x"; for (let i = 0; i < 26; i++) s += s; return Object.keys(s).length })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "typed arrays outside the heap limit are not available",
    source: "[typeof Uint8Array, typeof ArrayBuffer, typeof TextEncoder, typeof DataView].join()",
    expect: { value: "undefined,undefined,undefined,undefined" },
  },
  {
    name: "string doubling",
    source: '(() => { let s = "x"; for (;;) s += s; })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "object growth in a loop",
    source: "(() => { const o = {}; for (let i = 0; ; i++) o['k' + i] = { i }; })()",
    expect: { error: CONTAINED_BOMB },
  },
  // prototype pollution
  {
    name: "value.__proto__.polluted = 1",
    path: "metadata.annotations",
    source: "value.__proto__.polluted = 1",
    expect: { error: FROZEN },
  },
  { name: "Object.prototype.x = 1", source: "Object.prototype.x = 1", expect: { error: FROZEN } },
  {
    name: "Array.prototype.map = null",
    source: "Array.prototype.map = null",
    expect: { error: FROZEN },
  },
  {
    name: "String.prototype.toUpperCase override via defineProperty",
    source: "Object.defineProperty(String.prototype, 'toUpperCase', { value: () => 'pwned' })",
    expect: { error: threw("TypeError: Cannot redefine property") },
  },
  {
    name: "context.constructor.prototype.y = 1",
    source: "context.constructor.prototype.y = 1",
    expect: { error: FROZEN },
  },
  {
    name: "context.vcluster.__proto__.polluted",
    source: "context.vcluster.__proto__.polluted = 1",
    expect: { error: FROZEN },
  },
  {
    name: "context.vcluster.name overwrite",
    source: 'context.vcluster.name = "evil"',
    expect: { error: FROZEN },
  },
  {
    name: "Object.prototype.toJSON injection",
    source: "Object.defineProperty(Object.prototype, 'toJSON', { value: () => 1 })",
    expect: { error: threw("TypeError: Cannot define property toJSON") },
  },
  {
    name: "value.__proto__ swapped on the private copy",
    path: "metadata.annotations",
    source: "(value.__proto__ = { evil: 1 }, value)",
    expect: { error: notJson("the result is an object with a custom prototype") },
  },
  // constructor chains and evaluators
  {
    name: 'value.constructor.constructor("return process")()',
    source: 'value.constructor.constructor("return process")()',
    expect: { error: NO_CONSTRUCTOR },
  },
  {
    name: '(()=>{}).constructor("return this")()',
    source: '(()=>{}).constructor("return this")()',
    expect: { error: NO_CONSTRUCTOR },
  },
  {
    name: "[].constructor.constructor",
    source: '[].constructor.constructor("return process")()',
    expect: { error: NO_CONSTRUCTOR },
  },
  {
    name: "this.constructor.constructor",
    source: 'this.constructor.constructor("return process")()',
    expect: { error: NO_CONSTRUCTOR },
  },
  {
    name: "btoa.constructor",
    source: 'btoa.constructor("return process")()',
    expect: { error: NO_CONSTRUCTOR },
  },
  {
    name: "async function constructor",
    source: 'Object.getPrototypeOf(async function(){}).constructor("return process")',
    expect: { error: threw("TypeError") },
  },
  {
    name: "generator function constructor",
    source: 'Object.getPrototypeOf(function*(){}).constructor("return process")',
    expect: { error: threw("TypeError") },
  },
  {
    name: 'Function("return globalThis")() sees only the frozen compartment global',
    source: 'typeof Function("return globalThis")().process',
    expect: { value: "undefined" },
  },
  {
    name: "Reflect.construct(Function, ...)",
    source: 'Reflect.construct(Function, ["return typeof process"])()',
    expect: { value: "undefined" },
  },
  {
    name: 'eval("...") is the confined evaluator: no process, no access to the call scope',
    source: 'eval("typeof process + typeof require + typeof value")',
    expect: { value: "undefinedundefinedundefined" },
  },
  {
    name: "direct eval in a script body is censored",
    source: 'let p = 1; eval("process")',
    expect: { error: threw("SyntaxError: Possible direct eval expression rejected") },
  },
  {
    name: "indirect eval sees no process",
    source: '(0, eval)("typeof process + typeof require")',
    expect: { value: "undefinedundefined" },
  },
  {
    name: "new Compartment() has no authority either",
    source: 'new Compartment().evaluate("typeof process + typeof require + typeof setTimeout")',
    expect: { value: "undefinedundefinedundefined" },
  },
  {
    name: 'import("fs") is censored',
    source: 'import("fs")',
    expect: { loadError: /SES_IMPORT_REJECTED/ },
  },
  {
    name: 'require("fs")',
    source: 'require("fs")',
    expect: { error: threw("TypeError: require is not a function") },
  },
  {
    name: "process.exit()",
    source: "process.exit()",
    expect: { error: threw("TypeError: Cannot read properties of undefined \\(reading 'exit'\\)") },
  },
  {
    name: "globalThis.process",
    source:
      "[typeof globalThis.process, typeof globalThis.Buffer, typeof globalThis.module].join()",
    expect: { value: "undefined,undefined,undefined" },
  },
  {
    name: "no timers, network, workers or shared memory",
    source:
      "[typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask, typeof fetch, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof Worker, typeof console].join()",
    expect: {
      value:
        "undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined",
    },
  },
  {
    name: "setTimeout(...)",
    source: "setTimeout(() => {}, 0)",
    expect: { error: threw("TypeError: setTimeout is not a function") },
  },
  { name: "lockdown() again", source: "lockdown()", expect: { error: threw("TypeError") } },
  {
    name: "Math.random and Date.now are disabled",
    source: "Math.random()",
    expect: { error: threw("TypeError: secure mode") },
  },
  // errors and stacks
  {
    name: "Error.prepareStackTrace tampering",
    source: "(Error.prepareStackTrace = () => 'leak', typeof new Error('x').stack)",
    expect: { value: "string" },
  },
  {
    name: "Error.captureStackTrace is unavailable or inert",
    source:
      "(() => { const o = {}; try { Error.captureStackTrace(o) } catch {} return JSON.stringify(o) })()",
    expect: { value: "{}" },
  },
  {
    name: "thrown Proxy is not inspected",
    source:
      "(() => { throw new Proxy({}, { get() { for (;;); }, getPrototypeOf() { for (;;); } }) })()",
    expect: { error: threw("a Proxy") },
  },
  {
    name: "thrown error with a looping message getter",
    source:
      "(() => { const e = new TypeError('x'); Object.defineProperty(e, 'message', { get() { for (;;); } }); throw e })()",
    expect: { error: threw("TypeError: $") },
  },
  // async and microtasks
  {
    name: "microtask loop after returning",
    source: "(Promise.resolve().then(() => { while (true) {} }), 'returned')",
    expect: { error: ASYNC_TIMEOUT },
  },
  {
    name: "endless microtask chain",
    source: "((function again() { Promise.resolve().then(again) })(), 'returned')",
    expect: { error: ASYNC_TIMEOUT },
  },
  {
    name: "async IIFE result",
    source: "(async () => {})()",
    expect: { error: notJson("the result is a Promise") },
  },
  {
    name: "unhandled rejection does not crash the worker",
    source: "(Promise.reject(new Error('boom')), 'returned')",
    expect: { value: "returned" },
  },
  {
    name: "late prototype write from a microtask",
    source: "(Promise.resolve().then(() => { Object.prototype.late = 1 }), 'returned')",
    expect: { value: "returned" },
  },
  // giant results
  { name: '"x".repeat(5e6)', source: '"x".repeat(5e6)', expect: { error: CONTAINED_BOMB } },
  {
    name: "a 2 MiB string result",
    source: '(() => { let s = "x"; for (let i = 0; i < 21; i++) s += s; return s })()',
    expect: { error: notJson("the result is larger than 1048576 bytes") },
  },
  {
    name: "object nested 10000 levels",
    source: "(() => { let o = {}; for (let i = 0; i < 10000; i++) o = { o }; return o })()",
    expect: { error: notJson("the result is nested deeper than 512 levels") },
  },
  {
    name: "wide object with 1e6 keys",
    source: "(() => { const o = {}; for (let i = 0; i < 1e6; i++) o['k' + i] = i; return o })()",
    expect: {
      error:
        /the result has more than 100000 values|did not finish within 100ms|exceeded the sandbox memory limit/,
    },
  },
  {
    name: "array of 200000 numbers",
    source: "new Array(200000).fill(1)",
    expect: { error: notJson("the result has more than 100000 values") },
  },
  // not JSON
  {
    name: "function result",
    source: "() => 1",
    expect: { error: notJson("the result is a function") },
  },
  {
    name: "symbol result",
    source: 'Symbol("s")',
    expect: { error: notJson("the result is a symbol") },
  },
  { name: "BigInt result", source: "1n", expect: { error: notJson("the result is a bigint") } },
  {
    name: "cyclic result",
    source: "(() => { const o = {}; o.o = o; return o })()",
    expect: { error: notJson('result\\["o"\\] is a cycle') },
  },
  {
    name: "Map result",
    source: "new Map([[1, 2]])",
    expect: { error: notJson("the result is a Map") },
  },
  {
    name: "Date result (decided: rejected, use toISOString())",
    source: "new Date(0)",
    expect: { error: notJson("the result is a Date") },
  },
  {
    name: "Date.toISOString() is fine",
    source: "new Date(0).toISOString()",
    expect: { value: "1970-01-01T00:00:00.000Z" },
  },
  {
    name: "undefined inside an array",
    source: "[1, undefined]",
    expect: { error: notJson("result\\[1\\] is undefined") },
  },
  { name: "NaN", source: "0 / 0", expect: { error: notJson("the result is NaN") } },
  {
    name: "getter on the result is never called",
    source: "({ get a() { while (true) {} } })",
    expect: { error: notJson('result\\["a"\\] is a getter') },
  },
  {
    name: "Proxy result is never trapped",
    source: "new Proxy({}, { ownKeys() { for (;;); }, getPrototypeOf() { for (;;); } })",
    expect: { error: notJson("the result is a Proxy") },
  },
  {
    name: "Symbol.species subclass result",
    source:
      "(() => { class A extends Array { static get [Symbol.species]() { return Object } } return new A(1, 2, 3).map(x => x) })()",
    expect: {
      error: notJson(
        "the result is a boxed primitive|the result is an object with a custom prototype",
      ),
    },
  },
  {
    name: "Symbol.species on Array is frozen",
    source: "Object.defineProperty(Array, Symbol.species, { get() { return Object } })",
    expect: { error: threw("TypeError: Cannot redefine property") },
  },
  {
    name: "null-prototype object is plain data",
    path: "metadata.annotations",
    source: "Object.assign(Object.create(null), { a: 1 })",
    expect: { value: { a: 1 } },
  },
  // global state
  { name: "globalThis.x = 1", source: "globalThis.x = 1", expect: { error: FROZEN } },
  { name: "sloppy global assignment", source: "y = 1", expect: { error: threw("ReferenceError") } },
  {
    name: "var in a script body stays local",
    source: "var leaked = 1; leaked + 1",
    expect: { value: 2 },
  },
  {
    name: "function declaration stays local",
    source: "function polluted() { return 1 }; polluted()",
    expect: { value: 1 },
  },
  {
    name: "Object.defineProperty(globalThis, ...)",
    source: "Object.defineProperty(globalThis, 'x', { value: 1 })",
    expect: { error: threw("TypeError: Cannot define property x") },
  },
  {
    name: "replacing a helper",
    source: "btoa = () => 'pwned'",
    expect: { error: threw("TypeError: Assignment to constant variable") },
  },
  { name: "helper function properties", source: "btoa.evil = 1", expect: { error: FROZEN } },
];

const PROBE = `JSON.stringify({
  proto: Object.getOwnPropertyNames(Object.prototype).sort(),
  array: Object.getOwnPropertyNames(Array.prototype).sort(),
  globals: Object.getOwnPropertyNames(globalThis).sort(),
  leaks: [typeof x, typeof y, typeof leaked, typeof polluted, typeof Object.prototype.late],
  frozen: [Object.isFrozen(Object.prototype), Object.isFrozen(globalThis), Object.isFrozen(Array), Object.isFrozen(btoa)],
  prepare: typeof Error.prepareStackTrace,
  species: Array[Symbol.species] === Array,
  upper: "abc".toUpperCase(),
  helpers: btoa("x") + virtualToHostDNS("a.b.svc"),
  value,
})`;

async function probeEveryWorker(pool: SandboxPool): Promise<string[]> {
  // 8 single jobs over 2 workers x 2 in-flight slots reach both workers.
  const results = await pool.applyBatch(
    "probe",
    Array.from({ length: 8 }, () => toHost),
  );
  return results.map((r) => {
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    return String(annotationsOf(r.value.objectJson)["a"]);
  });
}

function mainThreadState(): unknown {
  return {
    proto: Object.getOwnPropertyNames(Object.prototype).sort(),
    array: Object.getOwnPropertyNames(Array.prototype).sort(),
    frozen: Object.isFrozen(Object.prototype),
    ses: [
      typeof (globalThis as Record<string, unknown>)["harden"],
      typeof (globalThis as Record<string, unknown>)["lockdown"],
    ],
  };
}

describe("patches/sandbox hostile expressions", function () {
  this.timeout(20_000);
  let pool: SandboxPool;
  let baseline: string;
  let mainBaseline: unknown;

  before(async () => {
    mainBaseline = mainThreadState();
    pool = new SandboxPool({ size: 2, deadlineMs: 100 });
    await pool.loadConfig("probe", annotation(PROBE));
    const first = await probeEveryWorker(pool);
    baseline = first[0]!;
    assert.ok(first.every((p) => p === baseline));
    const parsed = JSON.parse(baseline) as { leaks: string[]; frozen: boolean[]; value: string };
    assert.deepEqual(parsed.leaks, [
      "undefined",
      "undefined",
      "undefined",
      "undefined",
      "undefined",
    ]);
    assert.deepEqual(parsed.frozen, [true, true, true, true]);
    assert.equal(parsed.value, "hello");
  });
  after(() => pool.close());

  afterEach(async () => {
    assert.deepEqual(
      await probeEveryWorker(pool),
      Array.from({ length: 8 }, () => baseline),
    );
    assert.deepEqual(mainThreadState(), mainBaseline);
    assert.deepEqual(mainBaseline, {
      proto: (mainBaseline as { proto: string[] }).proto,
      array: (mainBaseline as { array: string[] }).array,
      frozen: false,
      ses: ["undefined", "undefined"],
    });
  });

  it(`has at least 40 cases (${CASES.length})`, () => {
    assert.ok(CASES.length >= 40);
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const key = `hostile:${c.name}`;
      const load = pool.loadConfig(key, annotation(c.source, c.path));
      if ("loadError" in c.expect) {
        await assert.rejects(load, (err: unknown) => {
          assert.ok(err instanceof PatchError);
          assert.match(err.message, /^patches\[0\]\.expression: /);
          assert.match(err.message, (c.expect as { loadError: RegExp }).loadError);
          return true;
        });
        return;
      }
      await load;
      const start = performance.now();
      const [result] = await pool.applyBatch(key, [toHost]);
      assert.ok(performance.now() - start < 2000, "contained promptly");
      assert.ok(result !== undefined);
      if ("error" in c.expect) {
        assert.ok(!result.ok, `expected an error, got ${result.ok ? result.value.objectJson : ""}`);
        assert.match(result.error.message, c.expect.error);
        return;
      }
      assert.ok(result.ok, result.ok ? "" : result.error.message);
      const annotations = annotationsOf(result.value.objectJson);
      const key2 = c.path === "metadata.annotations" ? undefined : "a";
      const actual =
        key2 === undefined
          ? JSON.parse(result.value.objectJson).metadata.annotations
          : annotations[key2];
      assert.deepEqual(actual, c.expect.value);
    });
  }
});
