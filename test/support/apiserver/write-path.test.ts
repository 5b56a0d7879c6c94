// create, the status subresource, dryRun=All and the admission seam on the emulator: what kube
// validates on create, which writes may touch .status, what a dry run answers without storing,
// and the order and inputs of admission and schema validation.

import assert from "node:assert/strict";
import type { AdmissionAttributes, AdmissionHook } from "./admission-types.js";
import { resourceType, startApiServer, type TestApiServer } from "./index.js";
import { ApiServerCore } from "./server.js";
import { ObjectStore } from "./store.js";
import { ResourceRegistry } from "./resources.js";
import { servingCert } from "./tls.js";
import { KEYS, call, key, meta } from "./test-client.js";
import { openWatch, type Stream } from "./watch-client.js";

const WIDGETS = "/apis/example.com/v1/namespaces/default/widgets";
const MERGE = "application/merge-patch+json";

describe("test apiserver create", () => {
  let server: TestApiServer;
  before(async () => {
    server = await startApiServer();
  });
  after(async () => {
    await server.close();
  });

  it("rejects a name that is not a DNS subdomain with kube's 422", async () => {
    const res = await call(server, "POST", KEYS, { body: key("Bad_Name") });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      `OwnedAccessKey.management.loft.sh "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    const details = res.body["details"] as { causes: unknown[] };
    assert.deepEqual(details.causes[0], {
      reason: "FieldValueInvalid",
      message: `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      field: "metadata.name",
    });
  });

  it("checks namespace names as RFC 1123 labels and adds the name label", async () => {
    const bad = await call(server, "POST", "/api/v1/namespaces", {
      body: { metadata: { name: "a.b" } },
    });
    assert.equal(bad.status, 422);
    assert.equal(
      bad.body["message"],
      'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
    );
    const ok = await call(server, "POST", "/api/v1/namespaces", {
      body: { metadata: { name: "team-a" } },
    });
    assert.deepEqual(meta(ok)["labels"], { "kubernetes.io/metadata.name": "team-a" });
    assert.deepEqual(ok.body["status"], { phase: "Active" });
  });

  it("requires a name or generateName", async () => {
    const res = await call(server, "POST", KEYS, { body: { metadata: {} } });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'OwnedAccessKey.management.loft.sh "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it("refuses a body that carries a resourceVersion, as etcd3 storage does", async () => {
    const res = await call(server, "POST", KEYS, {
      body: { ...key("rv"), metadata: { name: "rv", resourceVersion: "5" } },
    });
    assert.equal(res.status, 500);
    assert.equal(
      res.body["message"],
      "Internal error occurred: resourceVersion should not be set on objects to be created",
    );
  });

  it("ignores client-sent uid and creationTimestamp and sets generation 1", async () => {
    const res = await call(server, "POST", KEYS, {
      body: {
        ...key("sys"),
        metadata: { name: "sys", uid: "mine", creationTimestamp: "2000-01-01T00:00:00Z" },
      },
    });
    assert.equal(res.status, 201);
    assert.notEqual(meta(res)["uid"], "mine");
    assert.notEqual(meta(res)["creationTimestamp"], "2000-01-01T00:00:00Z");
    assert.equal(meta(res)["generation"], 1);
  });

  it("answers 405 for a POST to an object's URL", async () => {
    const res = await call(server, "POST", `${KEYS}/x`, { body: key("x") });
    assert.equal(res.status, 405);
    assert.equal(res.body["reason"], "MethodNotAllowed");
  });
});

