// DELETE on the emulator: finalizers keep an object (deletionTimestamp set) until the last one is
// removed, preconditions conflict, deletecollection honours selectors: kube's generic registry.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { KEYS, call, key, meta } from "./test-client.js";
import { openWatch, until, type Stream } from "./watch-client.js";

const CMS = "/api/v1/namespaces/default/configmaps";
const MERGE = "application/merge-patch+json";

describe("test apiserver delete", () => {
  let server: TestApiServer;
  const streams: Stream[] = [];
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await server.close();
  });

  it("marks an object with finalizers as deleting and deletes it once they are gone", async () => {
    const body = { ...key("k1"), metadata: { name: "k1", finalizers: ["example.com/hold"] } };
    assert.equal((await call(server, "POST", KEYS, { body })).status, 201);
    const s = await openWatch(
      server,
      `${KEYS}?watch=true&resourceVersion=${server.get("management.loft.sh/v1", "OwnedAccessKey", "k1")!.metadata["resourceVersion"] as string}`,
    );
    streams.push(s);
    const del = await call(server, "DELETE", `${KEYS}/k1`);
    assert.equal(del.status, 200);
    assert.match(String(meta(del)["deletionTimestamp"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(meta(del)["deletionGracePeriodSeconds"], 0);
    assert.equal(meta(del)["generation"], 2, "the first delete request bumps the generation");
    assert.equal((await call(server, "GET", `${KEYS}/k1`)).status, 200, "still there");
    const again = await call(server, "DELETE", `${KEYS}/k1`);
    assert.equal(
      meta(again)["resourceVersion"],
      meta(del)["resourceVersion"],
      "a second delete changes nothing",
    );
    const added = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { finalizers: ["example.com/hold", "example.com/more"] } },
    });
    assert.equal(added.status, 422);
    assert.equal(
      added.body["message"],
      'OwnedAccessKey.management.loft.sh "k1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}',
    );
    const done = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { finalizers: null } },
    });
    assert.equal(done.status, 200);
    assert.equal((await call(server, "GET", `${KEYS}/k1`)).status, 404);
    await until(() => s.events.length === 2);
    assert.deepEqual(
      s.events.map((e) => e.type),
      ["MODIFIED", "DELETED"],
    );
  });

  it("checks uid and resourceVersion preconditions with kube's messages", async () => {
    const k = await call(server, "POST", KEYS, { body: key("k1") });
    const uid = await call(server, "DELETE", `${KEYS}/k1`, {
      body: { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: "other" } },
    });
    assert.equal(uid.status, 409);
    assert.equal(
      uid.body["message"],
      `Operation cannot be fulfilled on OwnedAccessKey.management.loft.sh "k1": the UID in the precondition (other) does not match the UID in record (${String(meta(k)["uid"])}). The object might have been deleted and then recreated`,
    );
    const rv = await call(server, "DELETE", `${KEYS}/k1`, {
      body: { preconditions: { resourceVersion: "999" } },
    });
    assert.equal(rv.status, 409);
    assert.equal(
      rv.body["message"],
      `Operation cannot be fulfilled on OwnedAccessKey.management.loft.sh "k1": the ResourceVersion in the precondition (999) does not match the ResourceVersion in record (${String(meta(k)["resourceVersion"])}). The object might have been modified`,
    );
    const ok = await call(server, "DELETE", `${KEYS}/k1`, {
      body: {
        preconditions: { uid: meta(k)["uid"], resourceVersion: meta(k)["resourceVersion"] },
        propagationPolicy: "Background",
      },
    });
    assert.equal(ok.status, 200);
    assert.equal(meta(ok)["name"], "k1", "custom resources answer the deleted object");
  });

  it("answers a Success Status for types that do not return the deleted object", async () => {
    const cm = await call(server, "POST", CMS, { body: { metadata: { name: "c" } } });
    const res = await call(server, "DELETE", `${CMS}/c`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "c", kind: "configmaps", uid: meta(cm)["uid"] },
    });
  });

  it("validates DeleteOptions: an unknown propagationPolicy is 422", async () => {
    await call(server, "POST", KEYS, { body: key("k1") });
    const res = await call(server, "DELETE", `${KEYS}/k1`, {
      body: { propagationPolicy: "Sideways" },
    });
    assert.equal(res.status, 422);
    assert.equal(
      res.body["message"],
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
  });

  it("deletes a collection by label selector and answers the deleted items", async () => {
    for (const [name, team] of [
      ["a", "x"],
      ["b", "y"],
      ["c", "x"],
    ] as const) {
      await call(server, "POST", CMS, { body: { metadata: { name, labels: { team } } } });
    }
    const res = await call(server, "DELETE", `${CMS}?labelSelector=team%3Dx`);
    assert.equal(res.status, 200);
    assert.equal(res.body["kind"], "ConfigMapList");
    assert.deepEqual(
      (res.body["items"] as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ["a", "c"],
    );
    const left = await call(server, "GET", CMS);
    assert.deepEqual(
      (left.body["items"] as { metadata: { name: string } }[]).map((i) => i.metadata.name),
      ["b"],
    );
  });
});
