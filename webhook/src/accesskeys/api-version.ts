// apiVersion and kind. Only management.<group-domain>/v1 OwnedAccessKey exists, and anything else
// is denied with a message naming it (docs/decisions.md OAK-1).

import { notSupported, required, type FieldError } from "../shared/field-errors.js";
import type { ResourceIdentity } from "../shared/ownedaccesskey.js";
import { isAbsent, isObject, own, wrongType } from "./json-fields.js";

/** Checks `apiVersion` and `kind` of an object against the one served version. */
export function validateTypeMeta(obj: unknown, identity: ResourceIdentity): FieldError[] {
  const source = isObject(obj) ? obj : {};
  return [
    ...checkExactly(own(source, "apiVersion"), "apiVersion", identity.apiVersion),
    ...checkExactly(own(source, "kind"), "kind", identity.kind),
  ];
}

function checkExactly(value: unknown, path: string, expected: string): FieldError[] {
  if (isAbsent(value) || value === "") return [required(path)];
  if (typeof value !== "string") return [wrongType(path, value, "string")];
  return value === expected ? [] : [notSupported(path, value, [expected])];
}
