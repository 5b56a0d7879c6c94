// The test API server itself: it must answer as kube-apiserver does, or tests built on it lie.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { startApiServer, type TestApiServer } from "./index.js";
import { call } from "./test-client.js";

const KEYS = "/apis/management.loft.sh/v1/ownedaccesskeys";

describe("test apiserver", () => {
  let server: TestApiServer;
  before(async () => {
    server = await startApiServer();
  });
  after(async () => {
    await server.close();
  });
  afterEach(() => {
    server.setDown(false);
    server.authorize = (a) => a.groups.includes("system:masters");
    server.remove("management.loft.sh/v1", "OwnedAccessKey", "k1");
  });

  it("serves HTTPS on 127.0.0.1 with a certificate the CA verifies", async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(server, "GET", "/version");
    assert.equal(res.status, 200);
    assert.equal(res.body["major"], "1");
  });

  it("writes a kubeconfig with the inline CA and the bearer token", async () => {
    const text = await readFile(server.kubeconfigPath, "utf8");
    assert.ok(text.includes(`server: ${server.url}`));
    assert.ok(text.includes(Buffer.from(server.caPem).toString("base64")));
    assert.ok(text.includes(`token: ${server.token}`));
  });

  it("answers 401 Unauthorized without a token or with an unknown one", async () => {
    for (const token of [null, "wrong"]) {
      const res = await call(server, "GET", "/api", { token });
      assert.equal(res.status, 401);
      assert.equal(res.body["reason"], "Unauthorized");
      assert.equal(res.body["kind"], "Status");
    }
  });

  it("lists groups, including management.<domain>, authorization and apps", async () => {
    const res = await call(server, "GET", "/apis");
    const groups = (res.body["groups"] as { name: string }[]).map((g) => g.name);
    for (const g of ["apps", "authorization.k8s.io", "management.loft.sh", "storage.loft.sh"]) {
      assert.ok(groups.includes(g), g);
    }
    assert.ok(!groups.includes(""));
  });

  it("lists resources with correct scope and subresources", async () => {
    const core = await call(server, "GET", "/api/v1");
    const res = core.body["resources"] as { name: string; namespaced: boolean; kind: string }[];
    assert.equal(res.find((r) => r.name === "pods")?.namespaced, true);
    assert.equal(res.find((r) => r.name === "namespaces")?.namespaced, false);
    assert.equal(res.find((r) => r.name === "pods/status")?.kind, "Pod");
    const mgmt = await call(server, "GET", "/apis/management.loft.sh/v1");
    const keys = (mgmt.body["resources"] as typeof res).find((r) => r.name === "ownedaccesskeys");
    assert.deepEqual([keys?.kind, keys?.namespaced], ["OwnedAccessKey", false]);
  });

  it("answers 404 for a group/version it does not serve", async () => {
    const res = await call(server, "GET", "/apis/example.com/v1");
    assert.equal(res.status, 404);
    assert.equal(res.body["message"], "the server could not find the requested resource");
  });

  it("creates an OwnedAccessKey with uid, resourceVersion and creationTimestamp", async () => {
    const res = await call(server, "POST", KEYS, {
      body: {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: "k1" },
      },
    });
    assert.equal(res.status, 201);
    const meta = res.body["metadata"] as Record<string, unknown>;
    assert.equal(meta["name"], "k1");
    assert.match(String(meta["uid"]), /^[0-9a-f-]{36}$/);
    assert.match(String(meta["resourceVersion"]), /^\d+$/);
    assert.match(String(meta["creationTimestamp"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const got = await call(server, "GET", `${KEYS}/k1`);
    assert.equal(got.status, 200);
    assert.equal((got.body["metadata"] as Record<string, unknown>)["uid"], meta["uid"]);
  });

  it("answers 409 AlreadyExists with kube's message for an existing name", async () => {
    server.put({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "k1" },
    });
    const res = await call(server, "POST", KEYS, { body: { metadata: { name: "k1" } } });
    assert.equal(res.status, 409);
    assert.equal(res.body["reason"], "AlreadyExists");
    assert.equal(res.body["message"], 'ownedaccesskeys.management.loft.sh "k1" already exists');
  });

  it("generates a name from generateName", async () => {
    const res = await call(server, "POST", KEYS, { body: { metadata: { generateName: "gen-" } } });
    const name = String((res.body["metadata"] as Record<string, unknown>)["name"]);
    assert.match(name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.ok(server.remove("management.loft.sh/v1", "ownedaccesskeys", name));
  });

  it("answers 404 NotFound with kube's message for a missing object, and deletes", async () => {
    const missing = await call(server, "GET", `${KEYS}/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body["message"], 'ownedaccesskeys.management.loft.sh "nope" not found');
    server.put({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "k1" },
    });
    assert.equal((await call(server, "DELETE", `${KEYS}/k1`)).status, 200);
    assert.equal((await call(server, "GET", `${KEYS}/k1`)).status, 404);
  });

  it("lists and gets namespaced objects only within their namespace", async () => {
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "a" } });
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "b" } });
    const inA = await call(server, "GET", "/api/v1/namespaces/a/configmaps");
    assert.equal((inA.body["items"] as unknown[]).length, 1);
    assert.equal(inA.body["kind"], "ConfigMapList");
    const all = await call(server, "GET", "/api/v1/configmaps");
    assert.equal((all.body["items"] as unknown[]).length, 2);
    assert.equal((await call(server, "GET", "/api/v1/namespaces/a/configmaps/c")).status, 200);
    assert.equal((await call(server, "GET", "/api/v1/namespaces/c/configmaps/c")).status, 404);
  });

  it("answers SubjectAccessReviews through the authorizer hook", async () => {
    const review = (user: string, groups: string[]) => ({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: { user, groups, resourceAttributes: { verb: "delete", group: "", resource: "pods" } },
    });
    const admin = await call(server, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: review("root", ["system:masters"]),
    });
    assert.equal(admin.status, 201);
    assert.equal((admin.body["status"] as Record<string, unknown>)["allowed"], true);
    const bob = await call(server, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: review("bob", []),
    });
    assert.equal((bob.body["status"] as Record<string, unknown>)["allowed"], false);
    server.authorize = (a) => a.user === "bob" && a.verb === "delete";
    const bob2 = await call(server, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: review("bob", []),
    });
    assert.equal((bob2.body["status"] as Record<string, unknown>)["allowed"], true);
  });

  it("rejects a SubjectAccessReview without attributes as 422 Invalid", async () => {
    const res = await call(server, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: { spec: { user: "bob" } },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body["reason"], "Invalid");
  });

  it("forbids users outside system:masters unless the hook allows them", async () => {
    server.addToken("bob-token", { user: "bob", groups: ["system:authenticated"] });
    const denied = await call(server, "GET", `${KEYS}/x`, { token: "bob-token" });
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body["message"],
      'ownedaccesskeys.management.loft.sh "x" is forbidden: User "bob" cannot get resource "ownedaccesskeys" in API group "management.loft.sh" at the cluster scope',
    );
    server.authorize = (a) => a.user === "bob" && a.verb === "get";
    assert.equal((await call(server, "GET", `${KEYS}/x`, { token: "bob-token" })).status, 404);
  });

  it("answers 503 to everything while down, and records requests", async () => {
    server.setDown(true);
    const before = server.requests.length;
    const res = await call(server, "GET", "/api");
    assert.equal(res.status, 503);
    assert.equal(res.body["reason"], "ServiceUnavailable");
    server.setDown(false);
    assert.equal((await call(server, "GET", "/api")).status, 200);
    assert.deepEqual(
      server.requests.slice(before).map((r) => [r.method, r.path]),
      [
        ["GET", "/api"],
        ["GET", "/api"],
      ],
    );
  });

  it("serves the groups of a configured group domain", async () => {
    const other = await startApiServer({ groupDomain: "example.org" });
    try {
      assert.equal((await call(other, "GET", "/apis/management.example.org/v1")).status, 200);
      assert.equal((await call(other, "GET", "/apis/management.loft.sh/v1")).status, 404);
    } finally {
      await other.close();
    }
  });

  it("keeps only the newest maxRecordedRequests records", async () => {
    const small = await startApiServer({ maxRecordedRequests: 2 });
    try {
      for (const path of ["/version", "/api", "/apis"]) await call(small, "GET", path);
      assert.deepEqual(
        small.requests.map((r) => r.path),
        ["/api", "/apis"],
      );
    } finally {
      await small.close();
    }
  });
});
