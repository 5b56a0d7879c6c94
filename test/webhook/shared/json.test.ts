// The one isObject (webhook/src/shared/json.ts), and the plugin's isJsonObject built on it. Until
// issue 24 the same guard was written 21 times; each read `typeof v === "object" && v !== null &&
// !Array.isArray(v)`, which stays the oracle here.

import assert from "node:assert/strict";
import fc from "fast-check";
import { isObject } from "../../../webhook/src/shared/json.js";
import { GoFloat, isJsonObject } from "../../../plugin/src/output/go-values.js";

const oldGuard = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

describe("isObject", () => {
  it("is true for objects, not for arrays, null or other types", () => {
    const yes: unknown[] = [
      {},
      { a: 1 },
      Object.create(null),
      new Date(0),
      new Map(),
      /x/,
      new GoFloat(1),
    ];
    const no: unknown[] = [null, undefined, [], [1], "{}", 0, true, () => ({}), Symbol("s"), 1n];
    for (const v of yes) assert.equal(isObject(v), true);
    for (const v of no) assert.equal(isObject(v), false, typeof v);
  });

  it("answers as the guards it replaces did, for any value", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withMap: true, withSet: true }), (v) => {
        assert.equal(isObject(v), oldGuard(v));
      }),
    );
  });

  it("the plugin's isJsonObject is isObject except for a GoFloat, a number to Go", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true }), (v) => {
        assert.equal(isJsonObject(v), oldGuard(v));
      }),
    );
    assert.equal(isJsonObject(new GoFloat(1.5)), false);
    assert.equal(isObject(new GoFloat(1.5)), true);
  });
});
