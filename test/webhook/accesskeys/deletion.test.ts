import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import type { ObjectMeta } from "../../../webhook/src/shared/ownedaccesskey.js";
import { validateDeletionTimestamp } from "../../../webhook/src/accesskeys/deletion.js";
import { parseRfc3339 } from "../../../webhook/src/shared/rfc3339.js";

const meta = (m: Record<string, unknown>): ObjectMeta => m as ObjectMeta;
const texts = (m: Record<string, unknown>, old: Record<string, unknown> | null): string[] =>
  validateDeletionTimestamp(meta(m), old && meta(old)).map(fieldErrorText);

const T = "2025-06-01T12:00:00Z";
const EARLIER = "2025-06-01T11:59:59Z";
const LATER = "2025-06-01T12:00:01Z";
const deleting = { deletionTimestamp: T, deletionGracePeriodSeconds: 0 };

describe("deletion", () => {
  describe("parseRfc3339", () => {
    it("parses UTC, offsets and fractional seconds", () => {
      assert.equal(parseRfc3339(T), Date.UTC(2025, 5, 1, 12));
      assert.equal(parseRfc3339("2025-06-01T14:00:00+02:00"), Date.UTC(2025, 5, 1, 12));
      assert.equal(parseRfc3339("2025-06-01T11:30:00-00:30"), Date.UTC(2025, 5, 1, 12));
      assert.equal(parseRfc3339("2025-06-01T12:00:00.250Z"), Date.UTC(2025, 5, 1, 12) + 250);
      assert.equal(parseRfc3339("2025-06-01T12:00:00.57Z"), Date.UTC(2025, 5, 1, 12) + 570);
      assert.equal(parseRfc3339("2025-06-01T12:00:00.123456789Z"), Date.UTC(2025, 5, 1, 12) + 123);
      assert.equal(parseRfc3339("2024-02-29T00:00:00Z"), Date.UTC(2024, 1, 29));
      assert.equal(parseRfc3339("0001-01-01T00:00:00Z"), -62135596800000);
    });
    it("rejects what Go's time.Parse(time.RFC3339) rejects", () => {
      for (const bad of [
        "",
        "2025-06-01",
        "2025-06-01 12:00:00Z",
        "2025-06-01T12:00:00",
        "2025-06-01t12:00:00z",
        "2025-02-29T00:00:00Z",
        "2025-13-01T00:00:00Z",
        "2025-06-31T00:00:00Z",
        "2025-06-01T24:00:00Z",
        "2025-06-01T12:60:00Z",
        "2025-06-01T12:00:60Z",
        "2025-06-01T12:00:00+2:00",
        "not a time",
      ]) {
        assert.equal(parseRfc3339(bad), null, bad);
      }
    });
    it("round-trips any instant written by toISOString", () => {
      fc.assert(
        fc.property(
          fc.date({
            min: new Date(Date.UTC(1, 0, 1)),
            max: new Date(Date.UTC(9999, 11, 31)),
            noInvalidDate: true,
          }),
          (d) => {
            const iso = d.toISOString();
            if (!/^\d{4}-/.test(iso)) return;
            assert.equal(parseRfc3339(iso), d.getTime());
          },
        ),
      );
    });
  });

  describe("on CREATE", () => {
    it("accepts an object without deletion fields", () => {
      assert.deepEqual(texts({ name: "k" }, null), []);
      assert.deepEqual(
        texts({ deletionTimestamp: null, deletionGracePeriodSeconds: null }, null),
        [],
      );
    });
    it("forbids the client from setting them", () => {
      assert.deepEqual(texts(deleting, null), [
        "metadata.deletionTimestamp: Forbidden: may not be set on create; the API server sets it when the object is deleted",
        "metadata.deletionGracePeriodSeconds: Forbidden: may not be set on create; the API server sets it when the object is deleted",
      ]);
    });
  });

  describe("on UPDATE", () => {
    it("keeps an unset timestamp unset", () => {
      assert.deepEqual(texts({}, {}), []);
      assert.deepEqual(texts({ deletionTimestamp: T }, {}), [
        `metadata.deletionTimestamp: Invalid value: "${T}": field is immutable`,
      ]);
    });
    it("allows the same or an earlier timestamp", () => {
      assert.deepEqual(texts(deleting, deleting), []);
      assert.deepEqual(texts({ ...deleting, deletionTimestamp: EARLIER }, deleting), []);
      // The same instant in another notation.
      assert.deepEqual(
        texts({ ...deleting, deletionTimestamp: "2025-06-01T14:00:00+02:00" }, deleting),
        [],
      );
    });
    it("rejects a later timestamp or unsetting it", () => {
      assert.deepEqual(texts({ ...deleting, deletionTimestamp: LATER }, deleting), [
        `metadata.deletionTimestamp: Invalid value: "${LATER}": may not be unset or be set further into the future, although it may be shortened`,
      ]);
      assert.deepEqual(texts({ deletionGracePeriodSeconds: 0 }, deleting), [
        "metadata.deletionTimestamp: Invalid value: null: may not be unset or be set further into the future, although it may be shortened",
      ]);
    });
    it("rejects a timestamp that is not RFC 3339", () => {
      assert.deepEqual(texts({ ...deleting, deletionTimestamp: "yesterday" }, deleting), [
        'metadata.deletionTimestamp: Invalid value: "yesterday": must be an RFC 3339 timestamp (e.g. "2006-01-02T15:04:05Z")',
      ]);
    });
    it("keeps an unreadable stored timestamp as it is", () => {
      const old = { ...deleting, deletionTimestamp: "garbage" };
      assert.deepEqual(texts(deleting, old), [
        `metadata.deletionTimestamp: Invalid value: "${T}": field is immutable`,
      ]);
    });
    it("does not let deletionGracePeriodSeconds change", () => {
      assert.deepEqual(texts({ ...deleting, deletionGracePeriodSeconds: 30 }, deleting), [
        "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
      ]);
      assert.deepEqual(texts({ deletionTimestamp: T }, deleting), [
        "metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable",
      ]);
      assert.deepEqual(texts({ deletionGracePeriodSeconds: 5 }, {}), [
        "metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable",
      ]);
    });
    it("reports wrong types", () => {
      assert.deepEqual(texts({ deletionTimestamp: 5, deletionGracePeriodSeconds: "0" }, deleting), [
        "metadata.deletionTimestamp: Invalid value: 5: must be of type string",
        'metadata.deletionGracePeriodSeconds: Invalid value: "0": must be of type integer',
      ]);
      assert.deepEqual(texts({ deletionGracePeriodSeconds: 1.5 }, null), [
        "metadata.deletionGracePeriodSeconds: Invalid value: 1.5: must be of type integer",
      ]);
    });
    it("only ever accepts timestamps no later than the stored one", () => {
      fc.assert(
        fc.property(fc.integer({ min: -1e9, max: 1e9 }), (delta) => {
          const next = new Date(Date.UTC(2025, 5, 1, 12) + delta * 1000).toISOString();
          const ok = texts({ ...deleting, deletionTimestamp: next }, deleting).length === 0;
          assert.equal(ok, delta <= 0);
        }),
      );
    });
  });
});
