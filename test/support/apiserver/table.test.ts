// Server-side printing: Tables for `kubectl get`, with CRD printer columns and kube's ages.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { humanDuration, simpleJsonPath, wantsTable } from "./table.js";
import { call } from "./test-client.js";

const TABLE =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

describe("apiserver Table output", () => {
  let server: TestApiServer;
  before(async () => {
    server = await startApiServer({ crds: "manifests" });
  });
  after(() => server.close());

  it("recognises kubectl's Accept header", () => {
    assert.equal(wantsTable(TABLE), true);
    assert.equal(wantsTable("application/json"), false);
    assert.equal(wantsTable(undefined), false);
  });

  it("prints ages as apimachinery's HumanDuration", () => {
    const s = 1000;
    const cases: [number, string][] = [
      [-5 * s, "<invalid>"],
      [-1 * s, "0s"],
      [45 * s, "45s"],
      [119 * s, "119s"],
      [200 * s, "3m20s"],
      [25 * 60 * s, "25m"],
      [(5 * 60 + 3) * 60 * s, "5h3m"],
      [30 * 3600 * s, "30h"],
      [(3 * 24 + 4) * 3600 * s, "3d4h"],
      [100 * 24 * 3600 * s, "100d"],
      [(2 * 365 + 10) * 24 * 3600 * s, "2y10d"],
    ];
    for (const [ms, text] of cases) assert.equal(humanDuration(ms), text, text);
  });

  it("reads CRD column JSONPaths", () => {
    const obj = { spec: { a: [{ b: 1 }], "x.y": "z" } };
    assert.equal(simpleJsonPath(obj, ".spec.a[0].b"), 1);
    assert.equal(simpleJsonPath(obj, ".spec['x.y']"), "z");
    assert.equal(simpleJsonPath(obj, ".spec.missing.deeper"), undefined);
  });

  it("answers a list of custom resources with the CRD's printer columns", async () => {
    server.put({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "k1" },
      spec: { user: "alice", type: "User", ttl: 60, key: "secret" },
    });
    const res = await call(server, "GET", "/apis/management.loft.sh/v1/ownedaccesskeys", {
      accept: TABLE,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body["kind"], "Table");
    assert.equal(res.body["apiVersion"], "meta.k8s.io/v1");
    const columns = res.body["columnDefinitions"] as {
      name: string;
      type: string;
      priority: number;
    }[];
    assert.deepEqual(columns[0], {
      name: "Name",
      type: "string",
      format: "name",
      description: columns[0] && (columns[0] as unknown as Record<string, string>)["description"],
      priority: 0,
    });
    const names = columns.map((c) => c.name);
    assert.ok(names.includes("TTL") && names.includes("Age") && !names.includes("Key"));
    const rows = res.body["rows"] as { cells: unknown[]; object: Record<string, unknown> }[];
    const cells = rows[0]!.cells;
    assert.equal(cells[names.indexOf("Name")], "k1");
    assert.equal(cells[names.indexOf("User")], "alice");
    assert.equal(cells[names.indexOf("TTL")], 60);
    assert.match(String(cells[names.indexOf("Age")]), /^\d+s$/);
    assert.equal(rows[0]!.object["kind"], "PartialObjectMetadata");
    assert.equal((rows[0]!.object["metadata"] as Record<string, unknown>)["name"], "k1");
  });

  it("uses kube's printers for built-ins and the default convertor elsewhere", async () => {
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "default" },
      data: { a: "1", b: "2" },
    });
    const cm = await call(server, "GET", "/api/v1/namespaces/default/configmaps/c", {
      accept: TABLE,
    });
    assert.deepEqual(
      (cm.body["columnDefinitions"] as { name: string }[]).map((c) => c.name),
      ["Name", "Data", "Age"],
    );
    assert.deepEqual((cm.body["rows"] as { cells: unknown[] }[])[0]!.cells.slice(0, 2), ["c", 2]);
    const roles = await call(server, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      accept: TABLE,
    });
    assert.deepEqual(
      (roles.body["columnDefinitions"] as { name: string }[]).map((c) => c.name),
      ["Name", "Created At"],
    );
  });

  it("leaves errors and plain JSON requests alone", async () => {
    const missing = await call(server, "GET", "/api/v1/namespaces/default/configmaps/none", {
      accept: TABLE,
    });
    assert.equal(missing.body["kind"], "Status");
    const plain = await call(server, "GET", "/api/v1/namespaces/default/configmaps");
    assert.equal(plain.body["kind"], "ConfigMapList");
  });
});
