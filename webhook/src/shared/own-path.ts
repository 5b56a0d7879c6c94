// Reading a field of untrusted JSON (an object as the API server or a client sent it) by its path,
// through own properties only: `__proto__`, `constructor` and other prototype members never count.

import { isObject } from "./json.js";

/** `obj.a.b…` through own properties of plain objects; undefined when any step is missing. */
export function ownPath(obj: unknown, keys: readonly string[]): unknown {
  let current = obj;
  for (const key of keys) {
    if (!isObject(current)) return undefined;
    current = Object.hasOwn(current, key) ? current[key] : undefined;
  }
  return current;
}
