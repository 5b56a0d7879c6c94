// Strategic merge patch, pure: the directives and list strategies kubectl's patches rely on.

import assert from "node:assert/strict";
import { strategicMerge, strategyTable } from "./strategic-merge.js";

const pod = strategyTable("", "Pod");
const service = strategyTable("", "Service");

describe("strategic merge patch", () => {
  it("merges finalizers as a set and deletes from it with $deleteFromPrimitiveList", () => {
    const out = strategicMerge(
      { metadata: { finalizers: ["a", "b"] } },
      { metadata: { finalizers: ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"] } },
      pod,
    );
    assert.deepEqual(out, { metadata: { finalizers: ["b", "c"] } });
  });

  it("merges service ports by port and replaces lists without a strategy", () => {
    const out = strategicMerge(
      { spec: { ports: [{ port: 80, name: "http" }], externalIPs: ["1.1.1.1"] } },
      {
        spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }], externalIPs: ["2.2.2.2"] },
      },
      service,
    );
    assert.deepEqual(out, {
      spec: {
        ports: [{ port: 80, name: "http", targetPort: 8080 }, { port: 443 }],
        externalIPs: ["2.2.2.2"],
      },
    });
  });

  it("honours $patch: replace on a list and on a map, and $patch: delete on a map", () => {
    const original = {
      spec: { containers: [{ name: "a" }, { name: "b" }], nodeSelector: { x: "1" } },
    };
    const out = strategicMerge(
      original,
      {
        spec: {
          containers: [{ name: "c" }, { $patch: "replace" }],
          nodeSelector: { y: "2", $patch: "replace" },
        },
      },
      pod,
    );
    assert.deepEqual(out, { spec: { containers: [{ name: "c" }], nodeSelector: { y: "2" } } });
    const gone = strategicMerge(original, { spec: { nodeSelector: { $patch: "delete" } } }, pod);
    assert.deepEqual(gone, { spec: { containers: [{ name: "a" }, { name: "b" }] } });
    assert.deepEqual(original.spec.nodeSelector, { x: "1" }, "the original is not changed");
  });

  it("orders merged lists by $setElementOrder and keeps $retainKeys only", () => {
    const out = strategicMerge(
      {
        spec: {
          containers: [{ name: "a" }, { name: "b" }],
          volumes: [{ name: "v", emptyDir: {} }],
        },
      },
      {
        spec: {
          "$setElementOrder/containers": [{ name: "b" }, { name: "a" }],
          containers: [{ name: "a", image: "i" }],
          volumes: [{ name: "v", $retainKeys: ["name", "configMap"], configMap: { name: "c" } }],
        },
      },
      pod,
    );
    assert.deepEqual(out, {
      spec: {
        containers: [{ name: "b" }, { name: "a", image: "i" }],
        volumes: [{ name: "v", configMap: { name: "c" } }],
      },
    });
  });

  it("refuses a list item without its merge key, and a patch that is not a map", () => {
    assert.throws(
      () => strategicMerge({}, { spec: { containers: [{ image: "x" }] } }, pod),
      /does not contain declared merge key: name/,
    );
    assert.throws(() => strategicMerge({}, [], pod), /invalid JSON document/);
  });
});
