// Checks a CRD's openAPIV3Schema against the rules kube-apiserver applies before it serves a CRD:
// the structural-schema invariants (apiextensions-apiserver pkg/apiserver/schema/validation.go) and
// the keyword restrictions of CRD validation (pkg/apis/apiextensions/validation/validation.go).
// A pure function: schema in, field errors out, worded and pathed like kube's.

import {
  forbidden,
  invalid,
  notSupported,
  required,
  type FieldError,
} from "../../webhook/src/shared/field-errors.js";

type Node = Record<string, unknown>;
type Level = "root" | "field" | "item";

/** Every keyword of apiextensions v1 JSONSchemaProps; anything else is a typo kube would drop. */
const KNOWN_KEYWORDS = new Set([
  "id",
  "$schema",
  "$ref",
  "description",
  "type",
  "format",
  "title",
  "default",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "multipleOf",
  "enum",
  "maxProperties",
  "minProperties",
  "required",
  "items",
  "allOf",
  "oneOf",
  "anyOf",
  "not",
  "properties",
  "additionalProperties",
  "patternProperties",
  "dependencies",
  "additionalItems",
  "definitions",
  "externalDocs",
  "example",
  "nullable",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-list-type",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
]);

/** Keywords CRD validation forbids outright, with kube's detail texts. */
const UNSUPPORTED: Record<string, string> = {
  id: "id is not supported",
  additionalItems: "additionalItems is not supported",
  patternProperties: "patternProperties is not supported",
  definitions: "definitions is not supported",
  dependencies: "dependencies is not supported",
  $ref: "$ref is not supported",
};

const TYPES = ["array", "boolean", "integer", "number", "object", "string"];

/** String formats kube knows (formats.go, normalised without dashes); others are stripped. */
const STRING_FORMATS = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime",
  "k8s-short-name",
  "k8s-long-name",
]);
const NUMBER_FORMATS: Record<string, readonly string[]> = {
  integer: ["int32", "int64"],
  number: ["float", "double"],
};

/** Inside allOf/anyOf/oneOf/not these must stay unset ("must be empty to be structural"). */
const FORBIDDEN_IN_JUNCTORS: Record<string, string> = {
  type: "must be empty to be structural",
  additionalProperties: "must be undefined to be structural",
  default: "must be undefined to be structural",
  title: "must be empty to be structural",
  description: "must be empty to be structural",
  nullable: "must be false to be structural",
  "x-kubernetes-preserve-unknown-fields": "must be false to be structural",
  "x-kubernetes-embedded-resource": "must be false to be structural",
  "x-kubernetes-int-or-string": "must be false to be structural",
  "x-kubernetes-list-map-keys": "must be empty to be structural",
  "x-kubernetes-list-type": "must be undefined to be structural",
  "x-kubernetes-map-type": "must be undefined to be structural",
  "x-kubernetes-validations": "must be empty to be structural",
};

const JUNCTORS = ["allOf", "anyOf", "oneOf"] as const;

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
const key = (path: string, k: string): string => `${path}.properties[${k}]`;

/** All errors kube would report for `schema`, found at `path` (kube: `...openAPIV3Schema`). */
export function structuralSchemaErrors(schema: unknown, path = "openAPIV3Schema"): FieldError[] {
  return walk(schema, "root", path);
}

function walk(node: unknown, level: Level, path: string): FieldError[] {
  if (!isNode(node)) return [invalid(path, node, "must be a schema object")];
  return [
    ...keywordErrors(node, path),
    ...typeErrors(node, level, path),
    ...arrayErrors(node, path),
    ...objectErrors(node, level, path),
    ...extensionErrors(node, path),
    ...formatErrors(node, path),
    ...(level === "root" ? rootErrors(node, path) : []),
    ...junctorErrors(node, path),
    ...childErrors(node, path),
  ];
}

function childErrors(node: Node, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (isNode(node.properties)) {
    for (const [k, v] of Object.entries(node.properties))
      errors.push(...walk(v, "field", key(path, k)));
  }
  if (isNode(node.additionalProperties)) {
    errors.push(...walk(node.additionalProperties, "field", `${path}.additionalProperties`));
  }
  if (isNode(node.items)) errors.push(...walk(node.items, "item", `${path}.items`));
  return errors;
}

function keywordErrors(node: Node, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const k of Object.keys(node)) {
    if (!KNOWN_KEYWORDS.has(k)) errors.push(forbidden(`${path}.${k}`, "unknown keyword"));
    const unsupported = UNSUPPORTED[k];
    if (unsupported !== undefined) errors.push(forbidden(`${path}.${k}`, unsupported));
  }
  if (node.uniqueItems === true) {
    errors.push(
      forbidden(
        `${path}.uniqueItems`,
        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
      ),
    );
  }
  if (node.type === "null") {
    errors.push(
      forbidden(`${path}.type`, "type cannot be set to null, use nullable as an alternative"),
    );
  }
  return errors;
}

