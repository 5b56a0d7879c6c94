// Type checks for fields of untrusted JSON. kube-apiserver hands the webhook whatever the client
// sent, so any field may hold any JSON type. A wrong type becomes a TypeInvalid field error worded
// like the CRD schema validator's (`must be of type string`); it never throws.

import { OMIT_VALUE, typeInvalid, type FieldError } from "../shared/field-errors.js";
import { isObject, type JsonObject } from "../shared/json.js";

export { isObject, type JsonObject };
export type JsonType = "string" | "boolean" | "integer" | "array" | "object";

/** Checks one field value found at `path`; returns its errors. */
export type FieldCheck = (value: unknown, path: string) => FieldError[];

/** An own property only: `__proto__`, `constructor` and other prototype members never count. */
export function own(obj: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * Absent fields are not checked. A CRD prunes `null` from non-nullable fields ("null values for
 * fields that … don't specify nullable … will be pruned"), so null counts as absent too.
 */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** Whether Go's `omitempty` would keep the value: absent, null, "", false, 0 and [] are unset. */
export function isSet(value: unknown): boolean {
  if (isAbsent(value) || value === "" || value === false || value === 0) return false;
  return !(Array.isArray(value) && value.length === 0);
}

/** TypeInvalid, with the value hidden when it is (or may contain) a secret. */
export function wrongType(
  path: string,
  value: unknown,
  type: JsonType,
  secret = false,
): FieldError {
  return typeInvalid(path, secret ? OMIT_VALUE : value, `must be of type ${type}`);
}

export function checkString(value: unknown, path: string, secret = false): FieldError[] {
  if (isAbsent(value) || typeof value === "string") return [];
  return [wrongType(path, value, "string", secret)];
}

export function checkBoolean(value: unknown, path: string): FieldError[] {
  if (isAbsent(value) || typeof value === "boolean") return [];
  return [wrongType(path, value, "boolean")];
}

/** A list of strings; `each` adds checks on every string item. */
export function checkStringList(
  value: unknown,
  path: string,
  each?: (item: string, path: string) => FieldError[],
): FieldError[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return [wrongType(path, value, "array")];
  return (value as unknown[]).flatMap((item, i) => {
    const itemPath = `${path}[${i}]`;
    if (typeof item !== "string") return [wrongType(itemPath, item, "string")];
    return each ? each(item, itemPath) : [];
  });
}

/** A list of objects, each checked by `each`. */
export function checkObjectList(
  value: unknown,
  path: string,
  each: (item: JsonObject, path: string) => FieldError[],
): FieldError[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return [wrongType(path, value, "array")];
  return (value as unknown[]).flatMap((item, i) => {
    const itemPath = `${path}[${i}]`;
    return isObject(item) ? each(item, itemPath) : [wrongType(itemPath, item, "object")];
  });
}

/** An object checked by `each`; `secret` hides a wrong-typed value that may hold secrets. */
export function checkObject(
  value: unknown,
  path: string,
  each: (obj: JsonObject, path: string) => FieldError[],
  secret = false,
): FieldError[] {
  if (isAbsent(value)) return [];
  return isObject(value) ? each(value, path) : [wrongType(path, value, "object", secret)];
}

/** map[string]string; keys are rendered as `path[key]`, as apimachinery's field.Path.Key does. */
export function checkStringMap(value: unknown, path: string): FieldError[] {
  if (isAbsent(value)) return [];
  if (!isObject(value)) return [wrongType(path, value, "object")];
  return Object.entries(value).flatMap(([key, item]) =>
    typeof item === "string" ? [] : [wrongType(`${path}[${key}]`, item, "string")],
  );
}

/** Runs a table of field checks over the own fields of `obj`; unknown fields are ignored. */
export function checkFields(
  obj: Readonly<Record<string, unknown>>,
  path: string,
  checks: Readonly<Record<string, FieldCheck>>,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, check] of entriesOf(checks)) {
    const found = check(own(obj, key), `${path}.${key}`);
    for (const e of found) errors.push(e);
  }
  return errors;
}

// The check tables are constants; their entries are listed once, not on every request.
const tableEntries = new WeakMap<object, [string, FieldCheck][]>();

function entriesOf(checks: Readonly<Record<string, FieldCheck>>): [string, FieldCheck][] {
  let entries = tableEntries.get(checks);
  if (!entries) tableEntries.set(checks, (entries = Object.entries(checks)));
  return entries;
}
