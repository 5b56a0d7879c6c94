import assert from "node:assert/strict";
import { describe, it } from "mocha";
import {
  applyLabelsPatch,
  isSelector,
  isStringMap,
} from "../../../webhook/src/patches/labels-patch.js";
import { hostLabel, MarkerLabel, NamespaceLabel } from "../../../webhook/src/patches/labels.js";
import type { Json, VClusterInfo } from "../../../webhook/src/patches/types.js";

const VC: VClusterInfo = { name: "suffix", namespace: "vcluster-suffix", config: {} };
const virtualObject = { metadata: { name: "x", namespace: "team" } };
const run = (value: Json, direction: "toHost" | "toVirtual" = "toHost") =>
  applyLabelsPatch({ value, direction, vcluster: VC, virtualObject });

describe("patches/labels-patch", () => {
  it("a string map to the host: keys translated and scoping labels added (docs/reference.md#labels-patch-translator)", () => {
    const out = run({ app: "web", release: "r1" });
    assert.equal(out.kind, "set");
    // docs/reference.md#label-keys example: release in vCluster "suffix".
    assert.deepEqual(out.kind === "set" && out.value, {
      app: "web",
      "vcluster.loft.sh/label-suffix-x-a4d451ec23": "r1",
      [MarkerLabel]: "suffix",
      [NamespaceLabel]: "team",
    });
  });

  it("a string map back to the virtual cluster: translated keys restored, host-only keys dropped", () => {
    const host = { app: "web", [hostLabel("release", VC)]: "r1", [MarkerLabel]: "suffix" };
    const out = run(host, "toVirtual");
    assert.deepEqual(out.kind === "set" && out.value, { app: "web", release: "r1" });
  });

  it("a selector: only keys are translated, no scoping labels", () => {
    const selector = {
      matchLabels: { release: "r1" },
      matchExpressions: [{ key: "release", operator: "In", values: ["a"] }],
    };
    const out = run(selector);
    const key = hostLabel("release", VC);
    assert.deepEqual(out.kind === "set" && out.value, {
      matchLabels: { [key]: "r1" },
      matchExpressions: [{ key, operator: "In", values: ["a"] }],
    });
    const back = run(out.kind === "set" ? out.value : null, "toVirtual");
    assert.deepEqual(back.kind === "set" && back.value, selector);
  });

  it("any other shape is kept with a warning (docs/decisions.md EPS-3)", () => {
    const odd: Json[] = [
      "s",
      1,
      null,
      ["a"],
      { app: 1 },
      { matchLabels: { a: 1 } },
      { matchExpressions: {} },
    ];
    for (const value of odd) {
      const out = run(value);
      assert.equal(out.kind, "keep", JSON.stringify(value));
      assert.ok(out.warning);
    }
  });

  it("classifies shapes", () => {
    assert.ok(isStringMap({}) && isStringMap({ a: "b" }));
    assert.ok(!isStringMap({ a: null }) && !isStringMap([]));
    assert.ok(isSelector({ matchLabels: {} }) && isSelector({ matchExpressions: [] }));
    assert.ok(!isSelector({}) && !isSelector({ matchLabels: {}, other: 1 }));
  });
});
