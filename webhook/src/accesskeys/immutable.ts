// What an UPDATE may not change (docs/reference.md#kube-update-immutability; for generation,
// docs/reference.md#kube-labels-annotations): apimachinery's ValidateObjectMetaAccessorUpdate for
// name, namespace, uid, creationTimestamp, resourceVersion and generation. kube's rest.BeforeUpdate
// restores uid, creationTimestamp and generation when the client leaves them out, so an omitted
// value is accepted here too; a different value is rejected (docs/decisions.md OAK-5) instead of
// being silently reverted.

import { invalid, type FieldError } from "../shared/field-errors.js";
import type { ObjectMeta } from "../shared/ownedaccesskey.js";
import { RFC3339_MESSAGE } from "./deletion.js";
import { parseRfc3339 } from "../shared/rfc3339.js";
import { isAbsent, wrongType } from "./json-fields.js";

/** apimachinery's FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE = "field is immutable";

const ownValue = (meta: ObjectMeta, key: keyof ObjectMeta): unknown =>
  Object.hasOwn(meta, key) ? meta[key] : undefined;

const asString = (v: unknown): string => (typeof v === "string" ? v : "");

/** metadata.generation: never negative; on UPDATE (`oldMeta` set) never lower than before. */
export function validateGeneration(meta: ObjectMeta, oldMeta: ObjectMeta | null): FieldError[] {
  const path = "metadata.generation";
  const generation = ownValue(meta, "generation");
  if (isAbsent(generation)) return [];
  if (!Number.isSafeInteger(generation)) return [wrongType(path, generation, "integer")];
  const value = generation as number;
  const errs: FieldError[] = [];
  if (value < 0) errs.push(invalid(path, value, "must be greater than or equal to 0"));
  const old = oldMeta ? ownValue(oldMeta, "generation") : undefined;
  if (Number.isSafeInteger(old) && value < (old as number)) {
    errs.push(invalid(path, value, "must not be decremented"));
  }
  return errs;
}

/**
 * name and namespace compare as strings; absent is "". A wrong type is validateName's to report.
 */
function sameString(
  meta: ObjectMeta,
  oldMeta: ObjectMeta,
  key: "name" | "namespace",
): FieldError[] {
  const value = ownValue(meta, key);
  if (!isAbsent(value) && typeof value !== "string") return [];
  const next = asString(value);
  return next === asString(ownValue(oldMeta, key))
    ? []
    : [invalid(`metadata.${key}`, next, FIELD_IMMUTABLE)];
}

function uidErrors(meta: ObjectMeta, oldMeta: ObjectMeta): FieldError[] {
  const uid = ownValue(meta, "uid");
  if (isAbsent(uid) || uid === "") return [];
  if (typeof uid !== "string") return [wrongType("metadata.uid", uid, "string")];
  return uid === asString(ownValue(oldMeta, "uid"))
    ? []
    : [invalid("metadata.uid", uid, FIELD_IMMUTABLE)];
}

function creationTimestampErrors(meta: ObjectMeta, oldMeta: ObjectMeta): FieldError[] {
  const path = "metadata.creationTimestamp";
  const ts = ownValue(meta, "creationTimestamp");
  if (isAbsent(ts)) return [];
  if (typeof ts !== "string") return [wrongType(path, ts, "string")];
  const next = parseRfc3339(ts);
  if (next === null) return [invalid(path, ts, RFC3339_MESSAGE)];
  const oldTs = ownValue(oldMeta, "creationTimestamp");
  const prev = typeof oldTs === "string" ? parseRfc3339(oldTs) : null;
  // Equal instants in different notations are the same metav1.Time.
  const same = prev === null ? ts === oldTs : next === prev;
  return same ? [] : [invalid(path, ts, FIELD_IMMUTABLE)];
}

function resourceVersionErrors(meta: ObjectMeta): FieldError[] {
  const path = "metadata.resourceVersion";
  const rv = ownValue(meta, "resourceVersion");
  if (!isAbsent(rv) && typeof rv !== "string") return [wrongType(path, rv, "string")];
  // Custom resources do not allow unconditional updates.
  return rv ? [] : [invalid(path, "", "must be specified for an update")];
}

/** The UPDATE-only rules of ValidateObjectMetaAccessorUpdate, in kube's order. */
export function validateImmutableMetadata(meta: ObjectMeta, oldMeta: ObjectMeta): FieldError[] {
  return [
    ...resourceVersionErrors(meta),
    ...validateGeneration(meta, oldMeta),
    ...sameString(meta, oldMeta, "name"),
    ...sameString(meta, oldMeta, "namespace"),
    ...uidErrors(meta, oldMeta),
    ...creationTimestampErrors(meta, oldMeta),
  ];
}
