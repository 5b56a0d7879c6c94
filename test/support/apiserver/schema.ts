// Custom resources against their CRD's structural openAPIV3Schema, as apiextensions-apiserver
// treats them: unknown fields are pruned (kept under x-kubernetes-preserve-unknown-fields),
// defaults are applied, then the object is validated (with ajv) and every failure is worded as
// kube-openapi's validator and apiextensions' kubeOpenAPIResultToFieldErrors word it, e.g.
// `spec.ttl: Invalid value: "string": spec.ttl in body must be of type integer: "string"`.
// metadata is not validated by the schema (kube validates ObjectMeta itself).

import AjvModule, { type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import {
  notSupported,
  required,
  tooLong,
  type FieldError,
} from "../../../webhook/src/api/field-errors.js";
import { newBadRequest, newInvalid } from "../../../webhook/src/api/status.js";
import { isCrdType, validateCrd } from "./crds.js";
import type { ResourceType, ResourceRegistry } from "./resources.js";
import type { KubeObject } from "./store.js";

type Schema = Record<string, unknown>;
type Json = Record<string, unknown>;

const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;

// The formats kube-openapi's strfmt registry checks that ajv-formats checks the same way. Others
// (int32, int64, float, double, duration, ...) are ignored, as kube ignores unknown formats.
const CHECKED_FORMATS = ["date", "date-time", "uuid", "email", "hostname", "ipv4", "ipv6", "byte"];

const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ajv, CHECKED_FORMATS as Parameters<typeof addFormats>[1] & string[]);
const compiled = new WeakMap<Schema, ValidateFunction>();

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const asSchema = (v: unknown): Schema | undefined => (isObject(v) ? v : undefined);

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface ValidateOptions {
  /** The request's `fieldValidation` (kubectl sends Strict): unknown fields fail or warn. */
  fieldValidation?: FieldValidation | string;
  /** Warnings for the client (`Warning` headers), appended to. */
  warnings?: string[];
}

/**
 * The write-path hook: for a type with a schema (a CRD's version), prunes unknown fields, applies
 * defaults and validates; returns the object to store or throws a KubeError (400 strict decoding
 * error, 422 Invalid). CustomResourceDefinitions are defaulted and validated as kube does. Other
 * types without a schema pass unchanged.
 */
export function validateAndPrune(
  _registry: ResourceRegistry,
  type: ResourceType,
  obj: KubeObject,
  opts: ValidateOptions = {},
): KubeObject {
  if (isCrdType(type)) return validateCrd(obj);
  const schema = type.schema;
  if (!schema) return obj;
  const copy = structuredClone(obj);
  const unknown: string[] = [];
  pruneAndDefault(copy, schema, "", true, unknown);
  reportUnknownFields(type, unknown, opts);
  const errors = schemaErrors(schema, copy);
  if (errors.length > 0) {
    throw newInvalid({ group: type.group, kind: type.kind }, copy.metadata?.name ?? "", errors);
  }
  return copy;
}

/** kube's strict decoding: Strict fails with 400, Warn adds `unknown field "..."` warnings. */
function reportUnknownFields(type: ResourceType, unknown: string[], opts: ValidateOptions): void {
  if (unknown.length === 0) return;
  const texts = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
  if (opts.fieldValidation === "Strict") {
    const detail = texts.length === 1 ? texts[0]! : texts.join(", ");
    throw newBadRequest(
      `${type.kind} in version ${JSON.stringify(type.version)} cannot be handled as a ${type.kind}: strict decoding error: ${detail}`,
    );
  }
  if (opts.fieldValidation === "Warn") opts.warnings?.push(...texts);
}

// ---- pruning and defaulting -------------------------------------------------------------------

const preserves = (s: Schema): boolean => s["x-kubernetes-preserve-unknown-fields"] === true;
const embedded = (s: Schema): boolean => s["x-kubernetes-embedded-resource"] === true;
const RESOURCE_ROOT_FIELDS = new Set(["apiVersion", "kind", "metadata"]);

/**
 * Removes the fields the schema does not specify (recording their paths), drops nulls of
 * non-nullable fields without a default and fills defaults, in place.
 */
