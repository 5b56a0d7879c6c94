// Hostile expressions, grouped by class of attack. Two suites run them: hostile.test.ts against a
// SandboxPool in the test process (every case, with probes of every child afterwards) and
// hostile-server.test.ts against a running `vgate serve` (the cases on metadata.annotations.a).
// Each case must be contained, a clear error or a harmless result, while a good request is
// answered on time and the server's memory stays bounded; and whatever the outcome, the child that
// ran it stays under its resident limit (plus one poll's growth) unless it was killed for passing it.
//
// An outcome may depend on the machine's speed only where every outcome it can have is accepted.
// Each case was run with deadlines of 15 ms and 1 s besides the suites' 100 ms, standing for a
// machine ~7 times slower and 10 times faster (CPU time: the deadline counts the child's CPU):
// - at 15 ms every case whose expectation is not a wall ended as it does at 100 ms;
// - at 1 s "the parser of a huge eval" finished with its value (191 MiB at most): it expects
//   bombOrValue, as do the string-iteration cases, the split of a 16 Mi string among them, which
//   finishes at 100 ms already here (206 MiB);
// - the array-likes of length 2**32-1 whose work is finite but empty (concat, slice, copyWithin)
//   need 55-107 s of CPU here (2**22 elements took 54-105 ms): only a machine ~500 times faster
//   would finish them, with a small result, which they accept too. join on the same array-like
//   ends in "Invalid string length", a wall; the rest are walls at any speed (a heap or resident
//   limit, V8's length limits, or loops without end).

export type Expect =
  /** The expression ran and its (harmless) result is this; undefined means the key was deleted. */
  | { value: unknown }
  /** Patching the object failed with a message that matches. */
  | { error: RegExp }
  /**
   * A bomb whose size or length a fast machine may compute inside the walls: either it hits one
   * (CONTAINED_BOMB), or it finishes with exactly this bounded result (the child under its
   * resident limit, as for every case). Both are containment; which one depends on the speed.
   */
  | { bombOrValue: unknown }
  /** SES refuses the source when the config is compiled (pool suite only). */
  | { loadError: RegExp };

export interface HostileCase {
  name: string;
  source: string;
  /** Default: metadata.annotations.a, whose value is "hello". */
  path?: "metadata.annotations";
  expect: Expect;
}

const threw = (what: string): RegExp => new RegExp(`the expression threw ${what}`);
const notJson = (what: string): RegExp => new RegExp(`the result is not plain JSON: ${what}`);
/**
 * The deadline. "patching" when the child's monitor did not say in time what ran (a loaded
 * machine: seen with 3 busy loops on 2 CPUs) and the config has several expressions, as the
 * server suite's has: the same kill, only less precisely named.
 */
const TIMEOUT = /(expression|patching) did not finish within 100ms$/;
const ASYNC_TIMEOUT =
  /(asynchronous work left by the expression|patching) did not finish within 100ms$/;
/**
 * A memory or size bomb ends in whichever wall it reaches first: the child's V8 heap, its resident
 * memory, the deadline, V8's own length limits, or the limits on a result. All are containment.
 */
export const CONTAINED_BOMB = new RegExp(
  [
    "exceeded the sandbox memory limit \\((64 MiB heap|256 MiB resident)\\)$",
    "did not finish within 100ms$",
    "the expression threw RangeError: (Invalid (string|array|typed array) length|Maximum call stack size exceeded)",
    "the result is not plain JSON: the result (is larger than|has more than)",
  ].join("|"),
);
/** A wall that ends the child (deadline or memory): only such a job holds a child for long. */
export const CHILD_KILLED = /did not finish within \d+ms$|exceeded the sandbox memory limit/;
/** The pool killed the child for passing its resident limit: the one way past that limit. */
export const KILLED_OVER_RESIDENT = /exceeded the sandbox memory limit \(\d+ MiB resident\)$/;
const NO_CONSTRUCTOR = threw(
  "TypeError: Function.prototype.constructor is not a valid constructor",
);
const FROZEN = threw("TypeError: Cannot (add|assign to read only|define) property");
const NOT_EXTENSIBLE = threw(
  "TypeError: Cannot (add property|define property) \\S+, object is not extensible",
);

/** Every name realm.ts removes: no route may lead to any of them. */
export const REMOVED = [
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
  "Atomics",
  "TextEncoder",
  "TextDecoder",
  "WeakRef",
  "FinalizationRegistry",
  "WebAssembly",
];

