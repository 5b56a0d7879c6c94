// PUT on the emulator: kube's optimistic concurrency, name checks, server-owned metadata and
// generation, as kube-apiserver answers them.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { KEYS, call, key, meta } from "./test-client.js";

const CMS = "/api/v1/namespaces/default/configmaps";

describe("test apiserver update", () => {
  let server: TestApiServer;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await server.close();
  });

  async function created(name = "k1"): Promise<Record<string, unknown>> {
    const res = await call(server, "POST", KEYS, { body: key(name) });
    assert.equal(res.status, 201);
    return res.body;
  }

  it("replaces the object, keeps uid and creationTimestamp, and bumps resourceVersion", async () => {
    const k = await created();
    const m = k["metadata"] as Record<string, unknown>;
    const res = await call(server, "PUT", `${KEYS}/k1`, {
      body: {
        ...k,
        spec: { user: "bob" },
        metadata: { name: "k1", resourceVersion: m["resourceVersion"] },
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body["spec"], { user: "bob" });
    assert.equal(meta(res)["uid"], m["uid"]);
    assert.equal(meta(res)["creationTimestamp"], m["creationTimestamp"]);
    assert.equal(Number(meta(res)["resourceVersion"]), Number(m["resourceVersion"]) + 1);
  });

  it("answers 409 Conflict with kube's message on a stale resourceVersion", async () => {
    const k = await created();
    const stale = (k["metadata"] as Record<string, unknown>)["resourceVersion"];
    await call(server, "PUT", `${KEYS}/k1`, { body: { ...k, spec: { user: "bob" } } });
    const res = await call(server, "PUT", `${KEYS}/k1`, {
      body: { ...k, spec: { user: "carol" }, metadata: { name: "k1", resourceVersion: stale } },
    });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'Operation cannot be fulfilled on ownedaccesskeys.management.loft.sh "k1": the object has been modified; please apply your changes to the latest version and try again',
      reason: "Conflict",
      details: { name: "k1", group: "management.loft.sh", kind: "ownedaccesskeys" },
      code: 409,
    });
  });

  it("needs a resourceVersion for custom resources but not for built-in types", async () => {
    await created();
    const res = await call(server, "PUT", `${KEYS}/k1`, { body: key("k1", { user: "bob" }) });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'ownedaccesskeys.management.loft.sh "k1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    const cm = { metadata: { name: "c" }, data: { a: "1" } };
    assert.equal((await call(server, "POST", CMS, { body: cm })).status, 201);
    const put = await call(server, "PUT", `${CMS}/c`, { body: { ...cm, data: { a: "2" } } });
    assert.equal(put.status, 200, "an unconditional update of a ConfigMap");
    assert.deepEqual(put.body["data"], { a: "2" });
  });

  it("answers 404 for a missing object, except for types that create on update", async () => {
    const res = await call(server, "PUT", `${KEYS}/nope`, {
      body: { ...key("nope"), metadata: { name: "nope", resourceVersion: "1" } },
    });
    assert.equal(res.status, 404);
    assert.equal(res.body["message"], 'ownedaccesskeys.management.loft.sh "nope" not found');
    const ep = await call(server, "PUT", "/api/v1/namespaces/default/endpoints/e", {
      body: { metadata: { name: "e" }, subsets: [] },
    });
    assert.equal(ep.status, 201, "Endpoints allow create-on-update");
  });

  it("answers 400 when the body's name or namespace differs from the URL's", async () => {
    const k = await created();
    const res = await call(server, "PUT", `${KEYS}/k1`, {
      body: { ...k, metadata: { ...(k["metadata"] as object), name: "k2" } },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.body["message"],
      "the name of the object (k2) does not match the name on the URL (k1)",
    );
    await call(server, "POST", CMS, { body: { metadata: { name: "c" } } });
    const ns = await call(server, "PUT", `${CMS}/c`, {
      body: { metadata: { name: "c", namespace: "other" } },
    });
    assert.equal(ns.status, 400);
    assert.equal(
      ns.body["message"],
      "the namespace of the object (other) does not match the namespace on the request (default)",
    );
  });

  it("treats a different uid as a failed storage precondition (409)", async () => {
    const k = await created();
    const m = k["metadata"] as Record<string, unknown>;
    const res = await call(server, "PUT", `${KEYS}/k1`, {
      body: { ...k, metadata: { ...m, uid: "other" } },
    });
    assert.equal(res.status, 409);
    assert.equal(
      res.body["message"],
      `Operation cannot be fulfilled on ownedaccesskeys.management.loft.sh "k1": StorageError: invalid object, Code: 4, Key: /registry/management.loft.sh/ownedaccesskeys/k1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: ${String(m["uid"])}`,
    );
  });

  it("keeps creationTimestamp whatever the body says, and bumps generation only on spec changes", async () => {
    const k = await created();
    const m = k["metadata"] as Record<string, unknown>;
    assert.equal(m["generation"], 1);
    const labelled = await call(server, "PUT", `${KEYS}/k1`, {
      body: {
        ...k,
        metadata: {
          ...m,
          labels: { a: "b" },
          creationTimestamp: "2000-01-01T00:00:00Z",
          generation: 7,
        },
      },
    });
    assert.equal(labelled.status, 200);
    assert.equal(meta(labelled)["creationTimestamp"], m["creationTimestamp"]);
    assert.equal(meta(labelled)["generation"], 1, "metadata changes keep the generation");
    const respec = await call(server, "PUT", `${KEYS}/k1`, {
      body: { ...labelled.body, spec: { user: "bob" } },
    });
    assert.equal(meta(respec)["generation"], 2);
  });

  it("writes nothing for an update that changes nothing", async () => {
    const k = await created();
    const rv = (k["metadata"] as Record<string, unknown>)["resourceVersion"];
    const res = await call(server, "PUT", `${KEYS}/k1`, { body: k });
    assert.equal(res.status, 200);
    assert.equal(meta(res)["resourceVersion"], rv);
  });

  it("answers 500 for a resourceVersion that is not a number, as etcd3 storage does", async () => {
    const k = await created();
    const m = k["metadata"] as Record<string, unknown>;
    const res = await call(server, "PUT", `${KEYS}/k1`, {
      body: { ...k, metadata: { ...m, resourceVersion: "abc" } },
    });
    assert.equal(res.status, 500);
    assert.equal(
      res.body["message"],
      'Internal error occurred: strconv.ParseUint: parsing "abc": invalid syntax',
    );
  });

  it("validates UpdateOptions: an unknown dryRun value is 422 Invalid", async () => {
    const k = await created();
    const res = await call(server, "PUT", `${KEYS}/k1?dryRun=Some`, { body: k });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"',
    );
  });
});
