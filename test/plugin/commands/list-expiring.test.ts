// list --expiring's filter: the keys that stop working by now + the duration, by the token
// webhook's rule (key-expiry.ts), the expired ones included and keys without a TTL left out.

import assert from "node:assert/strict";
import { expiringWithin } from "../../../plugin/src/commands/list.js";

const NOW = Date.parse("2026-11-29T12:00:00Z");
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function key(
  name: string,
  createdAgoMs: number,
  spec: Record<string, unknown>,
  lastActivity?: number,
) {
  return {
    metadata: { name, creationTimestamp: iso(NOW - createdAgoMs) },
    spec,
    ...(lastActivity === undefined ? {} : { status: { lastActivity: iso(lastActivity) } }),
  };
}

describe("plugin: list --expiring", () => {
  it("keeps what expires within the duration and what has expired; not keys without a TTL", () => {
    const keys = [
      key("expired", 2 * H, { ttl: 3600 }),
      key("in-30m", 30 * 60_000, { ttl: 3600 }),
      key("in-3h", 0, { ttl: 3 * 3600 }),
      key("forever", 100 * H, {}),
      // Used 10 minutes ago: with ttlAfterLastActivity it counts from then (50 minutes left).
      key("active", 5 * H, { ttl: 3600, ttlAfterLastActivity: true }, NOW - 10 * 60_000),
    ];
    const names = (within: number) =>
      expiringWithin(keys, within, NOW).map((k) => k.metadata?.name);
    assert.deepEqual(names(H), ["expired", "in-30m", "active"]);
    assert.deepEqual(names(4 * H), ["expired", "in-30m", "in-3h", "active"]);
    assert.deepEqual(names(1000), ["expired"]);
  });
});
