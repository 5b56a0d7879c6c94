// PATCH on the emulator: the three patch formats kubectl and client-node send, and kube's answers
// for formats a type does not take and patches that cannot apply.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { KEYS, call, key, meta } from "./test-client.js";

const JSON_PATCH = "application/json-patch+json";
const MERGE = "application/merge-patch+json";
const SMP = "application/strategic-merge-patch+json";
const PODS = "/api/v1/namespaces/default/pods";

describe("test apiserver patch", () => {
  let server: TestApiServer;
  beforeEach(async () => {
    server = await startApiServer();
    assert.equal((await call(server, "POST", KEYS, { body: key("k1") })).status, 201);
  });
  afterEach(async () => {
    await server.close();
  });

  it("applies a JSON patch adding an annotation", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: JSON_PATCH,
      body: [{ op: "add", path: "/metadata/annotations", value: { "a/b": "c" } }],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(meta(res)["annotations"], { "a/b": "c" });
    assert.deepEqual(
      server.get("management.loft.sh/v1", "OwnedAccessKey", "k1")?.metadata["annotations"],
      {
        "a/b": "c",
      },
    );
  });

  it("answers 422 with kube's generic text when a JSON patch test fails", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: JSON_PATCH,
      body: [{ op: "test", path: "/spec/user", value: "bob" }],
    });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
  });

  it("answers 400 for a JSON patch that is not a list of operations", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: JSON_PATCH,
      body: { op: "add" },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.body["message"],
      "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
    );
  });

  it("applies a merge patch: maps merge, null deletes, lists are replaced", async () => {
    await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { labels: { a: "1", b: "2" } }, spec: { scopes: ["x", "y"] } },
    });
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { labels: { a: null } }, spec: { scopes: ["z"] } },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(meta(res)["labels"], { b: "2" });
    assert.deepEqual(res.body["spec"], { user: "alice", scopes: ["z"] });
  });

  it("answers 409 when a merge patch carries a stale resourceVersion", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { resourceVersion: "999" }, spec: { user: "bob" } },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body["reason"], "Conflict");
  });

  it("refuses strategic merge for custom resources with kube's 415", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, { contentType: SMP, body: { spec: {} } });
    assert.equal(res.status, 415);
    assert.equal(res.body["reason"], "UnsupportedMediaType");
    assert.equal(
      res.body["message"],
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
  });

  it("refuses unknown media types and server-side apply with 415", async () => {
    for (const contentType of ["text/plain", "application/apply-patch+yaml"]) {
      const res = await call(server, "PATCH", `${PODS}/p`, { contentType, raw: "spec: {}" });
      assert.equal(res.status, 415, contentType);
      assert.match(String(res.body["message"]), /application\/strategic-merge-patch\+json/);
    }
  });

  it("merges pod containers by name and ports by containerPort with strategic merge", async () => {
    const pod = {
      metadata: { name: "p" },
      spec: {
        containers: [
          {
            name: "a",
            image: "a:1",
            ports: [{ containerPort: 80 }],
            env: [{ name: "X", value: "1" }],
          },
          { name: "b", image: "b:1" },
        ],
      },
    };
    assert.equal((await call(server, "POST", PODS, { body: pod })).status, 201);
    const res = await call(server, "PATCH", `${PODS}/p`, {
      contentType: SMP,
      body: {
        spec: {
          containers: [
            {
              name: "a",
              image: "a:2",
              ports: [{ containerPort: 443 }],
              env: [{ name: "Y", value: "2" }],
            },
            { name: "b", $patch: "delete" },
          ],
        },
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual((res.body["spec"] as Record<string, unknown>)["containers"], [
      {
        name: "a",
        image: "a:2",
        ports: [{ containerPort: 80 }, { containerPort: 443 }],
        env: [
          { name: "X", value: "1" },
          { name: "Y", value: "2" },
        ],
      },
    ]);
  });

  it("checks the name after patching: 400 when the patch renames the object", async () => {
    const res = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { name: "k2" } },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.body["message"],
      "the name of the object (k2) does not match the name on the URL (k1)",
    );
  });

  it("rejects a changed uid as an immutable field (422) and ignores a changed creationTimestamp", async () => {
    const before = server.get("management.loft.sh/v1", "OwnedAccessKey", "k1")!;
    const uid = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { uid: "x" } },
    });
    assert.equal(uid.status, 422);
    assert.equal(
      uid.body["message"],
      'OwnedAccessKey.management.loft.sh "k1" is invalid: metadata.uid: Invalid value: "x": field is immutable',
    );
    const ts = await call(server, "PATCH", `${KEYS}/k1`, {
      contentType: MERGE,
      body: { metadata: { creationTimestamp: "2000-01-01T00:00:00Z" } },
    });
    assert.equal(ts.status, 200);
    assert.equal(meta(ts)["creationTimestamp"], before.metadata["creationTimestamp"]);
    assert.equal(
      meta(ts)["resourceVersion"],
      before.metadata["resourceVersion"],
      "no change, no write",
    );
  });

  it("answers 404 for patching a missing object", async () => {
    const res = await call(server, "PATCH", `${KEYS}/nope`, { contentType: MERGE, body: {} });
    assert.equal(res.status, 404);
    assert.equal(res.body["message"], 'ownedaccesskeys.management.loft.sh "nope" not found');
  });
});
