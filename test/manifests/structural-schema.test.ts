// The structural-schema checker on schemas kube accepts and on each kind it refuses.

import assert from "node:assert/strict";
import { fieldErrorText } from "../../webhook/src/shared/field-errors.js";
import { structuralSchemaErrors } from "./structural-schema.js";

type Json = Record<string, unknown>;

const texts = (schema: unknown): string[] => structuralSchemaErrors(schema).map(fieldErrorText);

/** A root schema whose `spec` is `spec`. */
const withSpec = (spec: Json): Json => ({ type: "object", properties: { spec } });

describe("structuralSchemaErrors", () => {
  it("accepts typed objects, arrays, maps and the int-or-string and preserve exceptions", () => {
    const schema = {
      type: "object",
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        metadata: { type: "object", properties: { name: { type: "string", maxLength: 63 } } },
        spec: {
          type: "object",
          required: ["size"],
          properties: {
            size: { type: "integer", format: "int64", minimum: 0 },
            tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
            labels: { type: "object", additionalProperties: { type: "string" } },
            port: {
              "x-kubernetes-int-or-string": true,
              anyOf: [{ type: "integer" }, { type: "string" }],
            },
            target: {
              "x-kubernetes-int-or-string": true,
              allOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }, { pattern: "^\\d" }],
            },
            raw: { "x-kubernetes-preserve-unknown-fields": true },
            when: { type: "string", format: "date-time" },
            choice: {
              type: "object",
              properties: { a: { type: "string" }, b: { type: "string" } },
              oneOf: [{ required: ["a"] }, { required: ["b"] }],
              not: { properties: { a: { enum: ["x"] } } },
            },
          },
        },
      },
    };
    assert.deepEqual(texts(schema), []);
  });

  it("requires a type at the root, on fields and on items", () => {
    assert.deepEqual(texts({ properties: {} }), [
      "openAPIV3Schema.type: Required value: must not be empty at the root",
    ]);
    assert.deepEqual(texts(withSpec({ properties: { a: {} }, type: "object" })), [
      "openAPIV3Schema.properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
    ]);
    assert.deepEqual(texts(withSpec({ type: "array", items: { description: "x" } })), [
      "openAPIV3Schema.properties[spec].items.type: Required value: must not be empty for specified array items",
    ]);
    assert.deepEqual(texts({ type: "string" }), [
      'openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    ]);
  });

  it("requires items on arrays, as one schema", () => {
    assert.deepEqual(texts(withSpec({ type: "array" })), [
      "openAPIV3Schema.properties[spec].items: Required value: must be specified",
    ]);
    assert.deepEqual(texts(withSpec({ type: "array", items: [{ type: "string" }] })), [
      "openAPIV3Schema.properties[spec].items: Forbidden: items must be a schema object and not an array",
    ]);
  });

  it("refuses additionalProperties next to properties, and at the root", () => {
    const both = withSpec({
      type: "object",
      properties: { a: { type: "string" } },
      additionalProperties: { type: "string" },
    });
    assert.deepEqual(texts(both), [
      "openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
    ]);
    assert.deepEqual(texts({ type: "object", additionalProperties: { type: "string" } }), [
      "openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
    ]);
  });

  it("allows only name and generateName under metadata, and string kind/apiVersion", () => {
    const labels = {
      type: "object",
      properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
    };
    assert.deepEqual(texts(labels), [
      "openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ]);
    const described = {
      type: "object",
      properties: { metadata: { type: "object", description: "meta" } },
    };
    assert.equal(texts(described).length, 1);
    assert.deepEqual(texts({ type: "object", properties: { kind: { type: "integer" } } }), [
      'openAPIV3Schema.properties[kind].type: Invalid value: "integer": must be string',
    ]);
  });

  it("refuses keywords kube does not support, and unknown ones", () => {
    const cases: [Json, string][] = [
      [
        { type: "array", items: { type: "string" }, uniqueItems: true },
        "uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
      ],
      [{ type: "string", $ref: "#/x" }, "$ref: Forbidden: $ref is not supported"],
      [
        { type: "object", patternProperties: {} },
        "patternProperties: Forbidden: patternProperties is not supported",
      ],
      [
        { type: "string", additionalproperties: {} },
        "additionalproperties: Forbidden: unknown keyword",
      ],
    ];
    for (const [spec, text] of cases) {
      assert.deepEqual(texts(withSpec(spec)), [`openAPIV3Schema.properties[spec].${text}`]);
    }
    assert.ok(
      texts(withSpec({ type: "null" })).includes(
        "openAPIV3Schema.properties[spec].type: Forbidden: type cannot be set to null, use nullable as an alternative",
      ),
    );
  });

  it("checks the x-kubernetes extensions", () => {
    assert.deepEqual(
      texts(withSpec({ type: "object", "x-kubernetes-preserve-unknown-fields": false })),
      [
        "openAPIV3Schema.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
      ],
    );
    assert.deepEqual(texts(withSpec({ type: "string", "x-kubernetes-list-type": "atomic" })), [
      'openAPIV3Schema.properties[spec].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
    ]);
    assert.deepEqual(
      texts(
        withSpec({ type: "array", items: { type: "object" }, "x-kubernetes-list-type": "map" }),
      ),
      [
        "openAPIV3Schema.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
      ],
    );
    assert.deepEqual(
      texts(
        withSpec({ type: "array", items: { type: "string" }, "x-kubernetes-list-type": "bag" }),
      ),
      [
        'openAPIV3Schema.properties[spec].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"',
      ],
    );
    assert.deepEqual(texts(withSpec({ type: "string", "x-kubernetes-map-type": "atomic" })), [
      'openAPIV3Schema.properties[spec].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified',
    ]);
    assert.deepEqual(
      texts(
        withSpec({
          "x-kubernetes-int-or-string": true,
          "x-kubernetes-preserve-unknown-fields": true,
        }),
      ),
      [
        "openAPIV3Schema.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
      ],
    );
  });

  it("refuses generic keywords inside junctors, except the int-or-string patterns", () => {
    const anyOfTypes = withSpec({ anyOf: [{ type: "integer" }, { type: "string" }] });
    assert.deepEqual(texts(anyOfTypes), [
      "openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
      "openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural",
      "openAPIV3Schema.properties[spec].anyOf[1].type: Forbidden: must be empty to be structural",
    ]);
    const described = withSpec({ type: "string", allOf: [{ description: "x", pattern: "a" }] });
    assert.deepEqual(texts(described), [
      "openAPIV3Schema.properties[spec].allOf[0].description: Forbidden: must be empty to be structural",
    ]);
  });

  it("requires fields named inside a junctor to be specified outside too", () => {
    const schema = withSpec({
      type: "object",
      properties: { a: { type: "string" } },
      anyOf: [{ properties: { b: { minLength: 1 } } }, { properties: { a: { type: "string" } } }],
    });
    assert.deepEqual(texts(schema), [
      "openAPIV3Schema.properties[spec].anyOf[0].properties[b]: Required value: must be specified outside of the junctor as well",
      "openAPIV3Schema.properties[spec].anyOf[1].properties[a].type: Forbidden: must be empty to be structural",
    ]);
  });

  it("refuses formats kube would silently strip", () => {
    assert.deepEqual(texts(withSpec({ type: "string", format: "date-tim" })), [
      'openAPIV3Schema.properties[spec].format: Invalid value: "date-tim": is not a format kube supports for string values',
    ]);
    assert.deepEqual(texts(withSpec({ type: "string", format: "int64" })), [
      'openAPIV3Schema.properties[spec].format: Invalid value: "int64": is not a format kube supports for string values',
    ]);
    assert.deepEqual(texts(withSpec({ type: "integer", format: "int64" })), []);
  });
});
