// Defaults filled in on CREATE (docs/decisions.md OAK-8), so that a bare `spec: {}` becomes a
// usable key owned by the caller, as Loft's server does (docs/reference.md#loft-server-defaults). A
// field is only filled when it is missing or "": a value of the wrong type is left for validation
// to reject.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { isObject, own, type JsonObject } from "./json-fields.js";
import { generateAccessKey } from "../shared/key-generation.js";

export interface DefaultsRequest {
  /** The requesting user (request.userInfo.username). */
  username: string;
  /** The final object name, which may be a generated one. */
  name: string;
}

/** Returns a deep copy of `obj` with the CREATE defaults applied; `obj` is never changed. */
export function applyCreateDefaults(
  obj: OwnedAccessKey,
  req: DefaultsRequest,
  newKey: () => string = generateAccessKey,
): OwnedAccessKey {
  const out = structuredClone(obj);
  if (!isObject(out)) return out;
  if (isEmpty(own(out, "spec"))) out.spec = {};
  const spec: unknown = own(out, "spec");
  if (isObject(spec)) fillSpec(spec, req, newKey);
  return out;
}

function fillSpec(spec: JsonObject, req: DefaultsRequest, newKey: () => string): void {
  fill(spec, "key", newKey);
  // "If none of user / team / subject is set, set spec.user to the requesting username."
  if (["user", "team", "subject"].every((k) => isEmpty(own(spec, k)))) {
    fill(spec, "user", () => req.username);
  }
  fill(spec, "type", () => "User");
  fill(spec, "displayName", () => req.name);
}

/** Sets `spec[key]` when it is missing or "", unless the default itself is empty. */
function fill(spec: JsonObject, key: string, value: () => string): void {
  if (!isEmpty(own(spec, key))) return;
  const v = value();
  if (v !== "") spec[key] = v;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}
