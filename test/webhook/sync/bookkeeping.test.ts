import assert from "node:assert/strict";
import { protectBookkeeping } from "../../../webhook/src/sync/bookkeeping.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";

describe("protectBookkeeping", () => {
  const obj: JsonObject = {
    metadata: {
      name: "db",
      annotations: { owner: "a", "vcluster.loft.sh/object-name": "db" },
      labels: { app: "db", "vcluster.loft.sh/managed-by": "vc" },
    },
  };

  it("hides vcluster.loft.sh/ keys from the patches and puts them back unchanged", () => {
    const g = protectBookkeeping(obj);
    assert.deepEqual((g.object.metadata as JsonObject).annotations, { owner: "a" });
    assert.deepEqual((g.object.metadata as JsonObject).labels, { app: "db" });
    const patched: JsonObject = {
      metadata: {
        name: "db",
        annotations: { owner: "tenant-a", "vcluster.loft.sh/object-name": "evil" },
      },
    };
    const out = g.restore(patched);
    assert.deepEqual((out.metadata as JsonObject).annotations, {
      owner: "tenant-a",
      "vcluster.loft.sh/object-name": "db",
    });
    assert.deepEqual((out.metadata as JsonObject).labels, { "vcluster.loft.sh/managed-by": "vc" });
  });

  it("leaves objects without metadata maps alone and never changes its input", () => {
    const copy = structuredClone(obj);
    protectBookkeeping(obj).restore({ metadata: {} });
    assert.deepEqual(obj, copy);
    const bare: JsonObject = { subsets: [] };
    assert.deepEqual(protectBookkeeping(bare).restore({ subsets: [1] }), { subsets: [1] });
  });

  it("keeps __proto__ keys as data", () => {
    const hostile = JSON.parse(
      '{"metadata":{"annotations":{"__proto__":{"x":1},"k":"v"}}}',
    ) as JsonObject;
    const g = protectBookkeeping(hostile);
    const ann = (g.object.metadata as JsonObject).annotations as JsonObject;
    assert.ok(Object.hasOwn(ann, "__proto__"));
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});