export function pruneAndDefault(
  value: unknown,
  schema: Schema,
  path: string,
  resourceRoot: boolean,
  unknown: string[],
): void {
  if (Array.isArray(value)) {
    const items = asSchema(schema["items"]);
    if (items) {
      value.forEach((v, i) => pruneAndDefault(v, items, `${path}[${i}]`, embedded(items), unknown));
    }
    return;
  }
  if (!isObject(value)) return;
  const props = asSchema(schema["properties"]) ?? {};
  const additional = asSchema(schema["additionalProperties"]);
  for (const key of Object.keys(value)) {
    const child = path ? `${path}.${key}` : key;
    const sub = asSchema(props[key]) ?? additional;
    if (resourceRoot && RESOURCE_ROOT_FIELDS.has(key) && !props[key]) continue;
    if (resourceRoot && key === "metadata") continue;
    if (!sub) {
      if (!preserves(schema) && schema["additionalProperties"] !== true) {
        Reflect.deleteProperty(value, key);
        unknown.push(child);
      }
      continue;
    }
    if (value[key] === null && sub["nullable"] !== true) {
      if (sub["default"] === undefined) Reflect.deleteProperty(value, key);
      else value[key] = structuredClone(sub["default"]);
      continue;
    }
    pruneAndDefault(value[key], sub, child, embedded(sub), unknown);
  }
  applyDefaults(value, props, path, unknown);
}

function applyDefaults(obj: Json, props: Schema, path: string, unknown: string[]): void {
  for (const [key, raw] of Object.entries(props)) {
    const sub = asSchema(raw);
    if (!sub || sub["default"] === undefined || key in obj) continue;
    obj[key] = structuredClone(sub["default"]);
    // Defaults are pruned like any value (kube requires them to be prunable to themselves).
    pruneAndDefault(obj[key], sub, path ? `${path}.${key}` : key, embedded(sub), unknown);
  }
}

// ---- validation -------------------------------------------------------------------------------

/** The field errors of `obj` against the structural schema, worded as kube words them. */
export function schemaErrors(schema: Schema, obj: KubeObject | Json): FieldError[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(toJsonSchema(schema, true));
    compiled.set(schema, validate);
  }
  if (validate(obj)) return [];
  return (validate.errors ?? []).flatMap((e) => fieldErrorOf(e, obj));
}

/** Kube's OpenAPI v3 dialect -> the JSON Schema ajv checks. */
export function toJsonSchema(schema: Schema, resourceRoot = false): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-kubernetes-") || key === "nullable" || key === "default") continue;
    out[key] = convertKeyword(key, value);
  }
  if (schema["x-kubernetes-int-or-string"] === true) out["type"] = ["integer", "string"];
  if (typeof out["format"] === "string" && !CHECKED_FORMATS.includes(out["format"])) {
    delete out["format"];
  }
  // OpenAPI 3.0's boolean exclusiveMinimum/Maximum are draft-07 numbers.
  for (const [bound, exclusive] of [
    ["minimum", "exclusiveMinimum"],
    ["maximum", "exclusiveMaximum"],
  ] as const) {
    if (schema[exclusive] === true) {
      out[exclusive] = schema[bound];
      Reflect.deleteProperty(out, bound);
    } else {
      Reflect.deleteProperty(out, exclusive);
    }
  }
  if (schema["nullable"] === true) allowNull(out);
  if (resourceRoot || embedded(schema)) rootMetadata(out);
  return out;
}

function convertKeyword(key: string, value: unknown): unknown {
  switch (key) {
    case "properties":
    case "patternProperties":
    case "definitions":
      return Object.fromEntries(
        Object.entries(asSchema(value) ?? {}).map(([k, v]) => [k, toJsonSchema(asSchema(v) ?? {})]),
      );
    case "items":
    case "additionalProperties":
    case "not":
      return isObject(value) ? toJsonSchema(value) : value;
    case "allOf":
    case "anyOf":
    case "oneOf":
      return Array.isArray(value) ? value.map((v) => toJsonSchema(asSchema(v) ?? {})) : value;
    default:
      return value;
  }
}

