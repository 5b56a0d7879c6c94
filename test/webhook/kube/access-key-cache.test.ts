// The OwnedAccessKey informer against a real kube-apiserver, through a kubeconfig as in production.
// The keys live under a group domain of this file's own, so the cache sees exactly the keys these
// tests make and no webhook is in the way. The cache runs as a service account allowed only to
// read keys, through a fault proxy that takes the API server down, ends watches, replays a 410 and
// counts what the cache asked.

import assert from "node:assert/strict";
import { PackedStore } from "../../../webhook/src/kube/controller/packed-store.js";
import { randomBytes } from "node:crypto";
import { KubeError } from "../../../webhook/src/shared/status.js";
import { resourceIdentity } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  AccessKeyCache,
  backoff,
  parseEvent,
  parseList,
  type CacheTransport,
  type ChangeType,
  keptFields,
  packedKey,
} from "../../../webhook/src/kube/access-key-cache.js";
import { ApiClient, type ApiClientOptions } from "../../../webhook/src/kube/api-client.js";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport, type KubeResponse } from "../../../webhook/src/shared/transport.js";
import { installAccessKeyCrd, sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import type { FaultProxy, RecordedRequest } from "../../support/kube/fault-proxy.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { serviceAccountWith, type TestServiceAccount } from "../../support/kube/service-account.js";
import { until } from "../../support/until.js";

const DOMAIN = "access-key-cache-test.example.com";
const ID = resourceIdentity(DOMAIN);
const KEYS = `/apis/${ID.group}/${ID.version}/${ID.resource}`;

const key = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: ID.apiVersion,
  kind: "OwnedAccessKey",
  metadata: { name },
  spec: { user: "alice", key: "in-memory-only", ...extra },
});

const isWatch = (r: RecordedRequest) => r.path === KEYS && /[?&]watch=true(&|$)/.test(r.query);
const isList = (r: RecordedRequest) => r.path === KEYS && !/[?&]watch=/.test(r.query);