/**
 * Walks everything an expression can reach without help: its globals, a fresh Compartment's
 * globals, the Compartment prototype, and the errors every helper throws; reads descriptors only,
 * so no getter runs. Reports what is not frozen (a fresh compartment's own globalThis aside: it is
 * new for each `new Compartment()`) and any function named like a removed constructor.
 */
const REACHABLE = `(() => {
  const removed = ${JSON.stringify(REMOVED)};
  const seen = new Set();
  const unfrozen = [];
  const named = [];
  const visit = (v, at) => {
    if ((typeof v !== "object" && typeof v !== "function") || v === null || seen.has(v)) return;
    seen.add(v);
    if (!Object.isFrozen(v)) unfrozen.push(at);
    if (typeof v === "function") {
      const d = Reflect.getOwnPropertyDescriptor(v, "name");
      if (d && removed.includes(d.value)) named.push(at);
    }
    for (const key of Reflect.ownKeys(v)) {
      const d = Reflect.getOwnPropertyDescriptor(v, key);
      const next = at + "." + String(key);
      if ("value" in d) visit(d.value, next);
      else { visit(d.get, next + "<get>"); visit(d.set, next + "<set>"); }
    }
    visit(Object.getPrototypeOf(v), at + "<proto>");
  };
  visit(globalThis, "globalThis");
  const fresh = new Compartment();
  seen.add(fresh.globalThis);
  for (const key of Reflect.ownKeys(fresh.globalThis)) {
    const d = Reflect.getOwnPropertyDescriptor(fresh.globalThis, key);
    visit("value" in d ? d.value : d.get, "fresh." + String(key));
  }
  visit(Object.getPrototypeOf(fresh), "Compartment.prototype");
  const calls = [() => btoa("\\u20ac"), () => atob("*"), () => btoa({}), () => atob("x".repeat(2 ** 20 + 1)), () => virtualToHostDNS([])];
  for (const [i, call] of calls.entries()) {
    try { call(); unfrozen.push("helper call " + i + " did not throw"); }
    catch (e) { visit(Object.getPrototypeOf(e), "error " + i + "<proto>"); }
  }
  return JSON.stringify({ unfrozen, named, reached: seen.size > 300 });
})()`;

/** Stack traces of every kind of error an expression can make or catch, joined by "|". */
const STACKS = `(() => {
  const stacks = [];
  const grab = (f) => { try { f(); stacks.push("no error"); } catch (e) { stacks.push(String(e && e.stack)); } };
  grab(() => btoa("\\u20ac"));
  grab(() => atob("*"));
  grab(() => virtualToHostDNS({}));
  grab(() => null.x);
  grab(() => { throw new Error("own") });
  grab(() => (function f() { return f() })());
  grab(() => eval("let"));
  grab(() => new Compartment().evaluate("null.x"));
  grab(() => JSON.parse("{"));
  grab(() => [].reduce((a, b) => a));
  stacks.push(String(new Error("made").stack));
  return stacks.join("|");
})()`;

/** What a probe sees in each child after every case: no trace may be left. */
export const PROBE = `JSON.stringify({
  proto: Object.getOwnPropertyNames(Object.prototype).sort(),
  array: Object.getOwnPropertyNames(Array.prototype).sort(),
  globals: Object.getOwnPropertyNames(globalThis).sort(),
  fresh: Object.getOwnPropertyNames(new Compartment().globalThis).sort(),
  leaks: [typeof x, typeof y, typeof leaked, typeof polluted, typeof Object.prototype.late, typeof RegExp.$1],
  frozen: [Object.isFrozen(Object.prototype), Object.isFrozen(globalThis), Object.isFrozen(Array), Object.isFrozen(btoa)],
  errors: [btoa, atob, virtualToHostDNS].map((f) => { try { f({}) } catch (e) { return Object.getOwnPropertyNames(Object.getPrototypeOf(e)).sort().join() } }),
  base64: (() => { try { btoa("\\u20ac") } catch (e) { return [e.name, e.constructor.name, Object.getOwnPropertyNames(Object.getPrototypeOf(e)).sort().join(), typeof e.polluted] } })(),
  prepare: typeof Error.prepareStackTrace,
  species: Array[Symbol.species] === Array,
  upper: "abc".toUpperCase(),
  helpers: btoa("x") + virtualToHostDNS("a.b.svc"),
  value,
})`;

const cpu: HostileCase[] = [
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
  {
    name: "loop that catches the stack overflow and recurses again",
    source: "(function f() { try { f() } catch { f() } })()",
    expect: { error: TIMEOUT },
  },
];