/** "specifies a non-empty type … with the exception of" int-or-string and preserve-unknown-fields. */
function typeErrors(node: Node, level: Level, path: string): FieldError[] {
  const type = node.type;
  if (type === undefined || type === "") {
    if (node["x-kubernetes-embedded-resource"] === true) {
      return [required(`${path}.type`, "must be object if x-kubernetes-embedded-resource is true")];
    }
    if (node["x-kubernetes-int-or-string"] === true) return [];
    if (node["x-kubernetes-preserve-unknown-fields"] === true) return [];
    const where = {
      root: "at the root",
      field: "for specified object fields",
      item: "for specified array items",
    };
    return [required(`${path}.type`, `must not be empty ${where[level]}`)];
  }
  if (typeof type !== "string" || !TYPES.includes(type)) {
    return [notSupported(`${path}.type`, type, TYPES)];
  }
  if (level === "root" && type !== "object") {
    return [invalid(`${path}.type`, type, "must be object at the root")];
  }
  return [];
}

function arrayErrors(node: Node, path: string): FieldError[] {
  if (Array.isArray(node.items)) {
    return [forbidden(`${path}.items`, "items must be a schema object and not an array")];
  }
  if (node.type === "array" && node.items === undefined) {
    return [required(`${path}.items`, "must be specified")];
  }
  return [];
}

/** properties are for structs, additionalProperties for maps; never both ("mutual exclusive"). */
function objectErrors(node: Node, level: Level, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const additional = node.additionalProperties;
  if (additional === undefined) return errors;
  const hasProperties = isNode(node.properties) && Object.keys(node.properties).length > 0;
  if (hasProperties && additional !== true) {
    errors.push(
      forbidden(
        `${path}.additionalProperties`,
        "additionalProperties and properties are mutual exclusive",
      ),
    );
  }
  if (level === "root") {
    errors.push(forbidden(`${path}.additionalProperties`, "must not be used at the root"));
  }
  return errors;
}

function extensionErrors(node: Node, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const preserve = node["x-kubernetes-preserve-unknown-fields"];
  if (preserve !== undefined && preserve !== true) {
    errors.push(
      invalid(
        `${path}.x-kubernetes-preserve-unknown-fields`,
        preserve,
        "must be true or undefined",
      ),
    );
  }
  if (node["x-kubernetes-int-or-string"] === true) {
    if (preserve === true) {
      errors.push(
        invalid(
          `${path}.x-kubernetes-preserve-unknown-fields`,
          true,
          "must be false if x-kubernetes-int-or-string is true",
        ),
      );
    }
    if (node["x-kubernetes-embedded-resource"] === true) {
      errors.push(
        invalid(
          `${path}.x-kubernetes-embedded-resource`,
          true,
          "must be false if x-kubernetes-int-or-string is true",
        ),
      );
    }
  }
  if (node["x-kubernetes-embedded-resource"] === true && node.type !== undefined) {
    if (node.type !== "object") {
      errors.push(
        invalid(
          `${path}.type`,
          node.type,
          "must be object if x-kubernetes-embedded-resource is true",
        ),
      );
    }
  }
  return [...errors, ...listTypeErrors(node, path), ...mapTypeErrors(node, path)];
}

function listTypeErrors(node: Node, path: string): FieldError[] {
  const listType = node["x-kubernetes-list-type"];
  const mapKeys = node["x-kubernetes-list-map-keys"];
  const errors: FieldError[] = [];
  if (listType !== undefined) {
    if (node.type !== "array") {
      errors.push(
        invalid(`${path}.type`, node.type, "must be array if x-kubernetes-list-type is specified"),
      );
    }
    if (typeof listType !== "string" || !["atomic", "set", "map"].includes(listType)) {
      errors.push(
        notSupported(`${path}.x-kubernetes-list-type`, listType, ["atomic", "set", "map"]),
      );
    }
  }
  const hasKeys = Array.isArray(mapKeys) && mapKeys.length > 0;
  if (hasKeys && listType !== "map") {
    errors.push(
      invalid(
        `${path}.x-kubernetes-list-type`,
        listType,
        "must be map if x-kubernetes-list-map-keys is non-empty",
      ),
    );
  }
  if (listType === "map" && !hasKeys) {
    errors.push(
      required(
        `${path}.x-kubernetes-list-map-keys`,
        "must not be empty if x-kubernetes-list-type is map",
      ),
    );
  }
  return errors;
}

function mapTypeErrors(node: Node, path: string): FieldError[] {
  const mapType = node["x-kubernetes-map-type"];
  if (mapType === undefined) return [];
  const errors: FieldError[] = [];
  if (node.type !== "object") {
    errors.push(
      invalid(`${path}.type`, node.type, "must be object if x-kubernetes-map-type is specified"),
    );
  }
  if (mapType !== "atomic" && mapType !== "granular") {
    errors.push(notSupported(`${path}.x-kubernetes-map-type`, mapType, ["atomic", "granular"]));
  }
  return errors;
}

