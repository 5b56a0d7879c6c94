// Custom resources against their structural schema: kube's pruning, defaulting and error texts.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import { ResourceRegistry, type ResourceType } from "./resources.js";
import { validateAndPrune } from "./schema.js";
import type { KubeObject } from "./store.js";

const SCHEMA = {
  type: "object",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object", properties: { name: { type: "string", maxLength: 3 } } },
    spec: {
      type: "object",
      required: ["user"],
      properties: {
        user: { type: "string", pattern: "^[a-z]+$", minLength: 2, maxLength: 8 },
        ttl: { type: "integer", format: "int64", minimum: 0, maximum: 100 },
        kind: { type: "string", enum: ["User", "Team"] },
        port: { "x-kubernetes-int-or-string": true },
        note: { type: "string", nullable: true },
        mode: { type: "string", default: "fast" },
        created: { type: "string", format: "date-time" },
        groups: { type: "array", maxItems: 2, items: { type: "string" } },
        rules: {
          type: "array",
          items: { type: "object", properties: { verb: { type: "string" } } },
        },
        labels: { type: "object", additionalProperties: { type: "string" } },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          properties: { spec: { type: "object", properties: { a: { type: "string" } } } },
        },
      },
    },
    status: { type: "object", properties: { phase: { type: "string" } } },
  },
};

const TYPE: ResourceType = {
  group: "example.com",
  version: "v1",
  resource: "widgets",
  singular: "widget",
  kind: "Widget",
  namespaced: false,
  verbs: ["create", "get"],
  crd: "widgets.example.com",
  schema: SCHEMA,
};

const registry = new ResourceRegistry();
const widget = (
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w1" },
  spec: { user: "alice", ...spec },
  ...extra,
});

function failure(spec: Record<string, unknown>): KubeError {
  try {
    validateAndPrune(registry, TYPE, widget(spec));
  } catch (err) {
    assert.ok(err instanceof KubeError);
    return err;
  }
  assert.fail("expected a KubeError");
}

describe("apiserver schema: validateAndPrune", () => {
  it("answers a wrong type with kube's 422 text", () => {
    const err = failure({ ttl: "string" });
    assert.equal(err.code, 422);
    assert.equal(err.reason, "Invalid");
    assert.equal(
      err.message,
      'Widget.example.com "w1" is invalid: spec.ttl: Invalid value: "string": spec.ttl in body must be of type integer: "string"',
    );
    assert.deepEqual(err.details?.causes, [
      {
        reason: "FieldValueTypeInvalid",
        message: 'Invalid value: "string": spec.ttl in body must be of type integer: "string"',
        field: "spec.ttl",
      },
    ]);
  });

  it("words enum, required, pattern, length, bounds, maxItems and format failures as kube does", () => {
    const text = (spec: Record<string, unknown>): string =>
      failure(spec).message.replace('Widget.example.com "w1" is invalid: ', "");
    assert.equal(
      text({ kind: "x" }),
      'spec.kind: Unsupported value: "x": supported values: "User", "Team"',
    );
    assert.equal(failure({ user: undefined }).message.endsWith("spec.user: Required value"), true);
    assert.equal(
      text({ user: "Bob" }),
      `spec.user: Invalid value: "Bob": spec.user in body should match '^[a-z]+$'`,
    );
    assert.equal(
      text({ user: "a" }),
      'spec.user: Invalid value: "a": spec.user in body should be at least 2 chars long',
    );
    assert.equal(text({ user: "abcdefghij" }), "spec.user: Too long: may not be more than 8 bytes");
    assert.equal(
      text({ ttl: -1 }),
      "spec.ttl: Invalid value: -1: spec.ttl in body should be greater than or equal to 0",
    );
    assert.equal(
      text({ ttl: 101 }),
      "spec.ttl: Invalid value: 101: spec.ttl in body should be less than or equal to 100",
    );
    assert.equal(
      text({ groups: ["a", "b", "c"] }),
      "spec.groups: Too many: 3: must have at most 2 items",
    );
    assert.equal(
      text({ created: "yesterday" }),
      'spec.created: Invalid value: "yesterday": spec.created in body must be of type date-time: "yesterday"',
    );
    assert.equal(
      text({ groups: [1] }),
      'spec.groups[0]: Invalid value: "integer": spec.groups[0] in body must be of type string: "integer"',
    );
  });

  it("lists several errors as kube's aggregate", () => {
    const err = failure({ ttl: "x", kind: "y" });
    assert.match(err.message, /is invalid: \[spec\.\w+: .*, spec\.\w+: .*\]$/);
    assert.equal(err.details?.causes?.length, 2);
  });

  it("prunes unknown fields silently, keeping preserve-unknown-fields and embedded resources", () => {
    const out = validateAndPrune(
      registry,
      TYPE,
      widget(
        {
          bogus: 1,
          rules: [{ verb: "get", extra: true }],
          labels: { a: "b" },
          free: { anything: { goes: 1 } },
          template: {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "p" },
            spec: { a: "x", b: "y" },
          },
        },
        { top: "level", metadata: { name: "w1", labels: { keep: "me" } } },
      ),
    );
    assert.equal(out["top"], undefined);
    const spec = out["spec"] as Record<string, unknown>;
    assert.equal(spec["bogus"], undefined);
    assert.deepEqual(spec["rules"], [{ verb: "get" }]);
    assert.deepEqual(spec["labels"], { a: "b" });
    assert.deepEqual(spec["free"], { anything: { goes: 1 } });
    assert.deepEqual(spec["template"], {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { a: "x" },
    });
    // metadata is not the schema's business (kube validates ObjectMeta itself).
    assert.deepEqual(out.metadata, { name: "w1", labels: { keep: "me" } });
  });

  it("applies defaults, drops nulls of non-nullable fields and keeps nullable ones", () => {
    const out = validateAndPrune(registry, TYPE, widget({ ttl: null, note: null }));
    const spec = out["spec"] as Record<string, unknown>;
    assert.equal(spec["mode"], "fast");
    assert.equal("ttl" in spec, false);
    assert.equal(spec["note"], null);
  });

  it("takes ints or strings for x-kubernetes-int-or-string", () => {
    validateAndPrune(registry, TYPE, widget({ port: 80 }));
    validateAndPrune(registry, TYPE, widget({ port: "http" }));
    assert.match(
      failure({ port: true }).message,
      /spec\.port in body must be of type integer,string: "boolean"/,
    );
  });

  it("fails unknown fields under fieldValidation=Strict and warns under Warn", () => {
    assert.throws(
      () => validateAndPrune(registry, TYPE, widget({ bogus: 1 }), { fieldValidation: "Strict" }),
      (err: KubeError) =>
        err.code === 400 &&
        err.reason === "BadRequest" &&
        err.message ===
          'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"',
    );
    const warnings: string[] = [];
    validateAndPrune(registry, TYPE, widget({ bogus: 1 }), { fieldValidation: "Warn", warnings });
    assert.deepEqual(warnings, ['unknown field "spec.bogus"']);
  });

  it("passes types without a schema unchanged", () => {
    const plain = { ...TYPE, schema: undefined, crd: undefined };
    const obj = widget({ anything: 1 });
    assert.deepEqual(validateAndPrune(registry, plain, obj), obj);
  });
});