const memory: HostileCase[] = [
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
    name: "split of a 16 Mi string",
    source:
      '(() => { let s = "x"; for (let i = 0; i < 24; i++) s += s; return s.split("").length })()',
    expect: { bombOrValue: 2 ** 24 },
  },
  {
    name: "Object.keys of a huge string",
    source:
      '(() => { let s = "x"; for (let i = 0; i < 26; i++) s += s; return Object.keys(s).length })()',
    expect: { bombOrValue: 2 ** 26 },
  },
  {
    name: "string doubling",
    source: '(() => { let s = "x"; for (;;) s += s; })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "flattened string doubling",
    source: '(() => { let s = "xy"; for (;;) s = (s + s).toUpperCase(); })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "object growth in a loop",
    source: "(() => { const o = {}; for (let i = 0; ; i++) o['k' + i] = { i }; })()",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "memory outside the V8 heap: a regular expression's compiler",
    source: 'new RegExp("(?:" + "ab|".repeat(2e6) + "c)").test("c")',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "memory outside the V8 heap: the parser of a huge eval",
    source: 'eval("[" + "1,".repeat(4e6) + "]").length',
    expect: { bombOrValue: 4e6 },
  },
  {
    name: "registered symbols, which are never collected",
    source: '(() => { for (let i = 0; ; i++) Symbol.for("leak" + i) })()',
    expect: { error: CONTAINED_BOMB },
  },
];

// The dangerous size appears only after a guard could have looked.
const coercions: HostileCase[] = [
  {
    name: "repeat count from valueOf",
    source: '"ab".repeat({ valueOf: () => 2 ** 28 }).length',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "valueOf that is small the first time and huge the second",
    source:
      '(() => { let n = 0; const count = { valueOf: () => (n++ ? 2 ** 28 : 1) }; return "x".repeat(count) + "x".repeat(count) })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "padStart target from valueOf",
    source: "value.padStart({ valueOf: () => 2 ** 30 }).length",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "toString that builds a huge string during concatenation",
    source:
      '"x".concat({ toString() { let s = "y"; for (let i = 0; i < 28; i++) s += s; return s.toUpperCase() } }).length',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "btoa of an object never calls its toString",
    source: "btoa({ toString() { for (;;); } })",
    expect: { error: threw("TypeError: btoa expects a string, not an object") },
  },
  {
    name: "atob of an array never calls its join",
    source: 'atob(Object.assign(["QQ=="], { toString() { for (;;); } }))',
    expect: { error: threw("TypeError: atob expects a string, not an array") },
  },
  {
    name: "virtualToHostDNS of an object with a getter for everything",
    source:
      "virtualToHostDNS(new Proxy({}, { get() { for (;;); }, getPrototypeOf() { for (;;); } }))",
    expect: { error: threw("TypeError: virtualToHostDNS expects a string, not an object") },
  },
  {
    name: "Symbol.toPrimitive that loops",
    source: "`${{ [Symbol.toPrimitive]() { for (;;); } }}`",
    expect: { error: TIMEOUT },
  },
];

const lengthGetters: HostileCase[] = [
  {
    name: "Array.from with a length that grows on every read",
    source:
      "(() => { let n = 0; return Array.from({ get length() { return (n += 2 ** 26) } }).length })()",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "Array.prototype.map on a length that is small, then huge",
    source:
      "(() => { let n = 0; return Array.prototype.map.call({ get length() { return n++ ? 2 ** 32 - 1 : 1 } }, (x) => x).length })()",
    expect: { value: 1 },
  },
  {
    name: "join with a length getter that lies on the second read",
    source:
      "(() => { let n = 0; return Array.prototype.join.call({ get length() { return n++ ? 1 : 2 ** 32 - 1 } }).length })()",
    expect: { error: CONTAINED_BOMB },
  },
];

const iteration: HostileCase[] = [
  {
    name: "spread of a 16 Mi string",
    source: '[..."x".repeat(2 ** 24)].length',
    expect: { bombOrValue: 2 ** 24 },
  },
  {
    name: "Array.from of a 32 Mi string",
    source: 'Array.from("x".repeat(2 ** 25)).length',
    expect: { bombOrValue: 2 ** 25 },
  },
  {
    name: "for-of over a 64 Mi string",
    source: '(() => { let n = 0; for (const c of "x".repeat(2 ** 26)) n++; return n })()',
    expect: { bombOrValue: 2 ** 26 },
  },
  {
    name: "Object.entries of a 16 Mi string",
    source: 'Object.entries("x".repeat(2 ** 24)).length',
    expect: { bombOrValue: 2 ** 24 },
  },
  {
    name: "matchAll over a 16 Mi string",
    source: '[..."x".repeat(2 ** 24).matchAll(/x/g)].length',
    expect: { bombOrValue: 2 ** 24 },
  },
  {
    name: "new Set of a 16 Mi string's characters, then spread",
    source: '[...new Set("x".repeat(2 ** 24))].length',
    expect: { bombOrValue: 1 },
  },
];