async function rejection(p: Promise<unknown>): Promise<KubeError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeError, `expected a KubeError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

/** The cache's own transport, noting the resourceVersion of every LIST page it got. */
class ListVersions implements CacheTransport {
  readonly versions: string[] = [];
  constructor(private readonly inner: KubeTransport) {}
  async request(method: string, path: string): Promise<KubeResponse> {
    const res = await this.inner.request(method, path);
    const page = parseList(res);
    if (typeof page === "object") this.versions.push(page.resourceVersion);
    return res;
  }
  stream(path: string, onLine: (line: string) => void) {
    return this.inner.stream(path, onLine);
  }
  redact(text: string): string {
    return this.inner.redact(text);
  }
}

(HAVE_KUBE ? describe : describe.skip)(`AccessKeyCache${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let account: TestServiceAccount;
  let proxy: FaultProxy;
  let kubeconfig: string;
  const cleanup: (() => unknown)[] = [];

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    await installAccessKeyCrd(cluster.admin, DOMAIN);
    // What vgate's own role allows on keys: read them, nothing else.
    account = await serviceAccountWith(cluster.plane, "access-key-cache", [
      { apiGroups: [ID.group], resources: [ID.resource], verbs: ["get", "list", "watch"] },
    ]);
  });
  beforeEach(async () => {
    proxy = await cluster.plane.faultProxy();
    kubeconfig = await account.kubeconfig(proxy.url);
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
    await proxy.close();
    const list = await cluster.admin.request<{ items: KubeObject[] }>("GET", KEYS);
    for (const item of list.body.items ?? []) await cluster.admin.delete(item, { force: true });
  });
  after(async () => {
    await account?.remove();
    await cluster?.admin.delete({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${ID.resource}.${ID.group}` },
    });
  });

  const put = (obj: KubeObject) => cluster.admin.apply(obj);
  const remove = (name: string) => cluster.admin.delete(key(name));

  async function transport(): Promise<KubeTransport> {
    const kc = await loadKubeConfig({ kubeconfig, env: {} });
    const t = new KubeTransport(kc!, { timeoutMs: 10_000 });
    cleanup.push(() => t.close());
    return t;
  }
  async function cache(
    opts: { changes?: [ChangeType, string][]; errors?: string[]; via?: CacheTransport } = {},
  ): Promise<AccessKeyCache> {
    const { changes, errors } = opts;
    const c = new AccessKeyCache(opts.via ?? (await transport()), ID, {
      backoffStartMs: 20,
      backoffCapMs: 100,
      onChange: changes && ((type, name) => changes.push([type, name])),
      onError: errors && ((message) => errors.push(message)),
    });
    cleanup.push(() => c.stop());
    c.start();
    return c;
  }
  async function client(options: ApiClientOptions = {}): Promise<ApiClient> {
    const kc = await loadKubeConfig({ kubeconfig, env: {} });
    const c = new ApiClient(kc!, ID, { timeoutMs: 10_000, ...options });
    cleanup.push(() => c.close());
    return c;
  }
  const gets = (name: string) =>
    proxy.requests.filter((r) => r.method === "GET" && r.path === `${KEYS}/${name}`).length;
  const lists = () => proxy.requests.filter(isList).length;

  it("lists the existing keys, becomes synced and watches from the list's resourceVersion", async () => {
    await put(key("a"));
    const newest = await put(key("b"));
    // A write elsewhere in the cluster after the newest key.
    const elsewhere = await cluster.admin.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `access-key-cache-${randomBytes(3).toString("hex")}`,
        namespace: "default",
      },
    });
    cleanup.push(() => cluster.admin.delete(elsewhere));
    const via = new ListVersions(await transport());
    const c = await cache({ via });
    assert.equal(c.synced(), false, "not synced before the LIST answered");
    await until(() => c.synced(), "synced");
    assert.equal(c.size, 2);
    assert.equal(c.get("a")?.spec?.user, "alice");
    assert.equal(c.get("b")?.metadata?.name, "b");
    const list = proxy.requests.find((r) => isList(r) && r.query.startsWith("?limit=500"));
    assert.ok(list, "a paginated LIST was sent");
    await until(() => proxy.requests.some(isWatch), "watch sent");
    // Real resourceVersions are etcd revisions: the watch resumes exactly where the LIST was.
    const watch = new URLSearchParams(proxy.requests.find(isWatch)!.query);
    assert.equal(via.versions.length, 1);
    assert.equal(watch.get("resourceVersion"), via.versions[0]);
    // ...and a LIST's resourceVersion is the cluster's revision when it was read, past the newest
    // key's and the later ConfigMap's (revisions are opaque to clients; vgate never compares them).
    const revision = (o: KubeObject) => BigInt(String(o.metadata["resourceVersion"]));
    assert.ok(BigInt(via.versions[0]!) >= revision(elsewhere));
    assert.ok(revision(elsewhere) > revision(newest));
    assert.equal(watch.get("allowWatchBookmarks"), "true");
    assert.match(watch.get("timeoutSeconds") ?? "", /^\d+$/);
  });

  it("reads every page of a list larger than its page size", async () => {
    for (const name of ["p1", "p2", "p3", "p4", "p5"]) await put(key(name));
    const c = new AccessKeyCache(await transport(), ID, { pageSize: 2 });
    cleanup.push(() => c.stop());
    c.start();
    await until(() => c.synced(), "synced");
    assert.equal(c.size, 5);
    const pages = proxy.requests.filter(isList);
    assert.equal(pages.length, 3, "5 keys in pages of 2");
    assert.ok(pages.slice(1).every((r) => /[?&]continue=/.test(r.query)));
  });

  it("applies keys put, changed and removed after sync, and tells onChange", async () => {
    const changes: [ChangeType, string][] = [];
    const c = await cache({ changes });
    await until(() => c.synced(), "synced");
    await put(key("late"));
    await until(() => c.get("late") !== undefined, "ADDED applied");
    await put(key("late", { disabled: true }));
    await until(() => c.get("late")?.spec?.disabled === true, "MODIFIED applied");
    assert.equal(await remove("late"), true);
    await until(() => c.get("late") === undefined, "DELETED applied");
    assert.deepEqual(changes, [
      ["ADDED", "late"],
      ["MODIFIED", "late"],
      ["DELETED", "late"],
    ]);
    assert.equal(c.synced(), true);
    assert.equal(lists(), 1, "one LIST; everything else came through the watch");
  });

  it("relists after the API server goes down, picking up what changed meanwhile", async () => {
    await put(key("gone"));
    const changes: [ChangeType, string][] = [];
    const errors: string[] = [];
    const c = await cache({ changes, errors });
    await until(() => c.synced(), "synced");
    await until(() => proxy.openWatches().length === 1, "watching");
    const before = lists();
    // A load balancer in front of a stopped API server: open watches break, requests get 503.
    proxy.setDown(true);
    await remove("gone");
    await put(key("new"));
    await until(() => !c.synced(), "unsynced after the watch broke");
    await until(() => /503/.test(c.lastError ?? ""), "relists answered 503");
    assert.match(c.lastError ?? "", /^cannot list: API server answered 503 ServiceUnavailable/);
    // First the watch broke (the proxy cut it), then relists failed.
    assert.match(errors[0] ?? "", /^(API server unreachable: .+|the watch ended)$/);
    assert.equal(c.get("new"), undefined, "no change arrives while the API server is down");
    proxy.setDown(false);
    await until(() => c.synced() && c.get("new") !== undefined, "resynced");
    assert.equal(c.get("gone"), undefined);
    assert.ok(lists() > before + 1, "it relisted after failed relists");
    assert.deepEqual(changes, [
      ["ADDED", "gone"],
      ["DELETED", "gone"],
      ["ADDED", "new"],
    ]);
  });

  it("relists and watches again when the server ends the watch", async () => {
    const c = await cache();
    await until(() => proxy.openWatches().length === 1, "watching");
    assert.equal(proxy.endWatches(), 1);
    await until(() => proxy.requests.filter(isWatch).length === 2, "watching again");
    assert.equal(lists(), 2);
    await until(() => c.synced(), "synced again");
    await put(key("after"));
    await until(() => c.get("after") !== undefined, "the new watch delivers");
  });

  it("watches on from its resourceVersion when the watch's timeoutSeconds runs out: no relist", async () => {
    // kube-apiserver ends a watch cleanly after its timeoutSeconds (client-go asks 5-10 minutes).
    await put(key("before"));
    const errors: string[] = [];
    const c = new AccessKeyCache(await transport(), ID, {
      backoffStartMs: 20,
      watchTimeoutSeconds: 1,
      onError: (message) => errors.push(message),
    });
    cleanup.push(() => c.stop());
    c.start();
    await until(() => c.synced(), "synced");
    await until(() => proxy.requests.filter(isWatch).length >= 3, "watched twice more");
    const [first, second] = proxy.requests.filter(isWatch).map((r) => new URLSearchParams(r.query));
    assert.equal(first!.get("timeoutSeconds"), "1");
    // The second watch resumes where the first left off (its last event or bookmark, or the LIST).
    assert.ok(Number(second!.get("resourceVersion")) >= Number(first!.get("resourceVersion")));
    await put(key("between"));
    await until(() => c.get("between") !== undefined, "a key written meanwhile arrives");
    assert.equal(lists(), 1, "no relist");
    assert.deepEqual(errors, []);
    assert.equal(c.synced(), true);
  });

  it("relists when a watch ends cleanly long before its timeoutSeconds", async () => {
    // The first watch is answered 200 and ends at once, as a closing API server or a proxy ends it.
    proxy.inject(isWatch, { status: 200, body: "" });
    const errors: string[] = [];
    const c = await cache({ errors });
    await until(() => errors.length > 0, "the watch failed");
    assert.equal(errors[0], "the watch ended");
    await until(() => lists() >= 2 && c.synced(), "relisted");
  });

  it("relists when the watch's resourceVersion has expired (410)", async () => {
    await put(key("first"));
    // kube-apiserver answers a watch from a resourceVersion older than its history (after etcd
    // compaction) with 200 and one ERROR event carrying 410 Expired. Ask it for that answer, then
    // replay it to the cache's first watch: compaction cannot be made to happen on demand.
    const expired = await cluster.admin.request("GET", `${KEYS}?watch=true&resourceVersion=1`);
    assert.equal(expired.status, 200);
    assert.equal(expired.body["type"], "ERROR");
    proxy.inject(isWatch, { status: 200, body: expired.body });
    const errors: string[] = [];
    const c = await cache({ errors });
    await until(() => errors.length > 0, "the watch failed");
    assert.match(
      errors[0] ?? "",
      /^the watch failed: 410 Expired: too old resource version: 1 \(\d+\)$/,
    );
    for (const name of ["x1", "x2", "x3", "x4"]) await put(key(name));
    await until(() => c.synced() && c.size === 5, "relisted");
    assert.ok(lists() >= 2);
    await until(() => proxy.openWatches().length === 1, "watching again");
    assert.equal(proxy.requests.filter(isWatch).length, 2, "the replayed 410 was the only failure");
  });

  it("stops: no more requests, not synced", async () => {
    const c = await cache();
    await until(() => c.synced(), "synced");
    await until(() => proxy.openWatches().length === 1, "watching");
    c.stop();
    assert.equal(c.synced(), false);
    await until(() => proxy.openWatches().length === 0, "the watch closed");
    const count = proxy.requests.length;
    proxy.endWatches();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(proxy.requests.length, count);
  });

  describe("in ApiClient", () => {
    it("answers getAccessKey from the cache once synced, without a GET", async () => {
      await put(key("cached"));
      const api = await client();
      await until(() => api.accessKeysCached(), "cache synced");
      const got = await api.getAccessKey("cached");
      assert.equal(got?.metadata?.name, "cached");
      assert.equal(await api.getAccessKey("missing"), null);
      assert.equal(gets("cached") + gets("missing"), 0);
      // Callers get a copy: changing it does not change the cache.
      got!.spec!.user = "mallory";
      assert.equal((await api.getAccessKey("cached"))?.spec?.user, "alice");
      await put(key("later"));
      await until(async () => (await api.getAccessKey("later")) !== null, "later seen");
      assert.equal(gets("later"), 0);
    });

    it("falls back to a live GET while unsynced: 503 while the API server is down", async () => {
      proxy.setDown(true);
      const api = await client();
      const err = await rejection(api.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.equal(
        err.message,
        `cannot check whether ${ID.resource}.${ID.group} "x" exists: API server answered 503 ServiceUnavailable: the server is currently unable to handle the request`,
      );
      assert.equal(api.accessKeysCached(), false);
      assert.equal(gets("x"), 1);
      proxy.setDown(false);
      await put(key("x"));
      await until(() => api.accessKeysCached(), "recovered by relisting");
      assert.equal((await api.getAccessKey("x"))?.metadata?.name, "x");
      assert.equal(gets("x"), 1, "the recovered cache answered");
    });

    it("fails closed with 503 once the watch breaks while the API server is down", async () => {
      const api = await client();
      await until(() => api.accessKeysCached(), "cache synced");
      proxy.setDown(true);
      await until(() => !api.accessKeysCached(), "unsynced");
      const err = await rejection(api.getAccessKey("y"));
      assert.equal(err.code, 503);
    });

    it("asks the API server every time with cacheAccessKeys: false", async () => {
      const name = `z-${randomBytes(3).toString("hex")}`;
      const api = await client({ cacheAccessKeys: false });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await api.getAccessKey(name), null);
      await put(key(name));
      assert.equal((await api.getAccessKey(name))?.metadata?.name, name);
      assert.equal(gets(name), 2);
      assert.equal(lists(), 0);
      assert.equal(api.accessKeysCached(), false);
    });

    it("close() stops the cache", async () => {
      const api = await client();
      await until(() => api.accessKeysCached(), "cache synced");
      api.close();
      assert.equal(api.accessKeysCached(), false);
      await until(() => proxy.openWatches().length === 0, "the watch closed");
    });
  });
});

describe("access key cache parsing", () => {
  it("keeps what the readers use: no managedFields, annotations, labels or OIDC tokens", () => {
    const stored = {
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: {
        name: "k",
        uid: "u",
        resourceVersion: "7",
        generation: 2,
        creationTimestamp: "2026-01-01T00:00:00Z",
        deletionTimestamp: "2026-01-03T00:00:00Z",
        labels: { a: "b" },
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": '{"spec":{"key":"secret"}}',
          keep: "me",
        },
        finalizers: ["f"],
        managedFields: [{ manager: "kubectl", operation: "Apply", fieldsType: "FieldsV1" }],
      },
      spec: {
        key: "secret",
        user: "alice",
        team: "t",
        subject: "s",
        groups: ["g"],
        disabled: false,
        ttl: 60,
        ttlAfterLastActivity: true,
        scope: { roles: [{ role: "vcluster" }] },
        rules: [{ verbs: ["get"] }],
        allowLoftCli: true,
        displayName: "ci",
        description: "d",
        oidcLogin: { idToken: "id-token", refreshToken: "refresh-token" },
        identity: { userId: "x" },
      },
      status: { lastActivity: "2026-01-02T00:00:00Z", weakKey: true, other: 1 },
    };
    const kept = keptFields(structuredClone(stored));
    assert.deepEqual(kept, {
      metadata: {
        name: "k",
        uid: "u",
        resourceVersion: "7",
        creationTimestamp: "2026-01-01T00:00:00Z",
        deletionTimestamp: "2026-01-03T00:00:00Z",
      },
      spec: {
        key: "secret",
        user: "alice",
        team: "t",
        subject: "s",
        groups: ["g"],
        disabled: false,
        ttl: 60,
        ttlAfterLastActivity: true,
        scope: { roles: [{ role: "vcluster" }] },
        rules: [{ verbs: ["get"] }],
        allowLoftCli: true,
      },
      status: { lastActivity: "2026-01-02T00:00:00Z", weakKey: true },
    });
    // Packed and read back, a key is what was kept, name and resourceVersion included.
    const store = new PackedStore(packedKey);
    store.set("k", kept, "7");
    assert.deepEqual(store.get("k"), kept);
    const bare = keptFields({ metadata: { name: "b" } });
    store.set("b", bare, "");
    assert.deepEqual(store.get("b"), bare);
    // A part that is not an object is left out, as its readers treat it.
    assert.deepEqual(keptFields({ metadata: { name: "p" }, spec: "x", status: null }), {
      metadata: { name: "p" },
    });
  });

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
      page.items.map((i) => (i["metadata"] as { name?: string }).name),
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