function allowNull(out: Schema): void {
  const t = out["type"];
  if (typeof t === "string") out["type"] = [t, "null"];
  else if (Array.isArray(t)) out["type"] = [...(t as unknown[]), "null"];
  if (Array.isArray(out["enum"])) out["enum"] = [...(out["enum"] as unknown[]), null];
}

/** metadata of a resource is ObjectMeta, checked by kube's own code, not by the schema. */
function rootMetadata(out: Schema): void {
  const props = asSchema(out["properties"]);
  if (props && props["metadata"]) props["metadata"] = { type: "object" };
}

// ---- ajv errors as kube field errors ------------------------------------------------------------

function fieldErrorOf(e: ErrorObject, root: unknown): FieldError[] {
  const { field, value } = locate(root, e.instancePath);
  const p = e.params as Record<string, unknown>;
  const where = `${field} in body`;
  const invalid = (detail: string, bad: unknown = value): FieldError => ({
    type: "Invalid",
    field,
    badValue: bad,
    detail,
  });
  switch (e.keyword) {
    case "type": {
      const want = Array.isArray(p["type"]) ? p["type"].join(",") : String(p["type"]);
      const got = jsonTypeName(value);
      return [
        {
          type: "TypeInvalid",
          field,
          badValue: got,
          detail: `${where} must be of type ${want}: "${got}"`,
        },
      ];
    }
    case "format":
      return [
        {
          type: "TypeInvalid",
          field,
          badValue: value,
          detail: `${where} must be of type ${String(p["format"])}: ${JSON.stringify(value)}`,
        },
      ];
    case "enum":
      return [notSupported(field, value, enumTexts(p["allowedValues"]))];
    case "required":
      return [
        required(field ? `${field}.${String(p["missingProperty"])}` : String(p["missingProperty"])),
      ];
    case "pattern":
      return [invalid(`${where} should match '${String(p["pattern"])}'`)];
    case "minLength":
      return [invalid(`${where} should be at least ${String(p["limit"])} chars long`)];
    case "maxLength":
      return [tooLong(field, Number(p["limit"]))];
    case "minimum":
      return [invalid(`${where} should be greater than or equal to ${String(p["limit"])}`)];
    case "exclusiveMinimum":
      return [invalid(`${where} should be greater than ${String(p["limit"])}`)];
    case "maximum":
      return [invalid(`${where} should be less than or equal to ${String(p["limit"])}`)];
    case "exclusiveMaximum":
      return [invalid(`${where} should be less than ${String(p["limit"])}`)];
    case "multipleOf":
      return [invalid(`${where} should be a multiple of ${String(p["multipleOf"])}`)];
    case "minItems":
      return [invalid(`${where} should have at least ${String(p["limit"])} items`, sizeOf(value))];
    case "maxItems":
    case "maxProperties":
      return [tooMany(field, sizeOf(value), Number(p["limit"]))];
    case "minProperties":
      return [
        invalid(`${where} should have at least ${String(p["limit"])} properties`, sizeOf(value)),
      ];
    case "uniqueItems":
      return [invalid(`${where} shouldn't contain duplicates`, "")];
    default:
      return [invalid(`${where} ${e.message ?? "is invalid"}`)];
  }
}

function tooMany(field: string, actual: number, max: number): FieldError {
  return { type: "TooMany", field, badValue: actual, detail: `must have at most ${max} items` };
}

/** kube's paths: `spec.items[0].name` (a JSON pointer's segments under the resource). */
function locate(root: unknown, pointer: string): { field: string; value: unknown } {
  let field = "";
  let value = root;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(value)) {
      field += `[${seg}]`;
      value = value[Number(seg)];
    } else {
      field = field ? `${field}.${seg}` : seg;
      value = isObject(value) ? value[seg] : undefined;
    }
  }
  return { field, value };
}

/** go-openapi's type names for a JSON value. */
function jsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function enumTexts(values: unknown): string[] {
  if (!Array.isArray(values)) return [];
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
}

function sizeOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  return isObject(value) ? Object.keys(value).length : 0;
}
