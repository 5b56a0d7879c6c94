// --ttl of `kubectl accesskey create`: units s, m, h, d, w to seconds.

import assert from "node:assert/strict";
import fc from "fast-check";
import { parseTtl } from "../../../plugin/src/keys/ttl.js";

describe("create --ttl", () => {
  it("reads the issue's examples", () => {
    assert.equal(parseTtl("90s"), 90);
    assert.equal(parseTtl("30m"), 1800);
    assert.equal(parseTtl("12h"), 43_200);
    assert.equal(parseTtl("30d"), 2_592_000);
    assert.equal(parseTtl("2w"), 1_209_600);
    assert.equal(parseTtl("1d12h"), 129_600);
  });

  it("refuses anything else with a message naming the units", () => {
    for (const bad of ["", "30", "1y", "-1h", "1.5h", "0s", "h", "1 h", "1h30"]) {
      assert.throws(
        () => parseTtl(bad),
        /use a number with a unit s, m, h, d or w|more than 0/,
        bad,
      );
    }
  });

  it("n units are n times the unit's seconds", () => {
    const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.constantFrom("s", "m", "h", "d", "w"),
        (n, u) => {
          assert.equal(parseTtl(`${n}${u}`), n * unit[u]);
        },
      ),
    );
  });
});
