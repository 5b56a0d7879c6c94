// The spec checks and warnings of one admission request, for the admission layer to call. Only
// CREATE and UPDATE carry a new object to check.

import type { FieldError } from "../api/field-errors.js";
import { validateTypeMeta } from "./api-version.js";
import { deprecationWarnings } from "./deprecated.js";
import { isObject, own, ownPath } from "./json-fields.js";
import type { KeyRequest } from "./request.js";
import { scopeWarnings } from "./scope.js";
import { validateSpec } from "./spec.js";

/** apiVersion, kind and spec errors of the new object. */
export function validateKeySpec(req: KeyRequest): FieldError[] {
  const obj = writtenObject(req);
  if (!obj) return [];
  return [...validateTypeMeta(obj, req.identity), ...validateSpec(own(obj, "spec"))];
}

/** AdmissionResponse warnings: deprecated fields and unknown scope roles of the new object. */
export function keyWarnings(req: KeyRequest): string[] {
  const obj = writtenObject(req);
  if (!obj) return [];
  const spec = own(obj, "spec");
  return [...deprecationWarnings(spec), ...scopeWarnings(ownPath(spec, ["scope"]), "spec.scope")];
}

function writtenObject(req: KeyRequest): Record<string, unknown> | null {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return null;
  return isObject(req.object) ? req.object : null;
}
