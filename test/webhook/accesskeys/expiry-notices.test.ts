import assert from "node:assert/strict";
import fc from "fast-check";
import {
  dueThreshold,
  expiryEventName,
  expiryMessage,
  expirySeries,
  humanSpan,
  retentionOver,
  type ExpiringKey,
} from "../../../webhook/src/accesskeys/expiry-notices.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const AT = Date.parse("2026-12-01T10:00:00Z");
const key = (more: Partial<ExpiringKey> = {}): ExpiringKey => ({
  name: "ci-key",
  uid: "6b1f9a52-0000-4000-8000-000000000001",
  resourceVersion: "42",
  expiresAt: AT,
  ...more,
});

describe("expiry notices", () => {
  describe("dueThreshold", () => {
    const thresholds = [7 * DAY, DAY];

    it("is the tightest threshold crossed, none before the first or after expiry", () => {
      assert.equal(dueThreshold(AT, AT - 8 * DAY, thresholds), undefined);
      assert.equal(dueThreshold(AT, AT - 7 * DAY, thresholds), 7 * DAY);
      assert.equal(dueThreshold(AT, AT - 2 * DAY, thresholds), 7 * DAY);
      assert.equal(dueThreshold(AT, AT - DAY, thresholds), DAY);
      assert.equal(dueThreshold(AT, AT - 1, thresholds), DAY);
      assert.equal(dueThreshold(AT, AT, thresholds), undefined);
      assert.equal(dueThreshold(AT, AT - HOUR, []), undefined);
    });

    it("never names a threshold not yet reached", () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 1, max: 30 * DAY }), { maxLength: 10 }),
          fc.integer({ min: -40 * DAY, max: 1 }),
          (ts, before) => {
            const due = dueThreshold(AT, AT + before, ts);
            if (due === undefined) return ts.every((t) => AT + before < AT - t) || before >= 0;
            return (
              ts.includes(due) &&
              AT + before >= AT - due &&
              ts.every((t) => t >= due || AT + before < AT - t)
            );
          },
        ),
      );
    });
  });

  describe("expiryEventName", () => {
    it("is the same for the same key, threshold and expiry, and differs otherwise", () => {
      const name = expiryEventName(key(), DAY);
      assert.match(name, /^ci-key\.expiring\.[0-9a-f]{16}$/);
      assert.equal(expiryEventName(key({ resourceVersion: "43" }), DAY), name);
      assert.notEqual(expiryEventName(key(), 7 * DAY), name);
      assert.notEqual(expiryEventName(key({ expiresAt: AT + 1000 }), DAY), name);
      assert.notEqual(expiryEventName(key({ uid: "another" }), DAY), name);
    });

    it("stays a valid Event name for the longest key names", () => {
      const name = expiryEventName(key({ name: "a".repeat(253) }), DAY);
      assert.match(name, /^accesskey\.expiring\.[0-9a-f]{16}$/);
    });
  });

  it("says when, as kubectl shows spans, and nothing of the key", () => {
    assert.equal(humanSpan(DAY + 2 * HOUR + 3 * 60_000 + 59_000), "1d2h3m");
    assert.equal(humanSpan(30_000), "0m");
    assert.equal(
      expiryMessage(key(), AT - 36 * HOUR),
      "Access key expires in 1d12h (at 2026-12-01T10:00:00Z); rotate it or raise spec.ttl before then",
    );
  });

  it("ends the retention at expiry plus the retention", () => {
    assert.equal(retentionOver(AT, AT + DAY - 1, DAY), false);
    assert.equal(retentionOver(AT, AT + DAY, DAY), true);
  });

  describe("expirySeries", () => {
    it("keeps the keys expiring soonest within the horizon, and counts the rest", () => {
      const now = AT;
      const got = expirySeries(
        [
          ["later", now + 3 * DAY],
          ["soon", now + HOUR],
          ["expired", now - 1],
          ["beyond", now + 8 * DAY],
          ["middle", now + DAY],
        ],
        now,
        7 * DAY,
        2,
      );
      assert.deepEqual(got, {
        series: [
          ["soon", 3600],
          ["middle", 86400],
        ],
        dropped: 1,
      });
    });

    it("never shows more than the cap, nor an expired key", () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: -DAY, max: 10 * DAY })),
          fc.integer({ min: 0, max: 20 }),
          (offsets, max) => {
            const got = expirySeries(
              offsets.map((o, i) => [`k${i}`, AT + o]),
              AT,
              7 * DAY,
              max,
            );
            const within = offsets.filter((o) => o > 0 && o <= 7 * DAY).length;
            return (
              got.series.length === Math.min(max, within) &&
              got.dropped === within - got.series.length &&
              got.series.every(([, s]) => s >= 0)
            );
          },
        ),
      );
    });
  });
});
