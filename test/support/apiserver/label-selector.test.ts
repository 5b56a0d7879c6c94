// metav1.LabelSelector semantics as labels.Selector evaluates them.

import assert from "node:assert/strict";
import { compileLabelSelector, labelsOf, type LabelSelector } from "./label-selector.js";

const matches = (sel: LabelSelector | null, labels?: Record<string, string>): boolean => {
  const c = compileLabelSelector(sel);
  assert.ok(!("error" in c), JSON.stringify(c));
  return c.matches(labels);
};

const errorOf = (sel: LabelSelector): string => {
  const c = compileLabelSelector(sel);
  assert.ok("error" in c, "expected an error");
  return c.error;
};

describe("metav1.LabelSelector objects", () => {
  it("{} matches everything and is empty; null matches nothing", () => {
    const everything = compileLabelSelector({});
    assert.ok(!("error" in everything) && everything.empty);
    assert.equal(matches({}, undefined), true);
    assert.equal(matches({ matchLabels: {}, matchExpressions: [] }, { a: "b" }), true);
    assert.equal(matches(null, { a: "b" }), false);
    assert.equal(matches(null, undefined), false);
  });

  it("matchLabels requires every key with that value", () => {
    const sel = { matchLabels: { env: "prod", team: "a" } };
    assert.equal(matches(sel, { env: "prod", team: "a", x: "y" }), true);
    assert.equal(matches(sel, { env: "prod" }), false);
    assert.equal(matches(sel, { env: "dev", team: "a" }), false);
    assert.equal(matches({ matchLabels: { empty: "" } }, { empty: "" }), true);
    assert.equal(matches({ matchLabels: { empty: "" } }, {}), false);
  });

  it("In needs the label with one of the values", () => {
    const sel = { matchExpressions: [{ key: "env", operator: "In", values: ["a", "b"] }] };
    assert.equal(matches(sel, { env: "b" }), true);
    assert.equal(matches(sel, { env: "c" }), false);
    assert.equal(matches(sel, {}), false);
  });

  it("NotIn also holds when the label is absent", () => {
    const sel = { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] };
    assert.equal(matches(sel, {}), true);
    assert.equal(matches(sel, undefined), true);
    assert.equal(matches(sel, { env: "dev" }), true);
    assert.equal(matches(sel, { env: "prod" }), false);
  });

  it("Exists and DoesNotExist look only at the key", () => {
    const exists = { matchExpressions: [{ key: "k", operator: "Exists" }] };
    const absent = { matchExpressions: [{ key: "k", operator: "DoesNotExist" }] };
    assert.equal(matches(exists, { k: "" }), true);
    assert.equal(matches(exists, {}), false);
    assert.equal(matches(absent, {}), true);
    assert.equal(matches(absent, { k: "v" }), false);
  });

  it("ANDs matchLabels and all expressions", () => {
    const sel: LabelSelector = {
      matchLabels: { app: "x" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["web"] },
        { key: "legacy", operator: "DoesNotExist" },
      ],
    };
    assert.equal(matches(sel, { app: "x", tier: "web" }), true);
    assert.equal(matches(sel, { app: "x", tier: "web", legacy: "1" }), false);
    assert.equal(matches(sel, { app: "y", tier: "web" }), false);
  });

  it("does not mistake inherited properties for labels", () => {
    const sel = { matchExpressions: [{ key: "constructor", operator: "Exists" }] };
    assert.equal(matches(sel, {}), false);
  });

  it("rejects malformed expressions with kube's messages", () => {
    assert.equal(
      errorOf({ matchExpressions: [{ key: "k", operator: "In", values: [] }] }),
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    );
    assert.equal(
      errorOf({ matchExpressions: [{ key: "k", operator: "Exists", values: ["a"] }] }),
      'values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist',
    );
    assert.equal(
      errorOf({ matchExpressions: [{ key: "k", operator: "Equals", values: ["a"] }] }),
      '"Equals" is not a valid label selector operator',
    );
  });

  it("reads an object's labels", () => {
    assert.deepEqual(labelsOf({ metadata: { labels: { a: "b" } } }), { a: "b" });
    assert.equal(labelsOf({ metadata: {} }), undefined);
    assert.equal(labelsOf(null), undefined);
  });
});
