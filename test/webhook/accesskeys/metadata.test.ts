import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { metadataWarnings, validateMetadata } from "../../../webhook/src/accesskeys/metadata.js";
import type { Operation } from "../../../webhook/src/admission/review.js";
import type { KeyRequest } from "../../../webhook/src/accesskeys/request.js";

function request(operation: Operation, metadata: unknown, oldMetadata?: unknown): KeyRequest {
  const key = (m: unknown): OwnedAccessKey =>
    ({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: m,
      spec: {},
    }) as OwnedAccessKey;
  return {
    operation,
    object: operation === "DELETE" ? null : key(metadata),
    oldObject: oldMetadata === undefined ? null : key(oldMetadata),
    name: "",
    userInfo: { username: "alice", groups: [] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
  };
}

const STORED = {
  name: "ci-key",
  uid: "0d1f",
  resourceVersion: "41",
  generation: 1,
  creationTimestamp: "2025-01-01T00:00:00Z",
  finalizers: ["example.com/cleanup"],
};
const texts = (req: KeyRequest): string[] => validateMetadata(req).map(fieldErrorText);

describe("metadata", () => {
  describe("validateMetadata on CREATE", () => {
    it("accepts valid metadata", () => {
      assert.deepEqual(texts(request("CREATE", { name: "ci-key", labels: { team: "a" } })), []);
      assert.deepEqual(texts(request("CREATE", { generateName: "ci-" })), []);
    });
    it("requires metadata as an object", () => {
      assert.deepEqual(texts(request("CREATE", undefined)), ["metadata: Required value"]);
      assert.deepEqual(texts(request("CREATE", ["x"])), [
        'metadata: Invalid value: ["x"]: must be of type object',
      ]);
      const noObject = { ...request("CREATE", {}), object: null };
      assert.deepEqual(texts(noObject), ["metadata: Required value"]);
    });
    it("reports the errors of every rule together", () => {
      const errs = validateMetadata(
        request("CREATE", {
          name: "Bad_Name",
          namespace: "default",
          generation: -1,
          labels: { "bad key": "v" },
          annotations: { ok: 5 },
          ownerReferences: [{ apiVersion: "v1", kind: "User", name: "a" }],
          finalizers: ["orphan", "foregroundDeletion"],
          managedFields: [{ operation: "Patch" }],
          deletionTimestamp: "2025-01-01T00:00:00Z",
        }),
      );
      assert.deepEqual(
        errs.map((e) => e.field),
        [
          "metadata.name",
          "metadata.namespace",
          "metadata.generation",
          "metadata.labels",
          "metadata.annotations[ok]",
          "metadata.ownerReferences[0].uid",
          "metadata.managedFields[0].operation",
          "metadata.finalizers",
          "metadata.deletionTimestamp",
        ],
      );
    });
    it("rejects a second controller reference", () => {
      const ref = (name: string) => ({
        apiVersion: "v1",
        kind: "User",
        name,
        uid: name,
        controller: true,
      });
      assert.deepEqual(
        validateMetadata(
          request("CREATE", { name: "k", ownerReferences: [ref("a"), ref("b")] }),
        ).map((e) => e.detail),
        [
          'Only one reference can have Controller set to true. Found "true" in references for User/a and User/b',
        ],
      );
    });
  });

  describe("validateMetadata on UPDATE", () => {
    it("accepts an update that keeps what it must", () => {
      const next = { ...STORED, resourceVersion: "41", labels: { a: "b" } };
      assert.deepEqual(texts(request("UPDATE", next, STORED)), []);
    });
    it("rejects changes to immutable fields", () => {
      assert.deepEqual(texts(request("UPDATE", { ...STORED, name: "other" }, STORED)), [
        'metadata.name: Invalid value: "other": field is immutable',
      ]);
      assert.deepEqual(texts(request("UPDATE", { ...STORED, resourceVersion: "" }, STORED)), [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      ]);
    });
    it("requires a name even with generateName", () => {
      const next = { ...STORED, name: undefined, generateName: "ci-" };
      assert.deepEqual(texts(request("UPDATE", next, STORED)), [
        "metadata.name: Required value: name or generateName is required",
        'metadata.name: Invalid value: "": field is immutable',
      ]);
    });
    it("applies the deletion rules to an object being deleted", () => {
      const deleting = {
        ...STORED,
        deletionTimestamp: "2025-06-01T00:00:00Z",
        deletionGracePeriodSeconds: 0,
      };
      assert.deepEqual(texts(request("UPDATE", { ...deleting, finalizers: [] }, deleting)), []);
      assert.deepEqual(
        texts(
          request(
            "UPDATE",
            {
              ...deleting,
              finalizers: ["example.com/cleanup", "example.com/more"],
              deletionTimestamp: "2026-01-01T00:00:00Z",
            },
            deleting,
          ),
        ),
        [
          'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}',
          'metadata.deletionTimestamp: Invalid value: "2026-01-01T00:00:00Z": may not be unset or be set further into the future, although it may be shortened',
        ],
      );
    });
    it("compares against nothing when the stored metadata is missing", () => {
      assert.deepEqual(texts(request("UPDATE", { name: "k", resourceVersion: "1" }, null)), [
        'metadata.name: Invalid value: "k": field is immutable',
      ]);
    });
  });

  it("has nothing to say about DELETE and CONNECT", () => {
    assert.deepEqual(validateMetadata(request("DELETE", undefined, STORED)), []);
    assert.deepEqual(validateMetadata(request("CONNECT", 5)), []);
    assert.deepEqual(metadataWarnings(request("DELETE", undefined, STORED)), []);
  });

  it("never throws on arbitrary metadata", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (m, old) => {
        assert.ok(Array.isArray(validateMetadata(request("CREATE", m))));
        assert.ok(Array.isArray(validateMetadata(request("UPDATE", m, old))));
        assert.ok(Array.isArray(metadataWarnings(request("UPDATE", m, old))));
      }),
    );
  });

  describe("metadataWarnings", () => {
    it("warns about new finalizers without a domain and duplicate owner references", () => {
      const ref = { apiVersion: "v1", kind: "User", name: "a", uid: "u-1" };
      const warnings = metadataWarnings(
        request("CREATE", { name: "k", finalizers: ["cleanup"], ownerReferences: [ref, ref] }),
      );
      assert.deepEqual(warnings, [
        'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers',
        ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u-1",
      ]);
    });
    it("does not warn about finalizers that were already there", () => {
      const old = { ...STORED, finalizers: ["cleanup"] };
      assert.deepEqual(metadataWarnings(request("UPDATE", old, old)), []);
      assert.equal(
        metadataWarnings(request("UPDATE", { ...old, finalizers: ["cleanup", "more"] }, old))
          .length,
        1,
      );
    });
    it("is empty for clean or malformed metadata", () => {
      assert.deepEqual(metadataWarnings(request("CREATE", { name: "k" })), []);
      assert.deepEqual(metadataWarnings(request("CREATE", "x")), []);
    });
  });
});
