// The JSON patch of `kubectl accesskey annotate`: RFC 6901 escaping and the shape the product
// document gives (add at /metadata/annotations/<key>, remove to drop).

import assert from "node:assert/strict";
import {
  annotationPatch,
  escapePointer,
  parseAnnotationArgs,
} from "../../../plugin/src/commands/annotate.js";

describe("annotate: JSON patch", () => {
  it("escapes ~ as ~0 before / as ~1 (RFC 6901)", () => {
    assert.equal(escapePointer("example.com/owner"), "example.com~1owner");
    assert.equal(escapePointer("a~b"), "a~0b");
    // `~1` in a key is a literal tilde and one: it must not turn into a slash.
    assert.equal(escapePointer("x~1/y"), "x~01~1y");
  });

  it("adds each key under existing annotations and removes only keys that exist", () => {
    const change = parseAnnotationArgs(["example.com/a=1", "b=", "gone-", "absent-"]);
    assert.deepEqual(annotationPatch({ gone: "x", other: "y" }, change), [
      { op: "add", path: "/metadata/annotations/example.com~1a", value: "1" },
      { op: "add", path: "/metadata/annotations/b", value: "" },
      { op: "remove", path: "/metadata/annotations/gone" },
    ]);
  });

  it("without annotations, adds the whole map (a member needs its parent)", () => {
    const change = parseAnnotationArgs(["a/b=1", "c-"]);
    assert.deepEqual(annotationPatch(undefined, change), [
      { op: "add", path: "/metadata/annotations", value: { "a/b": "1" } },
    ]);
  });

  it("refuses arguments that neither set nor remove, and set-and-remove of one key", () => {
    assert.throws(() => parseAnnotationArgs(["novalue"]), /invalid annotation "novalue"/);
    assert.throws(() => parseAnnotationArgs(["a=1", "a-"]), /can not both modify and remove/);
  });
});
