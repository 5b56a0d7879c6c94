import assert from "node:assert/strict";
import fc from "fast-check";
import { KubeError } from "../../../webhook/src/shared/status.js";
import {
  assertJsonDepth,
  assertValueDepth,
  MAX_JSON_DEPTH,
  parseJsonBody,
} from "../../../webhook/src/server/body.js";

/** Reference: nesting depth of a parsed value (1 for a flat object or array, 0 for a scalar). */
function depthOf(v: unknown): number {
  if (typeof v !== "object" || v === null) return 0;
  const children = Object.values(v).map(depthOf);
  return 1 + (children.length ? Math.max(...children) : 0);
}

const badRequest = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(
    fn,
    (e: unknown) => e instanceof KubeError && e.code === 400 && pattern.test(e.message),
  );

describe("request body parsing", () => {
  it("accepts nesting up to the limit and rejects one level more", () => {
    const nested = (n: number) => Buffer.from(`${"[".repeat(n)}${"]".repeat(n)}`);
    assert.doesNotThrow(() => assertJsonDepth(nested(MAX_JSON_DEPTH)));
    badRequest(() => assertJsonDepth(nested(MAX_JSON_DEPTH + 1)), /nested deeper than 100 levels/);
  });

  it("checks parsed values the same way, and both paths of parseJsonBody reject deep bodies", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 8 }), (value, max) => {
        let threw = false;
        try {
          assertValueDepth(value, max);
        } catch {
          threw = true;
        }
        assert.equal(threw, depthOf(value) > max);
      }),
    );
    const small = Buffer.from(`${"[".repeat(1000)}${"]".repeat(1000)}`);
    badRequest(() => parseJsonBody(small), /nested deeper than 100 levels/);
    const large = Buffer.from(`${"[".repeat(40_000)}${"]".repeat(40_000)}`);
    badRequest(() => parseJsonBody(large), /nested deeper than 100 levels/);
  });

  it("ignores brackets inside strings, including after escaped quotes", () => {
    const text = JSON.stringify({ a: `\\"${"[{".repeat(500)}`, b: '"]]]]' });
    assert.doesNotThrow(() => assertJsonDepth(Buffer.from(text), 2));
  });

  it("agrees with the depth of the parsed value for any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 8 }), (value, max) => {
        const bytes = Buffer.from(JSON.stringify(value));
        const deep = depthOf(value) > max;
        let threw = false;
        try {
          assertJsonDepth(bytes, max);
        } catch {
          threw = true;
        }
        assert.equal(threw, deep);
      }),
    );
  });

  it("rejects empty bodies, invalid UTF-8 and malformed JSON with clear messages", () => {
    badRequest(() => parseJsonBody(Buffer.alloc(0)), /empty/);
    badRequest(() => parseJsonBody(Buffer.from([0x7b, 0xc3, 0x28, 0x7d])), /not valid UTF-8/);
    badRequest(
      () => parseJsonBody(Buffer.from('{"a":')),
      /^request body is not valid JSON: unexpected end of input at line 1, column 6 \(byte 5\)$/,
    );
    badRequest(
      () => parseJsonBody(Buffer.from('{\n"key": "hunter2-secret" }}')),
      /^request body is not valid JSON: unexpected data after the JSON value at line 2, column 26 \(byte 27\)$/,
    );
    assert.deepEqual(parseJsonBody(Buffer.from('{"a":["é"]}')), { a: ["é"] });
  });
});
