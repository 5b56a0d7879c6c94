// Secrets in printed objects. spec.key is the bearer token (or its sha256 in hashed mode): -o
// json|yaml|jsonpath|custom-columns replace it with KEY_MASK unless --show-key. The IdP data
// (spec.identity.connectorData, spec.oidcLogin's tokens) is always replaced.

import { isJsonObject, type JsonObject } from "./go-values.js";

/** What a masked secret reads as; never a valid key (keys are URL-safe base64 or sha256:<hex>). */
export const KEY_MASK = "REDACTED";

const ALWAYS_MASKED: readonly (readonly string[])[] = [
  ["spec", "identity", "connectorData"],
  ["spec", "oidcLogin", "idToken"],
  ["spec", "oidcLogin", "accessToken"],
  ["spec", "oidcLogin", "refreshToken"],
];

/** A copy of `object` with its secrets masked (spec.key too unless `showKey`). */
export function maskSecrets(object: unknown, showKey = false): unknown {
  if (!isJsonObject(object)) return object;
  const paths = showKey ? ALWAYS_MASKED : [["spec", "key"], ...ALWAYS_MASKED];
  let out = object;
  for (const path of paths) out = maskPath(out, path);
  return out;
}

/** Copies only the objects along `path`; leaves the value alone unless it is a non-empty string. */
function maskPath(obj: JsonObject, path: readonly string[]): JsonObject {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(obj, head)) return obj;
  const value = obj[head];
  if (rest.length === 0) {
    return typeof value === "string" && value !== "" ? { ...obj, [head]: KEY_MASK } : obj;
  }
  if (!isJsonObject(value)) return obj;
  const masked = maskPath(value, rest);
  return masked === value ? obj : { ...obj, [head]: masked };
}
