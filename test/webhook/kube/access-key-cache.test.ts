// The OwnedAccessKey informer against the test API server, through its kubeconfig as in production.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import { resourceIdentity } from "../../../webhook/src/api/ownedaccesskey.js";
import {
  AccessKeyCache,
  backoff,
  parseEvent,
  parseList,
  type ChangeType,
} from "../../../webhook/src/kube/access-key-cache.js";
import { ApiClient, type ApiClientOptions } from "../../../webhook/src/kube/api-client.js";
import { loadKubeConfig } from "../../../webhook/src/kube/kubeconfig.js";
import { KubeTransport } from "../../../webhook/src/kube/transport.js";
import {
  startApiServer,
  type StartApiServerOptions,
  type TestApiServer,
} from "../../support/apiserver/index.js";

const ID = resourceIdentity();
const KEYS = "/apis/management.loft.sh/v1/ownedaccesskeys";

const key = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: ID.apiVersion,
  kind: "OwnedAccessKey",
  metadata: { name },
  spec: { user: "alice", key: "in-memory-only", ...extra },
});

async function until(check: () => boolean, ms = 2000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
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

describe("AccessKeyCache", function () {
  this.timeout(15_000);
  let server: TestApiServer;
  const cleanup: (() => void)[] = [];

  async function setup(opts: StartApiServerOptions = {}) {
    server = await startApiServer(opts);
  }
  async function transport(): Promise<KubeTransport> {
    const kc = await loadKubeConfig({ kubeconfig: server.kubeconfigPath, env: {} });
    const t = new KubeTransport(kc!, { timeoutMs: 2000 });
    cleanup.push(() => t.close());
    return t;
  }
  async function cache(changes?: [ChangeType, string][]): Promise<AccessKeyCache> {
    const c = new AccessKeyCache(await transport(), ID, {
      backoffStartMs: 20,
      backoffCapMs: 100,
      onChange: changes && ((type, name) => changes.push([type, name])),
    });
    cleanup.push(() => c.stop());
    c.start();
    return c;
  }
  async function client(options: ApiClientOptions = {}): Promise<ApiClient> {
    const kc = await loadKubeConfig({ kubeconfig: server.kubeconfigPath, env: {} });
    const c = new ApiClient(kc!, ID, options);
    cleanup.push(() => c.close());
    return c;
  }
  const gets = (name: string) =>
    server.requests.filter((r) => r.method === "GET" && r.path === `${KEYS}/${name}`).length;
  const lists = () =>
    server.requests.filter((r) => r.path === KEYS && !r.query.includes("watch")).length;

  afterEach(async () => {
    for (const fn of cleanup.splice(0)) fn();
    await server?.close();
  });

  it("lists the existing keys and becomes synced", async () => {
    await setup();
    server.put(key("a"));
    server.put(key("b"));
    server.put({ apiVersion: ID.apiVersion, kind: "User", metadata: { name: "not-a-key" } });
    const c = await cache();
    assert.equal(c.synced(), false, "not synced before the LIST answered");
    await until(() => c.synced());
    assert.equal(c.size, 2);
    assert.equal(c.get("a")?.spec?.user, "alice");
    assert.equal(c.get("not-a-key"), undefined);
    const list = server.requests.find((r) => r.path === KEYS && r.query.startsWith("?limit="));
    assert.ok(list, "a paginated LIST was sent");
    // The list's resourceVersion is the store's global one (the User took revision 3).
    const isWatch = (r: { path: string; query: string }) =>
      r.path === KEYS && r.query.includes("watch=true");
    await until(() => server.requests.some(isWatch), 2000, "watch sent");
    const watch = server.requests.find(isWatch);
    assert.match(watch?.query ?? "", /allowWatchBookmarks=true&resourceVersion=3&/);
  });

  it("applies keys put, changed and removed after sync, and tells onChange", async () => {
    await setup();
    const changes: [ChangeType, string][] = [];
    const c = await cache(changes);
    await until(() => c.synced());
    server.put(key("late"));
    await until(() => c.get("late") !== undefined, 2000, "ADDED applied");
    server.put(key("late", { displayName: "renamed" }));
    await until(() => c.get("late")?.spec?.displayName === "renamed", 2000, "MODIFIED applied");
    assert.equal(server.remove(ID.apiVersion, "OwnedAccessKey", "late"), true);
    await until(() => c.get("late") === undefined, 2000, "DELETED applied");
    assert.deepEqual(changes, [
      ["ADDED", "late"],
      ["MODIFIED", "late"],
      ["DELETED", "late"],
    ]);
    assert.equal(c.synced(), true);
  });

  it("relists after the watch ends, picking up what changed meanwhile", async () => {
    await setup();
    server.put(key("gone"));
    const changes: [ChangeType, string][] = [];
    const c = await cache(changes);
    await until(() => c.synced());
    const before = lists();
    server.setDown(true);
    server.remove(ID.apiVersion, "OwnedAccessKey", "gone");
    server.put(key("new"));
    await until(() => !c.synced(), 2000, "unsynced after the watch broke");
    assert.match(c.lastError ?? "", /the watch ended|503/);
    assert.equal(c.get("new"), undefined, "no change arrives while the API server is down");
    server.setDown(false);
    await until(() => c.synced() && c.get("new") !== undefined, 3000, "resynced");
    assert.equal(c.get("gone"), undefined);
    assert.ok(lists() > before, "it relisted");
    assert.deepEqual(changes, [
      ["ADDED", "gone"],
      ["DELETED", "gone"],
      ["ADDED", "new"],
    ]);
  });

  it("relists when the watch's resourceVersion has expired (410)", async () => {
    await setup({ watchHistory: 2 });
    server.put(key("first"));
    const c = await cache();
    // Hold every answer so that the LIST is done but the WATCH waits; meanwhile the history moves
    // past the listed resourceVersion.
    server.setDelay(300);
    await until(() => server.requests.some((r) => r.query.includes("watch=true")), 3000, "watch");
    for (const name of ["x1", "x2", "x3", "x4"]) server.put(key(name));
    await until(() => c.lastError !== undefined, 3000, "the watch failed");
    assert.match(c.lastError ?? "", /^the watch failed: 410 Expired: too old resource version: 1 /);
    server.setDelay(0);
    await until(() => c.synced() && c.size === 5, 3000, "relisted");
    assert.ok(lists() >= 2);
  });

  it("stops: no more requests, not synced", async () => {
    await setup();
    const c = await cache();
    await until(() => c.synced());
    await until(() => server.requests.some((r) => r.query.includes("watch=true")));
    c.stop();
    assert.equal(c.synced(), false);
    const count = server.requests.length;
    server.endWatches();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(server.requests.length, count);
  });

  describe("in ApiClient", () => {
    it("answers getAccessKey from the cache once synced, without a GET", async () => {
      await setup();
      server.put(key("cached"));
      const api = await client();
      await until(() => api.accessKeysCached(), 2000, "cache synced");
      const got = await api.getAccessKey("cached");
      assert.equal(got?.metadata?.name, "cached");
      assert.equal(await api.getAccessKey("missing"), null);
      assert.equal(gets("cached") + gets("missing"), 0);
      // Callers get a copy: changing it does not change the cache.
      got!.spec!.user = "mallory";
      assert.equal((await api.getAccessKey("cached"))?.spec?.user, "alice");
      server.put(key("later"));
      let seen = null;
      const deadline = Date.now() + 2000;
      while (!seen && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
        seen = await api.getAccessKey("later");
      }
      assert.equal(seen?.metadata?.name, "later");
      assert.equal(gets("later"), 0);
    });

    it("falls back to a live GET while unsynced: 503 while the API server is down", async () => {
      await setup();
      server.setDown(true);
      const api = await client();
      const err = await rejection(api.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.match(err.message, /^cannot check whether ownedaccesskeys\.management\.loft\.sh "x"/);
      assert.equal(api.accessKeysCached(), false);
      assert.equal(gets("x"), 1);
      server.setDown(false);
      server.put(key("x"));
      await until(() => api.accessKeysCached(), 3000, "recovered by relisting");
      assert.equal((await api.getAccessKey("x"))?.metadata?.name, "x");
      assert.equal(gets("x"), 1, "the recovered cache answered");
    });

    it("fails closed with 503 once the watch breaks while the API server is down", async () => {
      await setup();
      const api = await client();
      await until(() => api.accessKeysCached());
      server.setDown(true);
      await until(() => !api.accessKeysCached(), 2000, "unsynced");
      const err = await rejection(api.getAccessKey("y"));
      assert.equal(err.code, 503);
    });

    it("asks the API server every time with cacheAccessKeys: false", async () => {
      await setup();
      const api = await client({ cacheAccessKeys: false });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await api.getAccessKey("z"), null);
      assert.equal(await api.getAccessKey("z"), null);
      assert.equal(gets("z"), 2);
      assert.equal(lists(), 0);
      assert.equal(api.accessKeysCached(), false);
    });

    it("close() stops the cache", async () => {
      await setup();
      const api = await client();
      await until(() => api.accessKeysCached());
      api.close();
      assert.equal(api.accessKeysCached(), false);
    });
  });
});

describe("access key cache parsing", () => {
  it("parses a list page and refuses answers that are not one", () => {
    const page = parseList({
      status: 200,
      body: {
        metadata: { resourceVersion: "7", continue: "c1" },
        items: [{ metadata: { name: "a" } }, { metadata: {} }, null, "x"],
      },
    });
    assert.ok(typeof page === "object");
    assert.deepEqual(
      page.items.map((i) => i.metadata?.name),
      ["a"],
    );
    assert.equal(page.resourceVersion, "7");
    assert.equal(page.continue, "c1");
    assert.match(String(parseList({ status: 403, body: "no" })), /^cannot list: .*403/);
    assert.match(String(parseList({ status: 200, body: { items: {} } })), /not a list/);
    assert.match(String(parseList({ status: 200, body: { items: [] } })), /no metadata/);
  });

  it("parses watch events and never quotes a malformed line", () => {
    assert.deepEqual(parseEvent('{"type":"ADDED","object":{"metadata":{"name":"a"}}}'), {
      type: "ADDED",
      object: { metadata: { name: "a" } },
    });
    const secret = "s3cr3t-key-value";
    for (const line of [`{"type":"ADDED","object":"${secret}"`, `["${secret}"]`]) {
      const why = parseEvent(line);
      assert.equal(typeof why, "string");
      assert.ok(!String(why).includes(secret));
    }
    assert.match(String(parseEvent('{"type":"NOPE","object":{}}')), /unknown watch event type/);
    assert.match(String(parseEvent('{"type":"ADDED","object":null}')), /no object/);
    assert.match(String(parseEvent('{"__proto__":{"type":"ADDED"},"object":{}}')), /unknown/);
  });

  it("backs off exponentially from the start value, with jitter, up to the cap", () => {
    for (let i = 0; i < 50; i++) {
      const first = backoff(0, 200, 10_000);
      assert.ok(first >= 200 && first <= 240, String(first));
      const third = backoff(2, 200, 10_000);
      assert.ok(third >= 800 && third <= 960, String(third));
      assert.equal(backoff(40, 200, 10_000), 10_000);
    }
  });
});
