// The soak's numbers: percentiles and the RSS trend it passes or fails on.

import assert from "node:assert/strict";
import { floorSlopePerMinute, percentile, slopePerMinute } from "./stats.js";

describe("soak statistics", () => {
  it("nearest-rank percentiles", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.equal(percentile(values, 0.5), 50);
    assert.equal(percentile(values, 0.99), 99);
    assert.ok(Number.isNaN(percentile([], 0.5)));
  });

  it("the least-squares slope per minute, through noise", () => {
    // +3 MB a minute with a ±5 MB sawtooth, sampled every 2 s for 5 minutes.
    const rising = Array.from({ length: 150 }, (_, i) => ({
      t: i * 2000,
      value: 80 + (i * 2000 * 3) / 60_000 + (i % 5 === 0 ? 5 : -1.25),
    }));
    assert.ok(Math.abs(slopePerMinute(rising) - 3) < 0.1, String(slopePerMinute(rising)));
    const flat = rising.map((s, i) => ({ t: s.t, value: 80 + (i % 5 === 0 ? 5 : -1.25) }));
    assert.ok(Math.abs(slopePerMinute(flat)) < 0.1);
    assert.ok(Number.isNaN(slopePerMinute([{ t: 0, value: 1 }])));
  });

  it("the floor's slope: flat under a GC sawtooth shorter than its windows, rising with a leak", () => {
    // RSS climbs 20 MB over 40 s and drops back at each GC; 5 minutes, a sample every 2 s.
    const sawtooth = Array.from({ length: 150 }, (_, i) => ({
      t: i * 2000,
      value: 80 + ((i % 20) * 20) / 20,
    }));
    assert.ok(Math.abs(floorSlopePerMinute(sawtooth)) < 0.5, String(floorSlopePerMinute(sawtooth)));
    const leak = sawtooth.map((s) => ({ t: s.t, value: s.value + (s.t / 60_000) * 3 }));
    assert.ok(Math.abs(floorSlopePerMinute(leak) - 3) < 0.5, String(floorSlopePerMinute(leak)));
  });
});