const arrayLikes: HostileCase[] = [
  {
    name: "fill on an array-like of length 2**32-1",
    source: "Array.prototype.fill.call({ length: 2 ** 32 - 1 }, 0)",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "join on an array-like of length 2**32-1",
    source: "Array.prototype.join.call({ length: 2 ** 32 - 1 }).length",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "sort on an array-like of length 2**32-1 (V8 aborts the child)",
    source: "Array.prototype.sort.call({ length: 2 ** 32 - 1 })",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "slice on an array-like of length 2**32-1",
    source: "[].slice.call({ length: 2 ** 32 - 1 }).length",
    expect: { bombOrValue: 2 ** 32 - 1 },
  },
  {
    name: "concat of a spreadable array-like of length 2**32-1",
    source: "[].concat({ length: 2 ** 32 - 1, [Symbol.isConcatSpreadable]: true }).length",
    expect: { bombOrValue: 2 ** 32 - 1 },
  },
  {
    name: "indexOf on an array-like of length 2**53-1",
    source: "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)",
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "copyWithin on an array-like of length 2**32-1",
    source: "Array.prototype.copyWithin.call({ length: 2 ** 32 - 1 }, 1, 0)",
    expect: { bombOrValue: { length: 2 ** 32 - 1 } },
  },
  {
    name: "Array.from of an array-like of length 2**32-1",
    source: "Array.from({ length: 2 ** 32 - 1 }).length",
    expect: { error: CONTAINED_BOMB },
  },
];

const helperInputs: HostileCase[] = [
  {
    name: "btoa of a 2 Mi string",
    source: 'btoa("x".repeat(2 ** 21))',
    expect: { error: threw("RangeError: btoa: the input is longer than 1048576 characters") },
  },
  {
    name: "atob of a 16 Mi string",
    source: 'atob("QUFB".repeat(2 ** 22))',
    expect: { error: threw("RangeError: atob: the input is longer than 1048576 characters") },
  },
  {
    name: "virtualToHostDNS of a 4 Mi name",
    source: 'virtualToHostDNS("a".repeat(2 ** 22) + ".b.svc")',
    expect: {
      error: threw("RangeError: virtualToHostDNS: the input is longer than 1048576 characters"),
    },
  },
  {
    name: "btoa at the input limit works",
    source: 'btoa("x".repeat(2 ** 20)).length',
    expect: { value: 1398104 },
  },
  {
    name: "btoa in a loop: every call allocates, the heap wall holds",
    source: '(() => { const kept = []; for (;;) kept.push(btoa("x".repeat(2 ** 20))) })()',
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "helpers take primitives",
    source: '[btoa(12), btoa(true), btoa(null), atob("MTI="), virtualToHostDNS(7)].join()',
    expect: { value: "MTI=,dHJ1ZQ==,bnVsbA==,12,7" },
  },
];

