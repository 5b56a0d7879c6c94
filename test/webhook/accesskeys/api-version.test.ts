import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import { resourceIdentity } from "../../../webhook/src/shared/ownedaccesskey.js";
import { validateTypeMeta } from "../../../webhook/src/accesskeys/api-version.js";

const identity = resourceIdentity();
const errorsFor = (obj: unknown, id = identity): string[] =>
  validateTypeMeta(obj, id).map(fieldErrorText);

describe("validateTypeMeta", () => {
  it("accepts management.loft.sh/v1 OwnedAccessKey", () => {
    assert.deepEqual(
      errorsFor({ apiVersion: "management.loft.sh/v1", kind: "OwnedAccessKey" }),
      [],
    );
  });

  it("rejects another version or group, naming the supported one", () => {
    assert.deepEqual(errorsFor({ apiVersion: "management.loft.sh/v2", kind: "OwnedAccessKey" }), [
      'apiVersion: Unsupported value: "management.loft.sh/v2": supported values: "management.loft.sh/v1"',
    ]);
    assert.deepEqual(errorsFor({ apiVersion: "storage.loft.sh/v1", kind: "OwnedAccessKey" }), [
      'apiVersion: Unsupported value: "storage.loft.sh/v1": supported values: "management.loft.sh/v1"',
    ]);
  });

  it("follows the configured group domain", () => {
    const custom = resourceIdentity("example.com");
    assert.deepEqual(
      errorsFor({ apiVersion: "management.example.com/v1", kind: "OwnedAccessKey" }, custom),
      [],
    );
    assert.deepEqual(
      errorsFor({ apiVersion: "management.loft.sh/v1", kind: "OwnedAccessKey" }, custom),
      [
        'apiVersion: Unsupported value: "management.loft.sh/v1": supported values: "management.example.com/v1"',
      ],
    );
  });

  it("rejects another kind", () => {
    assert.deepEqual(errorsFor({ apiVersion: "management.loft.sh/v1", kind: "AccessKey" }), [
      'kind: Unsupported value: "AccessKey": supported values: "OwnedAccessKey"',
    ]);
  });

  it("requires both", () => {
    assert.deepEqual(errorsFor({}), ["apiVersion: Required value", "kind: Required value"]);
    assert.deepEqual(errorsFor({ apiVersion: "", kind: null }), [
      "apiVersion: Required value",
      "kind: Required value",
    ]);
    assert.deepEqual(errorsFor(null), ["apiVersion: Required value", "kind: Required value"]);
  });

  it("rejects wrong types", () => {
    assert.deepEqual(errorsFor({ apiVersion: 1, kind: ["OwnedAccessKey"] }), [
      "apiVersion: Invalid value: 1: must be of type string",
      'kind: Invalid value: ["OwnedAccessKey"]: must be of type string',
    ]);
  });

  it("does not read inherited properties", () => {
    const proto = { apiVersion: "management.loft.sh/v1", kind: "OwnedAccessKey" };
    assert.deepEqual(errorsFor(Object.create(proto)), [
      "apiVersion: Required value",
      "kind: Required value",
    ]);
  });
});
