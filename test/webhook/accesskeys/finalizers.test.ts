import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import type { ObjectMeta } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  finalizerWarnings,
  validateFinalizers,
} from "../../../webhook/src/accesskeys/finalizers.js";
import { goQuote } from "../../../webhook/src/shared/go-quote.js";

const meta = (m: Record<string, unknown>): ObjectMeta => m as ObjectMeta;
const texts = (m: Record<string, unknown>, old: Record<string, unknown> | null = null): string[] =>
  validateFinalizers(meta(m), old && meta(old)).map(fieldErrorText);
const DELETING = { deletionTimestamp: "2025-01-01T00:00:00Z" };

describe("finalizers", () => {
  describe("validateFinalizers", () => {
    it("accepts qualified names and standard finalizers", () => {
      assert.deepEqual(texts({ finalizers: ["example.com/cleanup", "orphan", "kubernetes"] }), []);
      assert.deepEqual(texts({}), []);
      assert.deepEqual(texts({ finalizers: null }), []);
    });
    it("rejects a name that is not a qualified name, with kube's text", () => {
      assert.deepEqual(texts({ finalizers: ["bad_"] }), [
        "metadata.finalizers: Invalid value: \"bad_\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ]);
      assert.equal(texts({ finalizers: ["Example.com/x"] }).length, 1);
    });
    it("rejects orphan together with foregroundDeletion", () => {
      assert.deepEqual(texts({ finalizers: ["orphan", "foregroundDeletion"] }), [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      ]);
      assert.deepEqual(texts({ finalizers: ["foregroundDeletion"] }), []);
    });
    it("forbids new finalizers while the object is being deleted", () => {
      const old = { ...DELETING, finalizers: ["example.com/x"] };
      assert.deepEqual(
        texts({ finalizers: ["example.com/x", "b.io/y", "a.io/z", "b.io/y"] }, old),
        [
          'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/z", "b.io/y"}',
        ],
      );
    });
    it("allows removing finalizers while deleting, and adding them otherwise", () => {
      const old = { ...DELETING, finalizers: ["example.com/x", "example.com/y"] };
      assert.deepEqual(texts({ finalizers: ["example.com/y"] }, old), []);
      assert.deepEqual(texts({}, old), []);
      assert.deepEqual(texts({ finalizers: ["example.com/new"] }, { finalizers: [] }), []);
      assert.deepEqual(texts({ finalizers: ["example.com/new"] }, { deletionTimestamp: null }), []);
    });
    it("reports wrong types", () => {
      assert.deepEqual(texts({ finalizers: "example.com/x" }), [
        'metadata.finalizers: Invalid value: "example.com/x": must be of type array',
      ]);
      assert.deepEqual(texts({ finalizers: ["a.io/b", 7] }), [
        "metadata.finalizers[1]: Invalid value: 7: must be of type string",
      ]);
    });
    it("never throws on arbitrary JSON", () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.jsonValue(), (f, old) => {
          assert.ok(
            Array.isArray(
              validateFinalizers(meta({ finalizers: f }), meta({ ...DELETING, finalizers: old })),
            ),
          );
        }),
      );
    });
  });

  describe("finalizerWarnings", () => {
    it("warns about newly added names without a domain", () => {
      assert.deepEqual(finalizerWarnings(meta({ finalizers: ["cleanup", "a.b"] }), null), [
        'metadata.finalizers: "a.b": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
        'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers',
      ]);
    });
    it("does not warn about standard, qualified, invalid or existing finalizers", () => {
      const m = meta({
        finalizers: ["orphan", "foregroundDeletion", "kubernetes", "example.com/x", "bad_", "kept"],
      });
      assert.deepEqual(finalizerWarnings(m, meta({ finalizers: ["kept"] })), []);
      assert.deepEqual(finalizerWarnings(meta({ finalizers: 5 }), null), []);
    });
  });

  describe("goQuote", () => {
    it("quotes like Go's %q", () => {
      assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
      assert.equal(goQuote("\x07\n\x01\x7f"), '"\\a\\n\\x01\\x7f"');
      assert.equal(goQuote("é"), '"é"');
      assert.equal(goQuote("\u200b"), '"\\u200b"');
    });
  });
});