const hostObjects: HostileCase[] = [
  {
    name: "everything reachable is frozen, and nothing removed is reachable",
    source: REACHABLE,
    expect: { value: JSON.stringify({ unfrozen: [], named: [], reached: true }) },
  },
  {
    name: "no stack trace shows a host path (or any frame)",
    source: STACKS,
    expect: { value: Array.from({ length: 11 }, () => "").join("|") },
  },
  {
    name: "a fresh Compartment has none of the removed globals",
    source: `new Compartment().evaluate(${JSON.stringify(REMOVED.map((n) => `typeof ${n}`).join(" + "))})`,
    expect: { value: REMOVED.map(() => "undefined").join("") },
  },
  {
    name: "a fresh Compartment's intrinsics are the frozen shared ones",
    source:
      "(() => { const g = new Compartment().globalThis; return [g.Array === Array, Object.isFrozen(g.Array.prototype), Object.isFrozen(g.Function), Object.isFrozen(g.Compartment)].join() })()",
    expect: { value: "true,true,true,true" },
  },
  {
    name: "writing to a fresh Compartment's globals stays in it",
    source:
      '(() => { const c = new Compartment(); c.globalThis.polluted = 1; c.evaluate("globalThis.y = 2"); return typeof polluted + typeof y + new Compartment().evaluate("typeof polluted + typeof y") })()',
    expect: { value: "undefinedundefinedundefinedundefined" },
  },
  {
    name: "a fresh Compartment's intrinsics cannot be changed from inside it",
    source: 'new Compartment().evaluate("Array.prototype.polluted = 1")',
    expect: { error: FROZEN },
  },
  {
    name: "a Compartment endowed by the expression gets nothing more",
    source:
      'new Compartment({ __options__: true, globals: { leak: value } }).evaluate("typeof process + typeof require + leak")',
    expect: { value: "undefinedundefinedhello" },
  },
  {
    name: "host error prototype (btoa) cannot be written",
    source:
      '(() => { try { btoa("\\u20ac") } catch (e) { Object.getPrototypeOf(e).polluted = 1 } })()',
    expect: { error: NOT_EXTENSIBLE },
  },
  {
    name: "host error prototype (atob) cannot be changed through the constructor",
    source:
      '(() => { try { atob("*") } catch (e) { e.constructor.prototype.toString = () => "pwned" } })()',
    expect: { error: FROZEN },
  },
  {
    name: "host error class cannot be re-parented",
    source:
      '(() => { try { btoa("\\u20ac") } catch (e) { Object.setPrototypeOf(Object.getPrototypeOf(e), null) } })()',
    expect: { error: threw("TypeError") },
  },
  {
    name: "host TypeError prototype cannot be written",
    source:
      "(() => { try { virtualToHostDNS({}) } catch (e) { Object.getPrototypeOf(e).x = 1 } })()",
    expect: { error: NOT_EXTENSIBLE },
  },
  {
    name: "a caught host error's own properties are the caller's only",
    source:
      '(() => { try { btoa("\\u20ac") } catch (e) { e.message = "changed"; e.polluted = 1; return e.message } })()',
    expect: { value: "changed" },
  },
  {
    name: "helper function source and properties are read-only",
    source:
      '(() => { btoa.prototype && (btoa.prototype.x = 1); return Object.isFrozen(btoa) && !("prototype" in btoa) })()',
    expect: { value: true },
  },
];

const pollution: HostileCase[] = [
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
  {
    name: "RegExp legacy statics carry nothing to the next evaluation",
    source: '(/(secret)/.exec("secret"), typeof RegExp.$1 + typeof RegExp.lastMatch)',
    expect: { value: "undefinedundefined" },
  },
  {
    name: "Symbol.for registry holds no value",
    source: '(Symbol.for("planted"), Symbol.keyFor(Symbol.for("planted")))',
    expect: { value: "planted" },
  },
];

const evaluators: HostileCase[] = [
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
    name: "a host error's constructor chain",
    source:
      '(() => { try { btoa("\\u20ac") } catch (e) { return e.constructor.constructor("return typeof process")() } })()',
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
    name: "typed arrays, array buffers and encoders do not exist",
    source:
      "[typeof Uint8Array, typeof ArrayBuffer, typeof TextEncoder, typeof DataView, typeof WeakRef].join()",
    expect: { value: "undefined,undefined,undefined,undefined,undefined" },
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
];

const errorsAndAsync: HostileCase[] = [
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
    name: "microtasks queued through await in an async function",
    source: "((async () => { for (;;) await null })(), 'returned')",
    expect: { error: ASYNC_TIMEOUT },
  },
  {
    name: "async IIFE result",
    source: "(async () => {})()",
    expect: { error: notJson("the result is a Promise") },
  },
  {
    name: "unhandled rejection does not crash the child",
    source: "(Promise.reject(new Error('boom')), 'returned')",
    expect: { value: "returned" },
  },
  {
    name: "late prototype write from a microtask",
    source: "(Promise.resolve().then(() => { Object.prototype.late = 1 }), 'returned')",
    expect: { value: "returned" },
  },
];

const results: HostileCase[] = [
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
    expect: { error: CONTAINED_BOMB },
  },
  {
    name: "array of 200000 numbers",
    source: "new Array(200000).fill(1)",
    expect: { error: notJson("the result has more than 100000 values") },
  },
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
];

const globals: HostileCase[] = [
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
  {
    name: "the value getter of a script cannot be replaced",
    source: 'Object.defineProperty(globalThis, "value", { get: () => "pwned" }); 1',
    expect: { error: threw("TypeError: Cannot redefine property: value") },
  },
];

export const CASES: HostileCase[] = [
  ...cpu,
  ...memory,
  ...coercions,
  ...lengthGetters,
  ...iteration,
  ...arrayLikes,
  ...helperInputs,
  ...hostObjects,
  ...pollution,
  ...evaluators,
  ...errorsAndAsync,
  ...results,
  ...globals,
];

/** A host file path, a stack frame or a Node internal in a message means the host leaked into it. */
export const HOST_DETAIL = /file:\/\/|node:internal|\/dist\/|\.[cm]?js:\d+|\n\s*at /;
