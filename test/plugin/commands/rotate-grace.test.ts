// kubectl accesskey rotate --grace: a duration in whole seconds (the rotation-grace annotation
// carries seconds); 0, the default, asks for no window. Refused values never reach the server.

import assert from "node:assert/strict";
import { parseGrace } from "../../../plugin/src/commands/rotate.js";

describe("kubectl accesskey rotate --grace", () => {
  it("reads a duration in whole seconds, 0 by default", () => {
    assert.equal(parseGrace(undefined), 0);
    assert.equal(parseGrace("0"), 0);
    assert.equal(parseGrace("90s"), 90);
    assert.equal(parseGrace("1h30m"), 5400);
    assert.equal(parseGrace("1d"), 86400);
  });

  for (const value of ["1x", "-1h", "1.5h", ""]) {
    it(`refuses ${JSON.stringify(value)}`, () => {
      assert.throws(() => parseGrace(value), /--grace/);
    });
  }
});
