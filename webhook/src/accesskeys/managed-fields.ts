// metadata.managedFields (docs/reference.md#kube-managed-fields): apimachinery's
// ValidateManagedFields with the Kubernetes <= 1.36 messages. In a cluster kube's field manager
// replaces undecodable entries before admission, so this matters mostly when the webhook is used on
// its own; docs/decisions.md OAK-5 asks for it either way.

import { invalid, tooLong, type FieldError } from "../shared/field-errors.js";
import {
  checkFields,
  checkObject,
  checkString,
  isAbsent,
  isObject,
  own,
  wrongType,
  type FieldCheck,
  type JsonObject,
} from "./json-fields.js";

const PATH = "metadata.managedFields";
/** metav1validation.FieldManagerMaxLength */
export const FIELD_MANAGER_MAX_LENGTH = 128;
/** metav1validation.MaxSubresourceNameLength */
export const MAX_SUBRESOURCE_NAME_LENGTH = 256;

const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const LONE_SURROGATE = /^[\uD800-\uDFFF]$/;

/** Go's %#U for a non-printable rune: `U+0007`. */
const goRune = (cp: number): string => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;

/** ValidateFieldManager: at most 128 bytes, every character printable (position in bytes). */
export function fieldManagerErrors(manager: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  }
  let position = 0;
  for (const ch of manager) {
    // Go's JSON decoder turns a lone surrogate into U+FFFD, which is printable.
    if (!PRINTABLE.test(ch) && !LONE_SURROGATE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      errs.push(
        invalid(path, manager, `invalid character ${goRune(cp)} (at position ${position})`),
      );
    }
    position += byteLength(ch);
  }
  return errs;
}

function operationErrors(op: unknown, path: string): FieldError[] {
  if (!isAbsent(op) && typeof op !== "string") return [wrongType(path, op, "string")];
  const value = typeof op === "string" ? op : "";
  return value === "Apply" || value === "Update"
    ? []
    : [invalid(path, value, "must be `Apply` or `Update`")];
}

function fieldsTypeErrors(type: unknown, path: string): FieldError[] {
  if (!isAbsent(type) && typeof type !== "string") return [wrongType(path, type, "string")];
  return typeof type === "string" && type !== "" && type !== "FieldsV1"
    ? [invalid(path, type, "must be `FieldsV1`")]
    : [];
}

function managerErrors(manager: unknown, path: string): FieldError[] {
  if (!isAbsent(manager) && typeof manager !== "string")
    return [wrongType(path, manager, "string")];
  return typeof manager === "string" ? fieldManagerErrors(manager, path) : [];
}

function subresourceErrors(sub: unknown, path: string): FieldError[] {
  if (!isAbsent(sub) && typeof sub !== "string") return [wrongType(path, sub, "string")];
  return typeof sub === "string" && byteLength(sub) > MAX_SUBRESOURCE_NAME_LENGTH
    ? [tooLong(path, MAX_SUBRESOURCE_NAME_LENGTH)]
    : [];
}

function entryErrors(entry: JsonObject, path: string): FieldError[] {
  return [
    ...operationErrors(own(entry, "operation"), `${path}.operation`),
    ...fieldsTypeErrors(own(entry, "fieldsType"), `${path}.fieldsType`),
    ...managerErrors(own(entry, "manager"), `${path}.manager`),
    ...subresourceErrors(own(entry, "subresource"), `${path}.subresource`),
    // The rest of ManagedFieldsEntry only needs the right JSON type.
    ...checkFields(entry, path, OTHER_ENTRY_FIELDS),
  ];
}

const OTHER_ENTRY_FIELDS: Readonly<Record<string, FieldCheck>> = {
  apiVersion: (v, p) => checkString(v, p),
  time: (v, p) => checkString(v, p),
  fieldsV1: (v, p) => checkObject(v, p, () => []),
};

/** ValidateManagedFields over the whole list. */
export function validateManagedFields(entries: unknown): FieldError[] {
  if (isAbsent(entries)) return [];
  if (!Array.isArray(entries)) return [wrongType(PATH, entries, "array")];
  return (entries as unknown[]).flatMap((entry, i) => {
    const path = `${PATH}[${i}]`;
    return isObject(entry) ? entryErrors(entry, path) : [wrongType(path, entry, "object")];
  });
}
