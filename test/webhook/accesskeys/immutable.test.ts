import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import type { ObjectMeta } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  validateGeneration,
  validateImmutableMetadata,
} from "../../../webhook/src/accesskeys/immutable.js";

const meta = (m: Record<string, unknown>): ObjectMeta => m as ObjectMeta;
const OLD = {
  name: "k",
  uid: "0d1f",
  resourceVersion: "41",
  generation: 3,
  creationTimestamp: "2025-01-01T00:00:00Z",
};
const texts = (change: Record<string, unknown>, old: Record<string, unknown> = OLD): string[] =>
  validateImmutableMetadata(meta({ ...OLD, resourceVersion: "42", ...change }), meta(old)).map(
    fieldErrorText,
  );

describe("immutable", () => {
  describe("validateImmutableMetadata", () => {
    it("accepts an update that keeps the identity fields", () => {
      assert.deepEqual(texts({}), []);
      assert.deepEqual(texts({ generation: 4 }), []);
    });
    it("accepts omitted uid, creationTimestamp and generation (kube restores them)", () => {
      assert.deepEqual(
        texts({ uid: undefined, creationTimestamp: null, generation: undefined }),
        [],
      );
      assert.deepEqual(texts({ uid: "" }), []);
    });
    it("rejects a changed name or namespace", () => {
      assert.deepEqual(texts({ name: "other" }), [
        'metadata.name: Invalid value: "other": field is immutable',
      ]);
      assert.deepEqual(texts({ namespace: "default" }), [
        'metadata.namespace: Invalid value: "default": field is immutable',
      ]);
      assert.deepEqual(texts({ namespace: "" }), []);
    });
    it("rejects a changed uid", () => {
      assert.deepEqual(texts({ uid: "ffff" }), [
        'metadata.uid: Invalid value: "ffff": field is immutable',
      ]);
    });
    it("rejects a changed creationTimestamp, but not another notation of the same instant", () => {
      assert.deepEqual(texts({ creationTimestamp: "2025-01-02T00:00:00Z" }), [
        'metadata.creationTimestamp: Invalid value: "2025-01-02T00:00:00Z": field is immutable',
      ]);
      assert.deepEqual(texts({ creationTimestamp: "2025-01-01T01:00:00+01:00" }), []);
      assert.deepEqual(texts({ creationTimestamp: "soon" }), [
        'metadata.creationTimestamp: Invalid value: "soon": must be an RFC 3339 timestamp (e.g. "2006-01-02T15:04:05Z")',
      ]);
    });
    it("requires a resourceVersion", () => {
      for (const resourceVersion of [undefined, null, ""]) {
        assert.deepEqual(texts({ resourceVersion }), [
          'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        ]);
      }
    });
    it("rejects a decremented generation", () => {
      assert.deepEqual(texts({ generation: 2 }), [
        "metadata.generation: Invalid value: 2: must not be decremented",
      ]);
    });
    it("reports wrong types", () => {
      assert.deepEqual(
        validateImmutableMetadata(
          meta({
            ...OLD,
            resourceVersion: 42,
            generation: "3",
            uid: 1,
            creationTimestamp: 0,
            name: 5,
          }),
          meta(OLD),
        ).map((e) => [e.type, e.field]),
        [
          ["TypeInvalid", "metadata.resourceVersion"],
          ["TypeInvalid", "metadata.generation"],
          ["TypeInvalid", "metadata.uid"],
          ["TypeInvalid", "metadata.creationTimestamp"],
        ],
      );
    });
    it("never accepts a name different from the stored one", () => {
      fc.assert(
        fc.property(fc.string(), (name) => {
          assert.equal(texts({ name }).length === 0, name === OLD.name);
        }),
      );
    });
  });

  describe("validateGeneration", () => {
    it("accepts absent, zero and positive generations", () => {
      for (const generation of [undefined, null, 0, 7]) {
        assert.deepEqual(validateGeneration(meta({ generation }), null), []);
      }
    });
    it("rejects a negative generation", () => {
      assert.deepEqual(validateGeneration(meta({ generation: -1 }), null).map(fieldErrorText), [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0",
      ]);
    });
    it("rejects non-integers", () => {
      for (const generation of [1.5, "1", 2 ** 60, {}]) {
        const errs = validateGeneration(meta({ generation }), null);
        assert.deepEqual(
          errs.map((e) => e.type),
          ["TypeInvalid"],
        );
      }
    });
    it("only checks decrements against a well-typed stored generation", () => {
      assert.deepEqual(validateGeneration(meta({ generation: 1 }), meta({ generation: "9" })), []);
      assert.equal(validateGeneration(meta({ generation: 1 }), meta({ generation: 9 })).length, 1);
    });
  });
});
