import assert from "node:assert/strict";
import fc from "fast-check";
import { findJsonSyntaxError } from "../../../webhook/src/server/json-syntax.js";
import { jsonSyntaxMessage } from "../../../webhook/src/server/body.js";

/** Characters that make JSON and break it: structure, literals, numbers, escapes, a control char. */
const jsonish = fc.constantFrom(...'{}[]:,"\\ \n\t0123456789-+.eEtrufalsn\u0001xu/bA');

/** V8's verdict on `text`: undefined when it parses, else its message. */
function v8Error(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The scanner agrees with JSON.parse on validity, and on the offset wherever V8 names one. */
function agreesWithV8(text: string): void {
  const v8 = v8Error(text);
  const mine = findJsonSyntaxError(Buffer.from(text));
  assert.equal(mine === undefined, v8 === undefined, `${JSON.stringify(text)}: V8 says ${v8}`);
  if (!v8 || !mine) return;
  const at = /at position (\d+)/.exec(v8)?.[1];
  if (at !== undefined) assert.equal(mine.offset, Number(at), `${JSON.stringify(text)}: ${v8}`);
  if (/end of JSON input/.test(v8)) assert.equal(mine.offset, Buffer.byteLength(text));
}

describe("JSON syntax errors", () => {
  it("finds no error in any valid JSON", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        assert.equal(findJsonSyntaxError(Buffer.from(text)), undefined, text);
      }),
    );
  });

  it("agrees with JSON.parse on short strings of JSON's own characters", () => {
    fc.assert(
      fc.property(
        fc.array(jsonish, { maxLength: 20 }).map((a) => a.join("")),
        agreesWithV8,
      ),
      { numRuns: 20_000 },
    );
  });

  it("agrees with JSON.parse on valid JSON with one character inserted, deleted or replaced", () => {
    fc.assert(
      fc.property(
        fc.json(),
        fc.nat(),
        jsonish,
        fc.integer({ min: 0, max: 2 }),
        (json, n, c, op) => {
          const i = n % (json.length + 1);
          const edits = [
            json.slice(0, i) + c + json.slice(i),
            json.slice(0, i) + json.slice(i + 1),
            json.slice(0, i) + c + json.slice(i + 1),
          ];
          agreesWithV8(edits[op]!);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("gives line and column in bytes, and scans any depth without recursion", () => {
    assert.deepEqual(findJsonSyntaxError(Buffer.from('{\n  "a": 1,\n  "b" 2\n}')), {
      offset: 18,
      line: 3,
      column: 7,
      problem: "expected ':' after an object key",
    });
    // Multi-byte characters count as their bytes.
    assert.equal(findJsonSyntaxError(Buffer.from('["é",]'))?.offset, 6);
    const deep = Buffer.from(`${"[".repeat(500_000)}1${"]".repeat(499_999)}`);
    assert.equal(findJsonSyntaxError(deep)?.problem, "unexpected end of input");
  });

  it("names the position and never the text: a planted secret stays out of the message", () => {
    const secret = "Zx9-planted-Secret-Qw7Lm2Np4Rt6Yv8Bc0Df3Gh";
    const bodies = [
      `{"spec":{"key":"${secret}",]}}`,
      `{"spec":{"key":"${secret}" "x":1}}`,
      `[1,2,]${secret}`,
      `{"key":"${secret}`,
      `{"key":"${secret}\\q"}`,
      `{"key":${secret}}`,
    ];
    for (const body of bodies) {
      const v8 = v8Error(body);
      const message = jsonSyntaxMessage(Buffer.from(body));
      assert.match(
        message,
        /^request body is not valid JSON: .* at line 1, column \d+ \(byte \d+\)$/,
      );
      assert.ok(!message.includes(secret.slice(0, 6)), message);
      // Not a hollow check: V8's own message does quote some of them.
      if (body.startsWith("[1,2,]")) assert.ok(v8?.includes("[1,2,]"), v8);
    }
  });
});
