// Label and field selectors, pure: kube's grammar, matching and error texts.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import { labelsMatch, parseFieldSelector, parseLabelSelector } from "./selectors.js";

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof KubeError);
    assert.equal(err.code, 400);
    return err.message;
  }
  return assert.fail("no error");
}

describe("label selectors", () => {
  it("parses kube's example and matches as kube does", () => {
    const reqs = parseLabelSelector("x in (foo,,baz),y,z notin ()");
    assert.deepEqual(
      reqs.map((r) => [r.key, r.operator, r.values]),
      [
        ["x", "in", ["", "baz", "foo"]],
        ["y", "exists", []],
        ["z", "notin", [""]],
      ],
    );
    assert.equal(labelsMatch(reqs, { x: "foo", y: "1" }), true);
    assert.equal(labelsMatch(reqs, { x: "bar", y: "1" }), false);
    assert.equal(labelsMatch(reqs, { x: "", y: "1", z: "" }), false);
  });

  it("treats in and notin as plain values where values go, and supports > and <", () => {
    assert.deepEqual(parseLabelSelector("a=in")[0]!.values, ["in"]);
    const gt = parseLabelSelector("n>3");
    assert.equal(labelsMatch(gt, { n: "4" }), true);
    assert.equal(labelsMatch(gt, { n: "3" }), false);
  });

  it("answers kube's parser texts", () => {
    assert.equal(
      errorOf(() => parseLabelSelector("a b")),
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    assert.equal(
      errorOf(() => parseLabelSelector("a in (b c)")),
      "unable to parse requirement: found 'c', expected: ',' or ')'",
    );
    assert.equal(
      errorOf(() => parseLabelSelector("a=b=c")),
      "found '=', expected: ',' or 'end of string'",
    );
    assert.match(
      errorOf(() => parseLabelSelector("a=b@")),
      /^unable to parse requirement: values\[0\]\[a\]: Invalid value: "b@": a valid label must be an empty string/,
    );
  });
});

describe("field selectors", () => {
  it("parses =, == and != with escapes, and refuses unknown fields and terms", () => {
    assert.deepEqual(parseFieldSelector("metadata.name==a\\,b,metadata.namespace!=x"), [
      { field: "metadata.name", value: "a,b", negated: false },
      { field: "metadata.namespace", value: "x", negated: true },
    ]);
    assert.equal(
      errorOf(() => parseFieldSelector("metadata.name")),
      "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    );
  });
});

describe("field selectors of built-in types", () => {
  it("accepts a type's own fields and refuses others with its conversion's text", () => {
    const event = { group: "", kind: "Event" };
    assert.equal(parseFieldSelector("involvedObject.kind=ConfigMap,type=Normal", event).length, 2);
    assert.equal(
      errorOf(() => parseFieldSelector("spec.x=1", event)),
      "field label not supported: spec.x",
    );
  });
});

describe("field selectors of built-in types", () => {
  it("accepts a type's own fields and refuses others with its conversion's text", () => {
    const event = { group: "", kind: "Event" };
    assert.equal(parseFieldSelector("involvedObject.kind=ConfigMap,type=Normal", event).length, 2);
    assert.equal(
      errorOf(() => parseFieldSelector("spec.x=1", event)),
      "field label not supported: spec.x",
    );
  });
});