describe("test apiserver status subresource", () => {
  let server: TestApiServer;
  beforeEach(async () => {
    server = await startApiServer();
    server.registry.add(resourceType("example.com/v1", "Widget", "widgets", true, ["status"]));
  });
  afterEach(async () => {
    await server.close();
  });

  async function widget(): Promise<Record<string, unknown>> {
    const res = await call(server, "POST", WIDGETS, {
      body: { metadata: { name: "w" }, spec: { size: 1 }, status: { ready: true } },
    });
    assert.equal(res.status, 201);
    return res.body;
  }

  it("drops .status on create and ignores .status changes on the main resource", async () => {
    const w = await widget();
    assert.equal(w["status"], undefined);
    const res = await call(server, "PATCH", `${WIDGETS}/w`, {
      contentType: MERGE,
      body: { spec: { size: 2 }, status: { ready: true } },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body["spec"], { size: 2 });
    assert.equal(res.body["status"], undefined);
  });

  it("changes only .status through /status, without bumping the generation", async () => {
    const w = await widget();
    const res = await call(server, "PUT", `${WIDGETS}/w/status`, {
      body: {
        ...w,
        spec: { size: 9 },
        metadata: { ...(w["metadata"] as object), labels: { a: "b" } },
        status: { ready: true },
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body["status"], { ready: true });
    assert.deepEqual(res.body["spec"], { size: 1 });
    assert.equal(meta(res)["labels"], undefined, "custom resources keep the old metadata");
    assert.equal(meta(res)["generation"], 1);
    const patched = await call(server, "PATCH", `${WIDGETS}/w/status`, {
      contentType: MERGE,
      body: { status: { ready: false } },
    });
    assert.deepEqual(patched.body["status"], { ready: false });
    const got = await call(server, "GET", `${WIDGETS}/w/status`);
    assert.deepEqual(got.body["status"], { ready: false });
  });

  it("answers 404 for /status on a type without it, 405 for other verbs on it", async () => {
    await call(server, "POST", KEYS, { body: key("k1") });
    assert.equal((await call(server, "GET", `${KEYS}/k1/status`)).status, 404);
    await widget();
    assert.equal((await call(server, "DELETE", `${WIDGETS}/w/status`)).status, 405);
  });
});

describe("test apiserver dryRun", () => {
  let server: TestApiServer;
  const streams: Stream[] = [];
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await server.close();
  });

  it("validates, answers as if stored, and stores nothing nor sends watch events", async () => {
    const s = await openWatch(server, `${KEYS}?watch=true&resourceVersion=0`);
    streams.push(s);
    const created = await call(server, "POST", `${KEYS}?dryRun=All`, { body: key("dry") });
    assert.equal(created.status, 201);
    assert.match(String(meta(created)["uid"]), /^[0-9a-f-]{36}$/);
    assert.equal(meta(created)["resourceVersion"], undefined);
    assert.equal(server.get("management.loft.sh/v1", "OwnedAccessKey", "dry"), undefined);
    const invalid = await call(server, "POST", `${KEYS}?dryRun=All`, { body: key("Dry") });
    assert.equal(invalid.status, 422, "a dry run still validates");

    const real = await call(server, "POST", KEYS, { body: key("k1") });
    const rv = meta(real)["resourceVersion"];
    const patched = await call(server, "PATCH", `${KEYS}/k1?dryRun=All`, {
      contentType: MERGE,
      body: { spec: { user: "bob" } },
    });
    assert.deepEqual(patched.body["spec"], { user: "bob" });
    const updated = await call(server, "PUT", `${KEYS}/k1?dryRun=All`, {
      body: { ...real.body, spec: { user: "carol" } },
    });
    assert.deepEqual(updated.body["spec"], { user: "carol" });
    const deleted = await call(server, "DELETE", `${KEYS}/k1?dryRun=All`);
    assert.equal(deleted.status, 200);
    const stored = server.get("management.loft.sh/v1", "OwnedAccessKey", "k1")!;
    assert.deepEqual(stored["spec"], { user: "alice" });
    assert.equal(stored.metadata["resourceVersion"], rv);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      s.events.map((e) => [e.type, e.object.metadata?.name]),
      [["ADDED", "k1"]],
    );
  });

  it("answers 422 on CreateOptions for any dryRun value other than All", async () => {
    const res = await call(server, "POST", `${KEYS}?dryRun=true`, { body: key("x") });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"',
    );
  });
});

