import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  newlyBlockingOwnerReferences,
  ownerReferenceDuplicatesWarning,
  validateOwnerReferences,
} from "../../../webhook/src/accesskeys/owner-references.js";

const user = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: "storage.loft.sh/v1",
  kind: "User",
  name,
  uid: `uid-${name}`,
  ...extra,
});
const texts = (refs: unknown): string[] => validateOwnerReferences(refs).map(fieldErrorText);

describe("owner-references", () => {
  describe("validateOwnerReferences", () => {
    it("accepts well-formed references and an absent list", () => {
      assert.deepEqual(
        texts([user("a"), user("b", { controller: true, blockOwnerDeletion: false })]),
        [],
      );
      assert.deepEqual(texts(undefined), []);
      assert.deepEqual(texts(null), []);
      assert.deepEqual(texts([]), []);
      assert.deepEqual(texts([{ ...user("a"), apiVersion: "v1", kind: "Namespace" }]), []);
    });
    it("requires a version in apiVersion", () => {
      for (const apiVersion of ["apps/", "", "/", "a/b/c"]) {
        assert.deepEqual(texts([user("a", { apiVersion })]), [
          `metadata.ownerReferences[0].apiVersion: Invalid value: ${JSON.stringify(apiVersion)}: version must not be empty`,
        ]);
      }
    });
    it("requires kind, name and uid (Kubernetes <= 1.36 wording)", () => {
      assert.deepEqual(texts([user("a", { kind: "" }), { apiVersion: "v1" }]), [
        'metadata.ownerReferences[0].kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences[1].kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences[1].name: Invalid value: "": must not be empty',
        'metadata.ownerReferences[1].uid: Invalid value: "": must not be empty',
      ]);
    });
    it("disallows a core v1 Event as owner", () => {
      const event = { apiVersion: "v1", kind: "Event", name: "e", uid: "u" };
      assert.deepEqual(texts([event]), [
        'metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
      ]);
      assert.equal(texts([{ ...event, apiVersion: "/v1" }]).length, 1);
      assert.deepEqual(texts([{ ...event, apiVersion: "events.k8s.io/v1" }]), []);
    });
    it("allows one controller and rejects a second with kube's message", () => {
      assert.deepEqual(
        texts([user("a", { controller: true }), user("b", { controller: false })]),
        [],
      );
      const refs = [
        user("a", { controller: true }),
        {
          apiVersion: "storage.loft.sh/v1",
          kind: "Team",
          name: "b",
          uid: "uid-b",
          controller: true,
        },
      ];
      const errs = validateOwnerReferences(refs);
      assert.equal(errs.length, 1);
      assert.equal(errs[0]!.type, "Invalid");
      assert.equal(errs[0]!.field, "metadata.ownerReferences");
      assert.deepEqual(errs[0]!.badValue, refs);
      assert.equal(
        errs[0]!.detail,
        'Only one reference can have Controller set to true. Found "true" in references for User/a and Team/b',
      );
      assert.match(
        fieldErrorText(errs[0]!),
        /^metadata\.ownerReferences: Invalid value: \[\{"apiVersion"/,
      );
    });
    it("names the first controller and each later one", () => {
      const refs = ["a", "b", "c"].map((n) => user(n, { controller: true }));
      assert.deepEqual(
        validateOwnerReferences(refs).map((e) => e.detail.replace(/.*references for /, "")),
        ["User/a and User/b", "User/a and User/c"],
      );
    });
    it("reports wrong types", () => {
      assert.deepEqual(
        validateOwnerReferences({ 0: user("a") }).map((e) => [e.type, e.field]),
        [["TypeInvalid", "metadata.ownerReferences"]],
      );
      assert.deepEqual(
        validateOwnerReferences(["x", null, [user("a")]]).map((e) => e.field),
        [
          "metadata.ownerReferences[0]",
          "metadata.ownerReferences[1]",
          "metadata.ownerReferences[2]",
        ],
      );
      assert.deepEqual(texts([user("a", { uid: 5, controller: "true", blockOwnerDeletion: 1 })]), [
        "metadata.ownerReferences[0].uid: Invalid value: 5: must be of type string",
        'metadata.ownerReferences[0].controller: Invalid value: "true": must be of type boolean',
        "metadata.ownerReferences[0].blockOwnerDeletion: Invalid value: 1: must be of type boolean",
      ]);
    });
    it("never throws on arbitrary JSON", () => {
      fc.assert(
        fc.property(fc.jsonValue(), (v) => {
          assert.ok(Array.isArray(validateOwnerReferences(v)));
          assert.ok(Array.isArray(validateOwnerReferences([v])));
        }),
      );
    });
  });

  describe("newlyBlockingOwnerReferences", () => {
    const blocking = (name: string): Record<string, unknown> =>
      user(name, { blockOwnerDeletion: true });
    it("counts every blocking reference on CREATE", () => {
      const got = newlyBlockingOwnerReferences(undefined, [
        user("a"),
        blocking("b"),
        blocking("c"),
      ]);
      assert.deepEqual(
        got.map((g) => [g.index, g.ref.name]),
        [
          [1, "b"],
          [2, "c"],
        ],
      );
      assert.deepEqual(got[0]!.ref, { ...user("b"), blockOwnerDeletion: true });
    });
    it("ignores references that were already blocking (docs/decisions.md OAK-2)", () => {
      assert.deepEqual(newlyBlockingOwnerReferences([blocking("a")], [blocking("a")]), []);
      // Same UID at another position: still the same owner.
      assert.deepEqual(
        newlyBlockingOwnerReferences([user("x"), blocking("a")], [blocking("a")]),
        [],
      );
    });
    it("counts a reference that becomes blocking", () => {
      for (const before of [user("a"), user("a", { blockOwnerDeletion: false })]) {
        const got = newlyBlockingOwnerReferences([before], [blocking("a")]);
        assert.deepEqual(
          got.map((g) => g.index),
          [0],
        );
      }
    });
    it("counts a new UID and skips non-blocking ones", () => {
      const got = newlyBlockingOwnerReferences(
        [blocking("a")],
        [blocking("a"), user("b"), blocking("c")],
      );
      assert.deepEqual(
        got.map((g) => g.ref.uid),
        ["uid-c"],
      );
    });
    it("lets the last old entry for a UID win, as kube's indexByUID does", () => {
      const old = [blocking("a"), user("a")];
      assert.equal(newlyBlockingOwnerReferences(old, [blocking("a")]).length, 1);
    });
    it("skips malformed lists and entries", () => {
      assert.deepEqual(newlyBlockingOwnerReferences("x", { a: 1 }), []);
      const got = newlyBlockingOwnerReferences(null, [
        "x",
        blocking("a"),
        { blockOwnerDeletion: "true" },
      ]);
      assert.deepEqual(
        got.map((g) => g.index),
        [1],
      );
    });
  });

  describe("ownerReferenceDuplicatesWarning", () => {
    it("warns with kube's text for exact duplicates", () => {
      assert.equal(
        ownerReferenceDuplicatesWarning([user("a"), user("b"), user("a"), user("a")]),
        ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-a, uid-a",
      );
    });
    it("does not warn without exact duplicates", () => {
      assert.equal(ownerReferenceDuplicatesWarning([user("a"), user("b")]), null);
      assert.equal(
        ownerReferenceDuplicatesWarning([user("a"), user("a", { controller: false })]),
        null,
      );
      assert.equal(ownerReferenceDuplicatesWarning([user("a"), user("a", { name: "z" })]), null);
      assert.equal(ownerReferenceDuplicatesWarning(undefined), null);
      assert.equal(ownerReferenceDuplicatesWarning("x"), null);
    });
  });
});