/** kube silently strips formats it does not know, so the schema would not mean what it says. */
function formatErrors(node: Node, path: string): FieldError[] {
  const format = node.format;
  if (format === undefined) return [];
  if (typeof format !== "string") return [invalid(`${path}.format`, format, "must be a string")];
  const type = typeof node.type === "string" ? node.type : "";
  const numeric = NUMBER_FORMATS[type];
  const known = numeric
    ? numeric.includes(format)
    : (type === "" || type === "string") && STRING_FORMATS.has(format.replaceAll("-", ""));
  return known
    ? []
    : [
        invalid(
          `${path}.format`,
          format,
          `is not a format kube supports for ${type || "untyped"} values`,
        ),
      ];
}

/** At the root: kind and apiVersion are strings; metadata restricts name/generateName at most. */
function rootErrors(node: Node, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const props = isNode(node.properties) ? node.properties : {};
  for (const k of ["kind", "apiVersion"]) {
    const child = props[k];
    if (isNode(child) && child.type !== "string") {
      errors.push(invalid(`${key(path, k)}.type`, child.type, "must be string"));
    }
  }
  const metadata = props.metadata;
  if (metadata !== undefined) errors.push(...metadataErrors(metadata, key(path, "metadata")));
  return errors;
}

function metadataErrors(metadata: unknown, path: string): FieldError[] {
  if (!isNode(metadata)) return [invalid(path, metadata, "must be a schema object")];
  const errors: FieldError[] = [];
  if (metadata.type !== "object") {
    errors.push(invalid(`${path}.type`, metadata.type, "must be object"));
  }
  const props = isNode(metadata.properties) ? Object.keys(metadata.properties) : [];
  const others = Object.keys(metadata).filter((k) => k !== "type" && k !== "properties");
  const onlyNames = props.every((p) => p === "name" || p === "generateName");
  if (others.length > 0 || !onlyNames) {
    errors.push(
      forbidden(
        path,
        "must not specify anything other than name and generateName, but metadata is implicitly specified",
      ),
    );
  }
  return errors;
}

/** int-or-string may use `anyOf: [{type: integer}, {type: string}]`, bare or as allOf[0]. */
function isIntOrStringAnyOf(value: unknown): boolean {
  if (!Array.isArray(value) || value.length !== 2) return false;
  const [a, b] = value as unknown[];
  const only = (n: unknown, t: string): boolean =>
    isNode(n) && n.type === t && Object.keys(n).length === 1;
  return only(a, "integer") && only(b, "string");
}

function junctorErrors(node: Node, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const intOrString = node["x-kubernetes-int-or-string"] === true;
  for (const junctor of JUNCTORS) {
    const list = node[junctor];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      errors.push(invalid(`${path}.${junctor}`, list, "must be a list of schemas"));
      continue;
    }
    if (junctor === "anyOf" && intOrString && isIntOrStringAnyOf(list)) continue;
    (list as unknown[]).forEach((nested, i) => {
      const skipAnyOf =
        junctor === "allOf" &&
        i === 0 &&
        intOrString &&
        isNode(nested) &&
        isIntOrStringAnyOf(nested.anyOf);
      errors.push(...nestedErrors(nested, node, `${path}.${junctor}[${i}]`, skipAnyOf));
    });
  }
  if (node.not !== undefined) errors.push(...nestedErrors(node.not, node, `${path}.not`, false));
  return errors;
}

/**
 * A schema inside a junctor may only add value validations: no generic keywords, and every field
 * or item it names must also be specified outside ("the schema also specifies the field/item
 * outside of those logical junctors").
 */
function nestedErrors(
  nested: unknown,
  outer: Node,
  path: string,
  skipAnyOf: boolean,
): FieldError[] {
  if (!isNode(nested)) return [invalid(path, nested, "must be a schema object")];
  const errors: FieldError[] = [];
  for (const [k, detail] of Object.entries(FORBIDDEN_IN_JUNCTORS)) {
    const v = nested[k];
    if (v !== undefined && v !== false && v !== "") errors.push(forbidden(`${path}.${k}`, detail));
  }
  const outerProps = isNode(outer.properties) ? outer.properties : {};
  if (isNode(nested.properties)) {
    for (const [k, child] of Object.entries(nested.properties)) {
      if (k === "metadata") {
        errors.push(forbidden(key(path, k), "must not be specified in a nested context"));
      }
      const outerChild = outerProps[k];
      if (!isNode(outerChild)) {
        errors.push(required(key(path, k), "must be specified outside of the junctor as well"));
      } else {
        errors.push(...nestedErrors(child, outerChild, key(path, k), false));
      }
    }
  }
  if (nested.items !== undefined) {
    if (!isNode(outer.items)) {
      errors.push(required(`${path}.items`, "must be specified outside of the junctor as well"));
    } else {
      errors.push(...nestedErrors(nested.items, outer.items, `${path}.items`, false));
    }
  }
  const withoutAnyOf = skipAnyOf ? { ...nested, anyOf: undefined } : nested;
  return [
    ...errors,
    ...junctorErrors({ ...withoutAnyOf, properties: outer.properties, items: outer.items }, path),
  ];
}