describe("test apiserver admission seam", () => {
  let core: ApiServerCore;
  let server: { url: string; token: string; caPem: string };
  const seen: string[] = [];
  const attrs: AdmissionAttributes[] = [];

  before(async () => {
    const registry = new ResourceRegistry();
    registry.add(resourceType("example.com/v1", "Widget", "widgets", true, ["status"]));
    core = new ApiServerCore(registry, new ObjectStore());
    const tls = await servingCert();
    await core.listen(tls);
    core.tokens.set("t", { user: "alice", groups: ["system:masters"] });
    server = { url: `https://${core.address()}`, token: "t", caPem: tls.cert };
  });
  after(async () => {
    await core.close();
  });
  beforeEach(() => {
    seen.length = 0;
    attrs.length = 0;
  });

  const hook: AdmissionHook = {
    mutate: (a) => {
      seen.push(`mutate ${a.operation}`);
      attrs.push(a);
      const object = a.object && {
        ...a.object,
        metadata: { ...a.object.metadata, labels: { mutated: "yes" } },
      };
      return Promise.resolve({ object, warnings: ["from mutate"] });
    },
    validate: (a) => {
      seen.push(`validate ${a.operation}`);
      attrs.push(a);
      if (a.object?.["spec"] && (a.object["spec"] as { size?: number }).size === 13) {
        return Promise.reject(new Error("unlucky"));
      }
      return Promise.resolve({ warnings: ['say "hi"'] });
    },
  };

  it("runs mutate, schema validation, validate, then stores; sends warnings as headers", async () => {
    core.admission = hook;
    core.validateObject = (_t, obj, old) => {
      seen.push(`schema ${old ? "update" : "create"}`);
      return { ...obj, pruned: true };
    };
    const s = server as unknown as TestApiServer;
    const res = await call(s, "POST", `${WIDGETS}?dryRun=All`, {
      body: { metadata: { generateName: "w-" }, spec: { size: 1 } },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(seen, ["mutate CREATE", "schema create", "validate CREATE"]);
    assert.deepEqual(meta(res)["labels"], { mutated: "yes" });
    assert.equal(res.body["pruned"], true);
    assert.deepEqual(res.headers["warning"], '299 - "from mutate", 299 - "say \\"hi\\""');
    const [m, v] = attrs;
    assert.equal(m!.name, "", "mutating admission sees the object before generateName");
    assert.equal(m!.object?.metadata["uid"], undefined);
    assert.match(String(v!.object?.metadata.name), /^w-[a-z0-9]{5}$/);
    assert.equal(m!.dryRun, true);
    assert.equal(m!.user.user, "alice");
    assert.deepEqual(m!.options, {
      apiVersion: "meta.k8s.io/v1",
      kind: "CreateOptions",
      dryRun: ["All"],
    });
  });

  it("passes the stored object on update and delete, and refuses when validation throws", async () => {
    core.admission = hook;
    core.validateObject = (_t, obj) => obj;
    const s = server as unknown as TestApiServer;
    await call(s, "POST", WIDGETS, { body: { metadata: { name: "w" }, spec: { size: 1 } } });
    attrs.length = 0;
    seen.length = 0;
    const bad = await call(s, "PATCH", `${WIDGETS}/w`, {
      contentType: MERGE,
      body: { spec: { size: 13 } },
    });
    assert.equal(bad.status, 500);
    assert.deepEqual(seen, ["mutate UPDATE", "validate UPDATE"]);
    assert.deepEqual(attrs[0]!.oldObject?.["spec"] as object, { size: 1 });
    seen.length = 0;
    attrs.length = 0;
    const del = await call(s, "DELETE", `${WIDGETS}/w`);
    assert.equal(del.status, 200);
    assert.deepEqual(seen, ["mutate DELETE", "validate DELETE"]);
    assert.equal(attrs[1]!.object, null);
    assert.equal(attrs[1]!.oldObject?.metadata.name, "w");
    assert.equal(attrs[1]!.options?.["kind"], "DeleteOptions");
  });

  it("lets a schema validator refuse with a 422 before validating admission", async () => {
    core.admission = hook;
    const { newInvalid } = await import("../../../webhook/src/api/status.js");
    core.validateObject = (t, obj) => {
      throw newInvalid({ group: t.group, kind: t.kind }, obj.metadata.name, [
        { type: "Required", field: "spec.size", detail: "" },
      ]);
    };
    seen.length = 0;
    const s = server as unknown as TestApiServer;
    const res = await call(s, "POST", WIDGETS, { body: { metadata: { name: "x" } } });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'Widget.example.com "x" is invalid: spec.size: Required value',
    );
    assert.deepEqual(seen, ["mutate CREATE"]);
  });
});
