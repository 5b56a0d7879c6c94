import assert from "node:assert/strict";
import { describe, it } from "mocha";
import {
  ControllerLabel,
  hostLabel,
  hostLabelSelector,
  hostLabelsMap,
  isTranslatedLabel,
  LABELS_TO_TRANSLATE,
  LabelPrefix,
  MarkerLabel,
  NamespaceLabel,
  NamespaceLabelPrefix,
  virtualLabel,
  virtualLabelSelector,
  virtualLabelsMap,
} from "../../../webhook/src/patches/labels.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";

const suffix = { name: "suffix", namespace: "vcluster-suffix" };
const myVc = { name: "my-vcluster", namespace: "vcluster-my-vcluster" };

// Worked examples from docs/reference.md#label-keys
const RELEASE_SUFFIX = "vcluster.loft.sh/label-suffix-x-a4d451ec23";
const NAMESPACE_SUFFIX = "vcluster.loft.sh/label-suffix-x-101dcd4e86";
const MANAGED_BY_SUFFIX = "vcluster.loft.sh/label-suffix-x-e5f1b28ab2";
const CONTROLLED_BY_SUFFIX = "vcluster.loft.sh/label-suffix-x-2080cec00f";

describe("patches/labels", () => {
  it("constants", () => {
    assert.equal(LabelPrefix, "vcluster.loft.sh/label");
    assert.equal(NamespaceLabelPrefix, "vcluster.loft.sh/ns-label");
    assert.equal(MarkerLabel, "vcluster.loft.sh/managed-by");
    assert.equal(NamespaceLabel, "vcluster.loft.sh/namespace");
    assert.equal(ControllerLabel, "vcluster.loft.sh/controlled-by");
    assert.deepEqual(
      [...LABELS_TO_TRANSLATE],
      ["release", NamespaceLabel, MarkerLabel, ControllerLabel],
    );
  });

  describe("hostLabel / isTranslatedLabel / virtualLabel (docs/reference.md#label-keys)", () => {
    const table: [string, { name: string; namespace: string }, string][] = [
      ["release", suffix, RELEASE_SUFFIX],
      [NamespaceLabel, suffix, NAMESPACE_SUFFIX],
      [MarkerLabel, suffix, MANAGED_BY_SUFFIX],
      [ControllerLabel, suffix, CONTROLLED_BY_SUFFIX],
      ["release", myVc, "vcluster.loft.sh/label-my-vcluster-x-a4d451ec23"],
      [
        "release",
        { name: "my-very-long-virtual-cluster-name-prod", namespace: "x" },
        "vcluster.loft.sh/label-my-very-long-virtual-cluster--835d970f9e",
      ],
    ];
    for (const [key, vc, host] of table) {
      it(`${key} in ${vc.name}`, () => {
        assert.equal(hostLabel(key, vc), host);
        assert.equal(isTranslatedLabel(host, vc), key);
        assert.equal(virtualLabel(host, vc), key);
      });
    }

    it("other keys keep their names (app is not rewritten since v0.21)", () => {
      assert.equal(hostLabel("app", suffix), "app");
      assert.equal(isTranslatedLabel("app", suffix), null);
      assert.equal(virtualLabel("app", suffix), "app");
    });

    it("the host-only keys never flow back", () => {
      for (const key of LABELS_TO_TRANSLATE) assert.equal(virtualLabel(key, suffix), null);
    });

    it("a key hashed for another vCluster is not translated", () => {
      assert.equal(isTranslatedLabel(RELEASE_SUFFIX, myVc), null);
      assert.equal(virtualLabel(RELEASE_SUFFIX, myVc), RELEASE_SUFFIX);
    });
  });

  describe("hostLabelsMap (docs/reference.md#label-maps)", () => {
    it("null gives null", () => {
      assert.equal(hostLabelsMap(null, null, "default", true, suffix), null);
    });

    it("metadata: translates keys and adds marker and namespace", () => {
      assert.deepEqual(
        hostLabelsMap({ app: "web", release: "r1" }, null, "default", true, suffix),
        {
          app: "web",
          [RELEASE_SUFFIX]: "r1",
          [MarkerLabel]: "suffix",
          [NamespaceLabel]: "default",
        },
      );
    });

    it("drops keys that already look translated (anti-spoofing)", () => {
      const out = hostLabelsMap({ [RELEASE_SUFFIX]: "spoof", app: "a" }, null, "ns", true, suffix);
      assert.deepEqual(out, { app: "a", [MarkerLabel]: "suffix", [NamespaceLabel]: "ns" });
    });

    it("a virtual managed-by label is hashed, not trusted", () => {
      const out = hostLabelsMap({ [MarkerLabel]: "other" }, null, "ns", true, suffix);
      assert.deepEqual(out, {
        [MANAGED_BY_SUFFIX]: "other",
        [MarkerLabel]: "suffix",
        [NamespaceLabel]: "ns",
      });
    });

    it("cluster-scoped: marker is SafeConcatName(targetNs, x, vc)", () => {
      assert.deepEqual(hostLabelsMap({}, null, "", true, myVc), {
        [MarkerLabel]: "vcluster-my-vcluster-x-my-vcluster",
      });
    });

    it("selector (not metadata) with a host map lacking the marker: no scoping labels", () => {
      assert.deepEqual(hostLabelsMap({ app: "web" }, { app: "old" }, "default", false, suffix), {
        app: "web",
      });
    });

    it("selector with a host map carrying the marker: scoping labels added", () => {
      const p = { [MarkerLabel]: "suffix" };
      assert.deepEqual(hostLabelsMap({ app: "web" }, p, "default", false, suffix), {
        app: "web",
        [MarkerLabel]: "suffix",
        [NamespaceLabel]: "default",
      });
    });

    it("keeps the host's controlled-by label, not an empty one", () => {
      const p = { [ControllerLabel]: "ctrl" };
      assert.deepEqual(hostLabelsMap({ a: "1" }, p, "ns", false, suffix), {
        a: "1",
        [ControllerLabel]: "ctrl",
      });
      assert.deepEqual(hostLabelsMap({ a: "1" }, { [ControllerLabel]: "" }, "ns", false, suffix), {
        a: "1",
      });
    });

    it("keeps a __proto__ key as an own property", () => {
      const v = JSON.parse('{"__proto__": "x"}') as Record<string, string>;
      const out = hostLabelsMap(v, {}, "ns", false, suffix)!;
      assert.ok(Object.hasOwn(out, "__proto__"));
      assert.equal(Object.getPrototypeOf(out), Object.prototype);
    });
  });

  describe("virtualLabelsMap (docs/reference.md#label-maps)", () => {
    it("null gives null", () => {
      assert.equal(virtualLabelsMap(null, null, suffix), null);
      assert.equal(virtualLabelsMap(null, { a: "1" }, suffix), null);
    });

    it("round-trips hostLabelsMap for metadata", () => {
      const v = { app: "web", release: "r1", [MarkerLabel]: "tenant-value" };
      const p = hostLabelsMap(v, null, "default", true, suffix);
      assert.deepEqual(virtualLabelsMap(p, null, suffix), {
        app: "web",
        release: "r1",
        [MarkerLabel]: "tenant-value",
      });
    });

    it("host values win for ordinary keys; host-only keys disappear", () => {
      const p = {
        app: "host",
        [MarkerLabel]: "suffix",
        [NamespaceLabel]: "ns",
        [ControllerLabel]: "c",
        extra: "e",
      };
      assert.deepEqual(virtualLabelsMap(p, { app: "virtual" }, suffix), {
        app: "host",
        extra: "e",
      });
    });

    it("ns-label keys come from the virtual side only", () => {
      const nsKey = "vcluster.loft.sh/ns-label-suffix-x-cf1227b7b2";
      assert.deepEqual(virtualLabelsMap({ [nsKey]: "host" }, null, suffix), {});
      assert.deepEqual(virtualLabelsMap({ [nsKey]: "host" }, { [nsKey]: "virtual" }, suffix), {
        [nsKey]: "virtual",
      });
    });
  });

  describe("label selectors (keys only)", () => {
    const selector: JsonObject = {
      matchLabels: { release: "r1", app: "web" },
      matchExpressions: [
        { key: "release", operator: "In", values: ["release"] },
        { key: "tier", operator: "Exists" },
      ],
    };
    const hosted: JsonObject = {
      matchLabels: { [RELEASE_SUFFIX]: "r1", app: "web" },
      matchExpressions: [
        { key: RELEASE_SUFFIX, operator: "In", values: ["release"] },
        { key: "tier", operator: "Exists" },
      ],
    };

    it("hostLabelSelector translates keys, not values, and adds nothing", () => {
      assert.deepEqual(hostLabelSelector(selector, suffix), hosted);
    });

    it("virtualLabelSelector reverses it", () => {
      assert.deepEqual(virtualLabelSelector(hosted, suffix), selector);
    });

    it("keeps a host-only key rather than widening the selector", () => {
      const sel = { matchLabels: { [MarkerLabel]: "suffix" } };
      assert.deepEqual(virtualLabelSelector(sel, suffix), sel);
    });

    it("tolerates wrong shapes", () => {
      const odd = { matchLabels: ["release"], matchExpressions: [null, 3, { key: 5 }], other: 1 };
      assert.deepEqual(hostLabelSelector(odd, suffix), odd);
      assert.deepEqual(hostLabelSelector({}, suffix), {});
    });
  });
});
