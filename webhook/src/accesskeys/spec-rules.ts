// The spec checks and warnings of one admission request, for the admission layer to call. Only
// CREATE and UPDATE carry a new object to check.

import { required, type FieldError } from "../shared/field-errors.js";
import { validateTypeMeta } from "./api-version.js";
import { deprecationWarnings } from "./deprecated.js";
import { isObject, isSet, own } from "./json-fields.js";
import { ownPath } from "../shared/own-path.js";
import type { KeyRequest } from "./request.js";
import { scopeWarnings } from "./scope.js";
import { validateSpec } from "./spec.js";

/** apiVersion, kind and spec errors of the new object. */
export function validateKeySpec(req: KeyRequest): FieldError[] {
  const obj = writtenObject(req);
  if (!obj) return [];
  const spec = own(obj, "spec");
  return [
    ...validateTypeMeta(obj, req.identity),
    ...validateSpec(spec),
    ...serviceAccountTtl(spec),
  ];
}

const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

/**
 * A key that logs in as a service account must expire (docs/decisions.md OAK-23): a service
 * account's own tokens are bound to it and short-lived, and a key would otherwise outlive the
 * service account it names.
 */
function serviceAccountTtl(spec: unknown): FieldError[] {
  const owner = ["user", "subject"].map((f) => ownPath(spec, [f])).find((v) => isSet(v));
  if (typeof owner !== "string" || !owner.startsWith(SERVICE_ACCOUNT_PREFIX)) return [];
  const ttl = ownPath(spec, ["ttl"]);
  if (typeof ttl === "number" && ttl > 0) return [];
  return [
    required(
      "spec.ttl",
      "a key that logs in as a service account must expire: set spec.ttl (seconds), e.g. 86400",
    ),
  ];
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
