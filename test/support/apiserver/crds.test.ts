// CustomResourceDefinitions: served on create, Established by the controller, validated with
// apiextensions' texts, unserved (with their objects deleted) on delete; the manifests' CRD.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import { crdErrors, defaultCrd, validateCrd } from "./crds.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { validateAndPrune } from "./schema.js";
import type { KubeObject } from "./store.js";
import { call } from "./test-client.js";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

function widgetCrd(overrides: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names: { plural: "widgets", kind: "Widget", shortNames: ["wd"], categories: ["all"] },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
            },
          },
        },
      ],
      ...overrides,
    },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail("condition not reached");
}

describe("apiserver CRDs", () => {
  let server: TestApiServer;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(() => server.close());

  it("serves a CRD created through the API and sets Established and acceptedNames", async () => {
    const created = await call(server, "POST", CRDS, { body: widgetCrd() });
    assert.equal(created.status, 201);
    const list = await call(server, "GET", "/apis/example.com/v1");
    assert.equal(list.status, 200);
    const resources = list.body["resources"] as Record<string, unknown>[];
    assert.deepEqual(
      resources.find((r) => r["name"] === "widgets"),
      {
        name: "widgets",
        singularName: "widget",
        namespaced: true,
        kind: "Widget",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["wd"],
        categories: ["all"],
      },
    );
    assert.equal(resources.find((r) => r["name"] === "widgets/status")?.["kind"], "Widget");
    await until(async () => {
      const crd = await call(server, "GET", `${CRDS}/widgets.example.com`);
      const status = crd.body["status"] as Record<string, unknown> | undefined;
      return Array.isArray(status?.["conditions"]);
    });
    const crd = (await call(server, "GET", `${CRDS}/widgets.example.com`)).body;
    const status = crd["status"] as Record<string, unknown>;
    const conditions = status["conditions"] as Record<string, unknown>[];
    assert.deepEqual(
      conditions.map((c) => [c["type"], c["status"], c["reason"]]),
      [
        ["NamesAccepted", "True", "NoConflicts"],
        ["Established", "True", "InitialNamesAccepted"],
      ],
    );
    assert.deepEqual(status["acceptedNames"], {
      plural: "widgets",
      kind: "Widget",
      shortNames: ["wd"],
      categories: ["all"],
      singular: "widget",
      listKind: "WidgetList",
    });
    assert.deepEqual(status["storedVersions"], ["v1"]);
    const obj = await call(server, "POST", "/apis/example.com/v1/namespaces/default/widgets", {
      body: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } },
    });
    assert.equal(obj.status, 201);
  });

  it("stops serving a deleted CRD and deletes its objects", async () => {
    server.installCrd(widgetCrd());
    const path = "/apis/example.com/v1/namespaces/default/widgets";
    await call(server, "POST", path, { body: { metadata: { name: "w" } } });
    assert.equal((await call(server, "DELETE", `${CRDS}/widgets.example.com`)).status, 200);
    await until(async () => (await call(server, "GET", "/apis/example.com/v1")).status === 404);
    assert.equal((await call(server, "GET", `${path}/w`)).status, 404);
    // Re-created, the CRD serves an empty collection: the old objects are gone.
    server.installCrd(widgetCrd());
    await tick();
    const list = await call(server, "GET", path);
    assert.deepEqual(list.body["items"], []);
  });

  it("rejects invalid CRDs with apiextensions' texts", () => {
    const text = (crd: KubeObject): string => {
      try {
        validateCrd(crd);
      } catch (err) {
        assert.ok(err instanceof KubeError);
        assert.equal(err.code, 422);
        return err.message;
      }
      return "";
    };
    assert.equal(
      text({ ...widgetCrd(), metadata: { name: "gadgets.example.com" } }),
      'CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group',
    );
    const noSchema = widgetCrd({
      versions: [{ name: "v1", served: true, storage: true }],
    });
    assert.equal(
      text(noSchema),
      'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: spec.versions[0].schema.openAPIV3Schema: Required value',
    );
    const errors = crdErrors(defaultCrd(widgetCrd({ scope: "Global", group: "example" })));
    assert.deepEqual(
      errors.map((e) => e.field),
      ["metadata.name", "spec.group", "spec.scope"],
    );
    assert.match(
      text(widgetCrd({ scope: "Global" })),
      /spec\.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"/,
    );
  });

  it("validates custom resources of an API-created CRD through validateAndPrune", async () => {
    await call(server, "POST", CRDS, { body: widgetCrd() });
    const type = server.registry.byResource("example.com", "v1", "widgets")!;
    const bad = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
      spec: { size: "L" },
    };
    assert.throws(
      () => validateAndPrune(server.registry, type, bad),
      /spec\.size in body must be of type integer/,
    );
  });

  it("answers invalid CRDs and custom resources with 422 and prunes unknown fields, over the API", async () => {
    const bad = await call(server, "POST", CRDS, {
      body: { ...widgetCrd(), metadata: { name: "gadgets.example.com" } },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body["reason"], "Invalid");
    await call(server, "POST", CRDS, { body: widgetCrd() });
    const path = "/apis/example.com/v1/namespaces/default/widgets";
    const wrong = await call(server, "POST", path, {
      body: { metadata: { name: "w" }, spec: { size: "L" } },
    });
    assert.equal(wrong.status, 422);
    assert.equal(
      wrong.body["message"],
      'Widget.example.com "w" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
    );
    const pruned = await call(server, "POST", path, {
      body: { metadata: { name: "w" }, spec: { size: 1, extra: true }, junk: 1 },
    });
    assert.equal(pruned.status, 201);
    assert.deepEqual(pruned.body["spec"], { size: 1 });
    assert.equal(pruned.body["junk"], undefined);
  });

  it("installs the manifests' OwnedAccessKey CRD instead of the built-in type", async () => {
    const real = await startApiServer({ crds: "manifests" });
    try {
      const type = real.registry.byResource("management.loft.sh", "v1", "ownedaccesskeys");
      assert.equal(type?.crd, "ownedaccesskeys.management.loft.sh");
      assert.ok(type?.schema);
      assert.ok(type?.printerColumns?.some((c) => c.name === "TTL"));
      const crd = real.get(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "ownedaccesskeys.management.loft.sh",
      );
      const conditions = (crd?.["status"] as Record<string, unknown>)["conditions"] as {
        type: string;
        status: string;
      }[];
      assert.ok(conditions.some((c) => c.type === "Established" && c.status === "True"));
      assert.equal(
        server.registry.byResource("management.loft.sh", "v1", "ownedaccesskeys")?.crd,
        undefined,
      );
    } finally {
      await real.close();
    }
    const none = await startApiServer({ builtinOwnedAccessKeys: false });
    try {
      assert.equal(
        none.registry.byResource("management.loft.sh", "v1", "ownedaccesskeys"),
        undefined,
      );
    } finally {
      await none.close();
    }
  });
});
