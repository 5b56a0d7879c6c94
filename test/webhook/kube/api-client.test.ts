// ApiClient against the test API server, loaded through its kubeconfig file as in production.

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeError } from "../../../webhook/src/api/status.js";
import { resourceIdentity } from "../../../webhook/src/api/ownedaccesskey.js";
import { ApiClient, type ApiClientOptions } from "../../../webhook/src/kube/api-client.js";
import { loadKubeConfig } from "../../../webhook/src/kube/kubeconfig.js";
import { kubeconfigYaml } from "../../support/kube/kubeconfig-file.js";
import { resourceType, startApiServer, type TestApiServer } from "../../support/apiserver/index.js";

const ID = resourceIdentity();
const ALICE = { username: "alice", groups: ["devs", "system:authenticated"], uid: "u-1" };
const DELETE_POD = {
  group: "",
  version: "v1",
  resource: "pods",
  namespace: "a",
  name: "p",
  verb: "delete",
};

async function clientFor(kubeconfig: string, options: ApiClientOptions = {}): Promise<ApiClient> {
  const kc = await loadKubeConfig({ kubeconfig, env: {} });
  assert.ok(kc);
  // These tests are about the live requests; the access key cache has its own tests.
  return new ApiClient(kc, ID, { cacheAccessKeys: false, ...options });
}

