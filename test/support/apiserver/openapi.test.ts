// Discovery and OpenAPI v3 as kubectl reads them: categories, preferred versions, the
// fieldValidation parameter and patch types per kind, and CRD schemas.

import assert from "node:assert/strict";
import { compareVersions } from "./discovery.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { call } from "./test-client.js";

describe("apiserver discovery and OpenAPI v3", () => {
  let server: TestApiServer;
  before(async () => {
    server = await startApiServer({ crds: "manifests" });
  });
  after(() => server.close());

  it("orders versions as kube does (GA, beta, alpha; higher first)", () => {
    const sorted = ["v1alpha1", "v1", "v2beta1", "v1beta2", "v2", "foo"].sort(compareVersions);
    assert.deepEqual(sorted, ["v2", "v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]);
  });

  it("lists short names, categories and the CRD's status subresource", async () => {
    const core = await call(server, "GET", "/api/v1");
    const res = core.body["resources"] as Record<string, unknown>[];
    const pods = res.find((r) => r["name"] === "pods");
    assert.deepEqual([pods?.["shortNames"], pods?.["categories"]], [["po"], ["all"]]);
    assert.deepEqual(res.find((r) => r["name"] === "namespaces")?.["verbs"], [
      "create",
      "delete",
      "get",
      "list",
      "patch",
      "update",
      "watch",
    ]);
    const names = res.map((r) => String(r["name"]));
    assert.deepEqual(names, [...names].sort());
    const mgmt = await call(server, "GET", "/apis/management.loft.sh/v1");
    const keys = (mgmt.body["resources"] as Record<string, unknown>[]).filter((r) =>
      String(r["name"]).startsWith("ownedaccesskeys"),
    );
    assert.deepEqual(
      keys.map((r) => r["name"]),
      ["ownedaccesskeys", "ownedaccesskeys/status"],
    );
    assert.deepEqual(keys[0]?.["shortNames"], ["oak"]);
    for (const group of [
      "apiextensions.k8s.io",
      "admissionregistration.k8s.io",
      "rbac.authorization.k8s.io",
      "authentication.k8s.io",
      "coordination.k8s.io",
    ]) {
      assert.equal((await call(server, "GET", `/apis/${group}`)).status, 200, group);
    }
  });

  it("publishes one v3 document per group/version with a content hash", async () => {
    const root = await call(server, "GET", "/openapi/v3");
    const paths = root.body["paths"] as Record<string, { serverRelativeURL: string }>;
    assert.match(
      paths["api/v1"]!.serverRelativeURL,
      /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/,
    );
    assert.ok(paths["apis/management.loft.sh/v1"]);
    assert.equal((await call(server, "GET", "/openapi/v3/apis/example.com/v1")).status, 404);
  });

  it("offers fieldValidation on PATCH, strategic merge only for built-ins, and CRD schemas", async () => {
    const core = (await call(server, "GET", "/openapi/v3/api/v1")).body;
    const cmPatch = (core["paths"] as Record<string, Record<string, Record<string, unknown>>>)[
      "/api/v1/namespaces/{namespace}/configmaps/{name}"
    ]!["patch"]!;
    assert.deepEqual(cmPatch["x-kubernetes-group-version-kind"], {
      group: "",
      version: "v1",
      kind: "ConfigMap",
    });
    const params = (cmPatch["parameters"] as { name: string; in: string }[]).map(
      (p) => `${p.in}:${p.name}`,
    );
    assert.ok(params.includes("query:fieldValidation"));
    const cmTypes = Object.keys(
      (cmPatch["requestBody"] as Record<string, Record<string, unknown>>)["content"]!,
    );
    assert.ok(cmTypes.includes("application/strategic-merge-patch+json"));
    const mgmt = (await call(server, "GET", "/openapi/v3/apis/management.loft.sh/v1")).body;
    const keyPaths = mgmt["paths"] as Record<string, Record<string, Record<string, unknown>>>;
    const keyPatch = keyPaths["/apis/management.loft.sh/v1/ownedaccesskeys/{name}"]!["patch"]!;
    const keyTypes = Object.keys(
      (keyPatch["requestBody"] as Record<string, Record<string, unknown>>)["content"]!,
    );
    assert.ok(!keyTypes.includes("application/strategic-merge-patch+json"));
    assert.ok(keyTypes.includes("application/merge-patch+json"));
    assert.ok(keyPaths["/apis/management.loft.sh/v1/ownedaccesskeys/{name}/status"]);
    const schemas = (mgmt["components"] as Record<string, Record<string, Record<string, unknown>>>)[
      "schemas"
    ]!;
    const oak = schemas["sh.loft.management.v1.OwnedAccessKey"]!;
    assert.deepEqual(oak["x-kubernetes-group-version-kind"], [
      { group: "management.loft.sh", version: "v1", kind: "OwnedAccessKey" },
    ]);
    assert.ok((oak["properties"] as Record<string, unknown>)["spec"]);
  });
});
