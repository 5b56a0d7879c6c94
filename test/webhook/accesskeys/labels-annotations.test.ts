import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  TOTAL_ANNOTATION_SIZE_LIMIT,
  validateAnnotations,
  validateLabels,
} from "../../../webhook/src/accesskeys/labels-annotations.js";

const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe("labels-annotations", () => {
  describe("validateLabels", () => {
    it("accepts valid labels and an absent map", () => {
      assert.deepEqual(
        validateLabels({ "app.kubernetes.io/name": "vgate", tier: "", A_1: "x.y_z" }),
        [],
      );
      assert.deepEqual(validateLabels(undefined), []);
      assert.deepEqual(validateLabels(null), []);
    });
    it("rejects a bad key with kube's text", () => {
      assert.deepEqual(validateLabels({ "bad key": "v" }).map(fieldErrorText), [
        `metadata.labels: Invalid value: "bad key": ${NAME_PART}`,
      ]);
    });
    it("rejects bad values", () => {
      assert.deepEqual(validateLabels({ k: "v".repeat(64) }).map(fieldErrorText), [
        'metadata.labels: Invalid value: "' + "v".repeat(64) + '": must be no more than 63 bytes',
      ]);
      const [err] = validateLabels({ k: "-v" });
      assert.match(err!.detail, /^a valid label must be an empty string or consist of/);
    });
    it("treats a __proto__ key as an ordinary, invalid key", () => {
      const labels = JSON.parse('{"__proto__": "x", "ok": "y"}') as unknown;
      assert.deepEqual(
        validateLabels(labels).map((e) => e.badValue),
        ["__proto__"],
      );
      assert.deepEqual(
        validateLabels(JSON.parse('{"__proto__": {"polluted": "yes"}}')).map((e) => e.field),
        ["metadata.labels", "metadata.labels[__proto__]"],
      );
    });
    it("reports wrong types", () => {
      assert.deepEqual(validateLabels(["a"]).map(fieldErrorText), [
        'metadata.labels: Invalid value: ["a"]: must be of type object',
      ]);
      assert.deepEqual(validateLabels({ k: 1 }).map(fieldErrorText), [
        "metadata.labels[k]: Invalid value: 1: must be of type string",
      ]);
      assert.equal(validateLabels("x").length, 1);
    });
    it("accepts every value matching kube's label-value rule", () => {
      fc.assert(
        fc.property(
          fc.stringMatching(/^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/),
          (v) => {
            assert.deepEqual(validateLabels({ k: v }), []);
          },
        ),
      );
    });
  });

  describe("validateAnnotations", () => {
    it("accepts valid annotations, checking keys case-insensitively", () => {
      assert.deepEqual(validateAnnotations({ "Example.COM/Note": "any text at all\n", x: "" }), []);
      assert.deepEqual(validateAnnotations(undefined), []);
    });
    it("rejects a bad key, showing it as written", () => {
      assert.deepEqual(validateAnnotations({ "Bad Key": "v" }).map(fieldErrorText), [
        `metadata.annotations: Invalid value: "Bad Key": ${NAME_PART}`,
      ]);
    });
    it("allows 262144 bytes in total and rejects one more", () => {
      const key = "k";
      const fits = { [key]: "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1) };
      assert.deepEqual(validateAnnotations(fits), []);
      const over = { [key]: "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT) };
      assert.deepEqual(validateAnnotations(over).map(fieldErrorText), [
        "metadata.annotations: Too long: may not be more than 262144 bytes",
      ]);
    });
    it("counts the size in UTF-8 bytes", () => {
      const half = TOTAL_ANNOTATION_SIZE_LIMIT / 2;
      assert.equal(validateAnnotations({ k: "é".repeat(half) }).length, 1);
      assert.equal(validateAnnotations({ k: "e".repeat(half) }).length, 0);
    });
    it("treats a __proto__ key as an ordinary, invalid key", () => {
      const annotations = JSON.parse('{"__proto__": "x"}') as unknown;
      assert.deepEqual(
        validateAnnotations(annotations).map((e) => [e.field, e.badValue]),
        [["metadata.annotations", "__proto__"]],
      );
    });
    it("reports wrong types", () => {
      assert.deepEqual(validateAnnotations({ a: { b: 1 } }).map(fieldErrorText), [
        'metadata.annotations[a]: Invalid value: {"b":1}: must be of type string',
      ]);
      assert.equal(validateAnnotations(7)[0]!.type, "TypeInvalid");
    });
    it("never throws on arbitrary JSON", () => {
      fc.assert(
        fc.property(fc.jsonValue(), (v) => {
          assert.ok(Array.isArray(validateAnnotations(v)));
          assert.ok(Array.isArray(validateLabels(v)));
        }),
      );
    });
  });
});
