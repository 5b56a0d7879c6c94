import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import { validateManagedFields } from "../../../webhook/src/accesskeys/managed-fields.js";

const entry = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  manager: "kubectl-client-side-apply",
  operation: "Update",
  apiVersion: "management.loft.sh/v1",
  time: "2025-01-01T00:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:spec": {} },
  ...extra,
});
const texts = (entries: unknown): string[] => validateManagedFields(entries).map(fieldErrorText);

describe("managed-fields", () => {
  it("accepts valid entries and an absent list", () => {
    assert.deepEqual(texts([entry(), entry({ operation: "Apply", subresource: "status" })]), []);
    assert.deepEqual(texts([entry({ fieldsType: "", manager: "" })]), []);
    assert.deepEqual(texts(undefined), []);
    assert.deepEqual(texts(null), []);
  });
  it("requires operation Apply or Update (Kubernetes <= 1.36 wording)", () => {
    assert.deepEqual(texts([entry(), entry({ operation: "Patch" })]), [
      'metadata.managedFields[1].operation: Invalid value: "Patch": must be `Apply` or `Update`',
    ]);
    assert.deepEqual(texts([entry({ operation: undefined })]), [
      'metadata.managedFields[0].operation: Invalid value: "": must be `Apply` or `Update`',
    ]);
  });
  it("requires fieldsType FieldsV1 when set", () => {
    assert.deepEqual(texts([entry({ fieldsType: "FieldsV2" })]), [
      'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    ]);
  });
  it("limits manager to 128 bytes", () => {
    assert.deepEqual(texts([entry({ manager: "m".repeat(128) })]), []);
    assert.deepEqual(texts([entry({ manager: "m".repeat(129) })]), [
      "metadata.managedFields[0].manager: Too long: may not be more than 128 bytes",
    ]);
    assert.equal(texts([entry({ manager: "é".repeat(65) })]).length, 1);
  });
  it("requires printable manager characters and gives the byte position", () => {
    assert.deepEqual(texts([entry({ manager: "abc\x07" })]), [
      'metadata.managedFields[0].manager: Invalid value: "abc\\u0007": invalid character U+0007 (at position 3)',
    ]);
    const errs = validateManagedFields([entry({ manager: "é\u200bx\n" })]).map((e) => e.detail);
    assert.deepEqual(errs, [
      "invalid character U+200B (at position 2)",
      "invalid character U+000A (at position 6)",
    ]);
    assert.deepEqual(texts([entry({ manager: "my manager/v1.2 (ünïcode) ✓" })]), []);
  });
  it("limits subresource to 256 bytes", () => {
    assert.deepEqual(texts([entry({ subresource: "s".repeat(256) })]), []);
    assert.deepEqual(texts([entry({ subresource: "s".repeat(257) })]), [
      "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes",
    ]);
  });
  it("reports wrong types", () => {
    assert.deepEqual(texts({}), [
      "metadata.managedFields: Invalid value: {}: must be of type array",
    ]);
    assert.deepEqual(texts(["x"]), [
      'metadata.managedFields[0]: Invalid value: "x": must be of type object',
    ]);
    assert.deepEqual(
      validateManagedFields([
        entry({
          operation: 1,
          fieldsType: true,
          manager: [],
          subresource: 2,
          apiVersion: 3,
          time: 4,
          fieldsV1: "x",
        }),
      ]).map((e) => [e.type, e.field]),
      [
        ["TypeInvalid", "metadata.managedFields[0].operation"],
        ["TypeInvalid", "metadata.managedFields[0].fieldsType"],
        ["TypeInvalid", "metadata.managedFields[0].manager"],
        ["TypeInvalid", "metadata.managedFields[0].subresource"],
        ["TypeInvalid", "metadata.managedFields[0].apiVersion"],
        ["TypeInvalid", "metadata.managedFields[0].time"],
        ["TypeInvalid", "metadata.managedFields[0].fieldsV1"],
      ],
    );
  });
  it("accepts exactly the two operations", () => {
    fc.assert(
      fc.property(fc.string(), (op) => {
        const ok = texts([entry({ operation: op })]).length === 0;
        assert.equal(ok, op === "Apply" || op === "Update");
      }),
    );
  });
  it("never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        assert.ok(Array.isArray(validateManagedFields(v)));
        assert.ok(Array.isArray(validateManagedFields([v])));
      }),
    );
  });
});
