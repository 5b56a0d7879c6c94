import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  expiresAt,
  isExpired,
  keyStatus,
  ttlBase,
  ttlSeconds,
} from "../../../webhook/src/shared/key-expiry.js";

const at = (iso: string) => Date.parse(iso);
const CREATED = "2026-03-01T00:00:00Z";
const key = (spec: object, status: object = {}) => ({
  metadata: { creationTimestamp: CREATED },
  spec,
  status,
});

describe("expiry", () => {
  it("ttlSeconds accepts only positive finite numbers", () => {
    assert.equal(ttlSeconds(key({ ttl: 60 })), 60);
    for (const ttl of [0, -1, "60", null, Infinity, NaN, true]) {
      assert.equal(ttlSeconds(key({ ttl })), undefined, String(ttl));
    }
  });

  it("expires exactly at base + ttl seconds", () => {
    const k = key({ ttl: 3600 });
    const end = at("2026-03-01T01:00:00Z");
    assert.equal(expiresAt(k), end);
    assert.equal(isExpired(k, end - 1), false);
    assert.equal(isExpired(k, end), true);
    assert.deepEqual(keyStatus(k, end), { status: "Expired", expiresAt: end });
  });

  it("counts from status.lastActivity only with ttlAfterLastActivity", () => {
    const used = key(
      { ttl: 60, ttlAfterLastActivity: true },
      { lastActivity: "2026-03-05T00:00:00Z" },
    );
    assert.deepEqual(ttlBase(used), { at: at("2026-03-05T00:00:00Z"), from: "lastActivity" });
    const ignored = key({ ttl: 60 }, { lastActivity: "2026-03-05T00:00:00Z" });
    assert.deepEqual(ttlBase(ignored), { at: at(CREATED), from: "creation" });
    const unused = key({ ttl: 60, ttlAfterLastActivity: true });
    assert.deepEqual(ttlBase(unused), { at: at(CREATED), from: "creation" });
  });

  it("a later local lastActivity moves the base; an earlier one does not", () => {
    const stored = at("2026-03-05T00:00:00Z");
    const k = key(
      { ttl: 60, ttlAfterLastActivity: true },
      { lastActivity: "2026-03-05T00:00:00Z" },
    );
    assert.equal(expiresAt(k, { localLastActivity: stored + 30_000 }), stored + 90_000);
    assert.equal(expiresAt(k, { localLastActivity: stored - 30_000 }), stored + 60_000);
    assert.equal(isExpired(k, stored + 70_000), true);
    assert.equal(isExpired(k, stored + 70_000, { localLastActivity: stored + 30_000 }), false);
    // No stored activity yet: the local one counts.
    const fresh = key({ ttl: 60, ttlAfterLastActivity: true });
    const local = at("2026-03-02T00:00:00Z");
    assert.deepEqual(ttlBase(fresh, { localLastActivity: local }), {
      at: local,
      from: "lastActivity",
    });
    // Without ttlAfterLastActivity the local activity is ignored.
    assert.equal(expiresAt(key({ ttl: 60 }), { localLastActivity: local }), at(CREATED) + 60_000);
    assert.equal(expiresAt(fresh, { localLastActivity: NaN }), at(CREATED) + 60_000);
  });

  it("disabled is Disabled unless also expired", () => {
    const now = at("2026-03-01T00:00:30Z");
    assert.equal(keyStatus(key({ disabled: true }), now).status, "Disabled");
    assert.equal(keyStatus(key({ disabled: true, ttl: 1 }), now).status, "Expired");
    assert.equal(keyStatus(key({ ttl: 60 }), now).status, "Active");
  });

  it("never throws on junk and never expires a key with no readable times", () => {
    fc.assert(
      fc.property(fc.anything(), fc.integer(), (junk, now) => {
        const status = keyStatus(junk, now).status;
        assert.ok(["Active", "Disabled", "Expired"].includes(status));
      }),
    );
    const noCreation = { spec: { ttl: 1 } };
    assert.equal(isExpired(noCreation, Number.MAX_SAFE_INTEGER), false);
    const hostile = JSON.parse(
      '{"spec":{"__proto__":{"ttl":1}},"metadata":{"creationTimestamp":"2020-01-01T00:00:00Z"}}',
    );
    assert.equal(isExpired(hostile, Date.now()), false);
  });

  it("expiry is monotonic in now", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 0, max: 2e9 }),
        (ttl, offset) => {
          const k = key({ ttl });
          const now = at(CREATED) + offset;
          assert.equal(isExpired(k, now), offset >= ttl * 1000);
        },
      ),
    );
  });
});
