// What exists in a sandbox child's realm (docs/decisions.md EPS-8). Called before lockdown():
// the constructors below are deleted from the realm itself, not shadowed in the expressions'
// globals, so no route reaches them, a fresh `new Compartment()` included (SES copies its
// universal globals, ArrayBuffer and the typed arrays among them, into every compartment).
//
// Why these: their memory lives outside the V8 heap limit (array buffers, what TextEncoder
// returns), or they block a thread where no deadline can interrupt it (SharedArrayBuffer with
// Atomics.wait), and a patch expression, which maps JSON values to JSON values, needs none of
// them. The process boundary contains them anyway (the server kills a child over its memory
// limit or deadline); removing them makes the cheapest off-heap allocation impossible.
//
// Node's own modules took their references at startup, and the child's host code takes what it
// needs from `hostIntrinsics` below, captured when this module is first evaluated.

export const REMOVED_GLOBALS = [
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
] as const;

/** The intrinsics the child's own (host) code uses after they are gone from the realm. */
export const hostIntrinsics = {
  SharedArrayBuffer,
  Int32Array,
  Float64Array,
  Atomics,
};

export function removeFromRealm(): void {
  for (const name of REMOVED_GLOBALS) Reflect.deleteProperty(globalThis, name);
}
