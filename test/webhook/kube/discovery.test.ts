import assert from "node:assert/strict";
import fc from "fast-check";
import {
  discoveryPath,
  parseApiVersion,
  resourcesByKind,
} from "../../../webhook/src/kube/discovery.js";

describe("parseApiVersion", () => {
  it("reads the core group and named groups", () => {
    assert.deepEqual(parseApiVersion("v1"), { group: "", version: "v1" });
    assert.deepEqual(parseApiVersion("apps/v1"), { group: "apps", version: "v1" });
    assert.deepEqual(parseApiVersion("storage.loft.sh/v1beta1"), {
      group: "storage.loft.sh",
      version: "v1beta1",
    });
  });

  it("rejects what cannot be a group/version or could change the discovery URL", () => {
    for (const bad of [
      "",
      "/",
      "a/",
      "/v1",
      "a/b/c",
      "../v1",
      "a/..",
      "a/v1?x",
      "A/v1",
      "a b/v1",
      "%2e/v1",
    ]) {
      assert.equal(parseApiVersion(bad), null, bad);
    }
  });

  it("never yields a path that leaves its prefix", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const gv = parseApiVersion(s);
        if (!gv) return;
        const path = discoveryPath(gv);
        assert.match(path, /^\/apis?\/[a-z0-9.-]+(\/[a-z0-9-]+)?$/);
        assert.ok(!path.includes(".."));
      }),
    );
  });
});

describe("discoveryPath", () => {
  it("uses /api for core and /apis for groups", () => {
    assert.equal(discoveryPath({ group: "", version: "v1" }), "/api/v1");
    assert.equal(discoveryPath({ group: "apps", version: "v1" }), "/apis/apps/v1");
  });
});

describe("resourcesByKind", () => {
  const gv = { group: "", version: "v1" };

  it("maps kinds to top-level resources, skipping subresources listed first", () => {
    const list = {
      resources: [
        { name: "pods/status", kind: "Pod", namespaced: true },
        { name: "pods", kind: "Pod", namespaced: true },
        { name: "namespaces", kind: "Namespace", namespaced: false },
      ],
    };
    const byKind = resourcesByKind(gv, list);
    assert.deepEqual(byKind.get("Pod"), {
      group: "",
      version: "v1",
      resource: "pods",
      namespaced: true,
    });
    assert.equal(byKind.get("Namespace")?.namespaced, false);
  });

  it("ignores malformed entries and bodies without crashing", () => {
    const list = {
      resources: [
        null,
        5,
        [],
        { name: 7, kind: "X" },
        { name: "xs", kind: {} },
        { name: "", kind: "Y" },
        { name: "ok", kind: "Ok", namespaced: "yes" },
      ],
    };
    const byKind = resourcesByKind(gv, list);
    assert.deepEqual([...byKind.keys()], ["Ok"]);
    assert.equal(byKind.get("Ok")?.namespaced, false);
    for (const body of [null, "x", [], {}, { resources: {} }])
      assert.equal(resourcesByKind(gv, body).size, 0);
  });

  it("keeps __proto__ as an ordinary kind", () => {
    const list = JSON.parse('{"resources":[{"name":"protos","kind":"__proto__"}]}') as unknown;
    const byKind = resourcesByKind(gv, list);
    assert.equal(byKind.get("__proto__")?.resource, "protos");
    assert.equal(byKind.get("constructor"), undefined);
  });
});
