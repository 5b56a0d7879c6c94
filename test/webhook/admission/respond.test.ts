import assert from "node:assert/strict";
import fastJsonPatch from "fast-json-patch";
import { newForbidden } from "../../../webhook/src/shared/status.js";
import { allow, allowWithPatch, deny } from "../../../webhook/src/admission/respond.js";

describe("admission responses", () => {
  it("allow echoes the uid, folds duplicate warnings and omits an empty list", () => {
    assert.deepEqual(allow("u1"), {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u1", allowed: true },
    });
    assert.deepEqual(allow("u2", ["a", "a", "b"]).response.warnings, ["a", "b"]);
  });

  it("allowWithPatch sends a base64 JSONPatch that turns the original into the mutated object", () => {
    const original = { metadata: { name: "" }, spec: { user: "" } };
    const mutated = { metadata: { name: "gen-abcde" }, spec: { user: "alice", key: "x" } };
    const r = allowWithPatch("u3", original, mutated).response;
    assert.equal(r.patchType, "JSONPatch");
    const ops = JSON.parse(Buffer.from(r.patch!, "base64").toString("utf8"));
    const applied = fastJsonPatch.applyPatch(structuredClone(original), ops).newDocument;
    assert.deepEqual(applied, mutated);
  });

  it("allowWithPatch without a difference is a plain allow", () => {
    const r = allowWithPatch("u4", { a: 1 }, { a: 1 }).response;
    assert.equal(r.patch, undefined);
    assert.equal(r.allowed, true);
  });

  it("deny carries the Status with code, reason, message and details", () => {
    const err = newForbidden(
      { group: "management.loft.sh", resource: "ownedaccesskeys" },
      "k",
      "no",
    );
    const r = deny("u5", err).response;
    assert.equal(r.allowed, false);
    assert.equal(r.uid, "u5");
    assert.equal(r.status?.code, 403);
    assert.equal(r.status?.reason, "Forbidden");
    assert.equal(r.status?.message, 'ownedaccesskeys.management.loft.sh "k" is forbidden: no');
    assert.equal(r.status?.status, "Failure");
  });
});