async function rejection(p: Promise<unknown>): Promise<KubeError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeError, `expected a KubeError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

/** A port nobody listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const addr = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  assert.ok(addr && typeof addr === "object");
  return addr.port;
}

describe("ApiClient", () => {
  let server: TestApiServer;
  let client: ApiClient;
  const clients: ApiClient[] = [];
  const fresh = async (options: ApiClientOptions = {}) => {
    const c = await clientFor(server.kubeconfigPath, options);
    clients.push(c);
    return c;
  };

  before(async () => {
    server = await startApiServer();
    client = await fresh();
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });
  afterEach(() => {
    server.setDown(false);
    server.setDelay(0);
    server.authorize = (a) => a.groups.includes("system:masters");
  });

  describe("getAccessKey", () => {
    it("returns the stored key", async () => {
      server.put({
        apiVersion: ID.apiVersion,
        kind: "OwnedAccessKey",
        metadata: { name: "present" },
        spec: { user: "alice" },
      });
      const key = await client.getAccessKey("present");
      assert.equal(key?.metadata?.name, "present");
      assert.equal(key?.spec?.user, "alice");
      assert.ok(key?.metadata?.uid);
    });

    it("returns null for a missing key", async () => {
      assert.equal(await client.getAccessKey("absent"), null);
      assert.equal(
        server.requests.at(-1)?.path,
        "/apis/management.loft.sh/v1/ownedaccesskeys/absent",
      );
    });

    it("returns null without asking for names no object can have", async () => {
      const before = server.requests.length;
      for (const name of ["", ".", "..", "a/b", "a%2Fb"])
        assert.equal(await client.getAccessKey(name), null);
      assert.equal(server.requests.length, before);
    });

    it("fails closed with 503 naming the check when the API server answers 503", async () => {
      server.setDown(true);
      const err = await rejection(client.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.equal(err.reason, "ServiceUnavailable");
      assert.equal(
        err.message,
        'cannot check whether ownedaccesskeys.management.loft.sh "x" exists: API server answered 503 ServiceUnavailable: the server is currently unable to handle the request',
      );
      assert.ok(!err.message.includes(server.token));
    });

    it("fails closed with 503 when its own credentials are rejected (401) or forbidden (403)", async () => {
      const badToken = await clientFor(await server.writeKubeconfig("not-a-known-token", "bad"));
      clients.push(badToken);
      const unauthorized = await rejection(badToken.getAccessKey("x"));
      assert.equal(unauthorized.code, 503);
      assert.match(unauthorized.message, /answered 401 Unauthorized/);
      assert.ok(!unauthorized.message.includes("not-a-known-token"));

      server.addToken("bob-token-123", { user: "bob", groups: ["system:authenticated"] });
      const bob = await clientFor(await server.writeKubeconfig("bob-token-123", "bob"));
      clients.push(bob);
      const forbidden = await rejection(bob.getAccessKey("x"));
      assert.equal(forbidden.code, 503);
      assert.match(forbidden.message, /answered 403 Forbidden: .*User "bob" cannot get/);
    });

    it("fails closed with 503 when the answer does not come within the timeout", async () => {
      const quick = await fresh({ timeoutMs: 100 });
      server.setDelay(400);
      const err = await rejection(quick.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.match(err.message, /exists: API server did not answer within 100 ms$/);
    });
  });

  describe("unreachable API server", () => {
    let dir: string;
    let unreachable: ApiClient;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "vgate-kube-"));
      const port = await closedPort();
      const path = join(dir, "config");
      const yaml = kubeconfigYaml({
        server: `https://127.0.0.1:${port}`,
        caPem: server.caPem,
        token: "secret-token-value",
        name: "gone",
      });
      await writeFile(path, yaml);
      unreachable = await clientFor(path, { timeoutMs: 2000 });
      clients.push(unreachable);
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it("answers 503 with the connection error and no token", async () => {
      const err = await rejection(unreachable.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.match(
        err.message,
        /^cannot check whether ownedaccesskeys\.management\.loft\.sh "x" exists: API server unreachable: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
      );
      assert.ok(!err.message.includes("secret-token-value"));
    });

    it("answers 503 for discovery and SubjectAccessReview too", async () => {
      const disc = await rejection(unreachable.resourceFor("apps/v1", "Deployment"));
      assert.equal(disc.code, 503);
      assert.match(
        disc.message,
        /^cannot map apps\/v1 kinds to resources \(discovery\): API server unreachable/,
      );
      const sar = await rejection(unreachable.subjectAccessReview(ALICE, DELETE_POD));
      assert.equal(sar.code, 503);
      assert.match(
        sar.message,
        /^cannot check whether "alice" may delete pods "p" in namespace "a": /,
      );
    });

    it("is not ready", async () => {
      assert.equal(await unreachable.ready(), false);
    });
  });

  describe("resourceFor", () => {
    it("maps core v1 Pod to namespaced pods", async () => {
      assert.deepEqual(await client.resourceFor("v1", "Pod"), {
        group: "",
        version: "v1",
        resource: "pods",
        namespaced: true,
      });
    });

    it("maps core v1 Namespace to cluster-scoped namespaces", async () => {
      const m = await client.resourceFor("v1", "Namespace");
      assert.deepEqual([m?.resource, m?.namespaced], ["namespaces", false]);
    });

    it("maps apps/v1 Deployment", async () => {
      assert.deepEqual(await client.resourceFor("apps/v1", "Deployment"), {
        group: "apps",
        version: "v1",
        resource: "deployments",
        namespaced: true,
      });
    });

    it("maps Loft's User and Team kinds to cluster-scoped resources", async () => {
      for (const [apiVersion, kind, resource] of [
        ["management.loft.sh/v1", "User", "users"],
        ["management.loft.sh/v1", "Team", "teams"],
        ["storage.loft.sh/v1", "User", "users"],
        ["storage.loft.sh/v1", "Team", "teams"],
      ] as const) {
        const m = await client.resourceFor(apiVersion, kind);
        assert.deepEqual(m, {
          group: apiVersion.split("/")[0],
          version: "v1",
          resource,
          namespaced: false,
        });
      }
    });

    it("returns null for an unknown kind, an unknown group and a malformed apiVersion", async () => {
      assert.equal(await client.resourceFor("v1", "Nothing"), null);
      assert.equal(await client.resourceFor("example.com/v1", "Widget"), null);
      assert.equal(await client.resourceFor("a/b/c", "Pod"), null);
      assert.equal(await client.resourceFor("", "Pod"), null);
      assert.equal(await client.resourceFor("../../x/v1", "Pod"), null);
    });

    it("asks discovery once per group/version while the answer is fresh", async () => {
      const c = await fresh();
      const count = () => server.requests.filter((r) => r.path === "/apis/apps/v1").length;
      const before = count();
      await Promise.all([
        c.resourceFor("apps/v1", "Deployment"),
        c.resourceFor("apps/v1", "ReplicaSet"),
      ]);
      await c.resourceFor("apps/v1", "StatefulSet");
      assert.equal(count() - before, 1);
    });

    it("finds a newly installed CRD by refreshing once on a miss", async () => {
      const c = await fresh({ discoveryMissRefreshMs: 0 });
      assert.equal(await c.resourceFor("example.io/v1", "Widget"), null);
      server.registry.add(resourceType("example.io/v1", "Widget", "widgets", true));
      try {
        const m = await c.resourceFor("example.io/v1", "Widget");
        assert.deepEqual(m, {
          group: "example.io",
          version: "v1",
          resource: "widgets",
          namespaced: true,
        });
      } finally {
        server.registry.remove("example.io", "v1", "widgets");
      }
    });

    it("does not refresh again on a miss while the answer is younger than the refresh interval", async () => {
      const c = await fresh({ discoveryMissRefreshMs: 60_000 });
      const count = () => server.requests.filter((r) => r.path === "/api/v1").length;
      const before = count();
      assert.equal(await c.resourceFor("v1", "Nothing"), null);
      assert.equal(await c.resourceFor("v1", "Nothing"), null);
      assert.equal(count() - before, 1);
    });

    it("fails closed with 503 when discovery is down", async () => {
      const c = await fresh();
      server.setDown(true);
      const err = await rejection(c.resourceFor("apps/v1", "Deployment"));
      assert.equal(err.code, 503);
      assert.match(err.message, /discovery\): API server answered 503 ServiceUnavailable/);
    });
  });

  describe("subjectAccessReview", () => {
    it("answers allowed, sending the user's name, uid, groups, extra and attributes", async () => {
      server.authorize = (a) =>
        a.user === "alice" && a.groups.includes("devs") && a.verb === "delete" && a.name === "p";
      const user = { ...ALICE, extra: { scopes: ["a", "b"] } };
      const decision = await client.subjectAccessReview(user, DELETE_POD);
      assert.equal(decision.allowed, true);
      assert.match(decision.reason ?? "", /alice/);
      const sent = server.requests.at(-1)?.body as { spec: Record<string, unknown> };
      assert.deepEqual(sent.spec, {
        user: "alice",
        groups: ["devs", "system:authenticated"],
        uid: "u-1",
        extra: { scopes: ["a", "b"] },
        resourceAttributes: {
          group: "",
          version: "v1",
          resource: "pods",
          namespace: "a",
          name: "p",
          verb: "delete",
        },
      });
    });

    it("answers denied", async () => {
      server.authorize = () => ({ allowed: false, denied: true, reason: "no way" });
      const decision = await client.subjectAccessReview(ALICE, DELETE_POD);
      assert.deepEqual(decision, { allowed: false, denied: true, reason: "no way" });
    });

    it("omits empty optional attributes", async () => {
      const attrs = {
        group: "storage.loft.sh",
        version: "v1",
        resource: "users",
        subresource: "finalizers",
        name: "bob",
        verb: "update",
      };
      await client.subjectAccessReview({ username: "alice", groups: [] }, attrs);
      const sent = server.requests.at(-1)?.body as { spec: Record<string, unknown> };
      assert.deepEqual(sent.spec["resourceAttributes"], attrs);
      assert.equal(Object.hasOwn(sent.spec, "uid"), false);
    });

    it("fails closed with 503 when the review cannot be made", async () => {
      server.setDown(true);
      const err = await rejection(client.subjectAccessReview(ALICE, DELETE_POD));
      assert.equal(err.code, 503);
      assert.match(
        err.message,
        /^cannot check whether "alice" may delete pods "p" in namespace "a": API server answered 503/,
      );
    });
  });

  describe("ready", () => {
    it("is true when discovery answers, and keeps a yes for a while", async () => {
      const c = await fresh();
      assert.equal(await c.ready(), true);
      server.setDown(true);
      assert.equal(await c.ready(), true);
    });

    it("is false when the API server answers with an error", async () => {
      const c = await fresh();
      server.setDown(true);
      assert.equal(await c.ready(), false);
      server.setDown(false);
      assert.equal(await c.ready(), true);
    });

    it("is false when the answer is too slow", async () => {
      const c = await fresh({ timeoutMs: 100 });
      server.setDelay(400);
      assert.equal(await c.ready(), false);
    });
  });
});
