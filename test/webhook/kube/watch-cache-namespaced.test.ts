// WatchCache over namespaced collections, against the shared real kube-apiserver: one namespace's
// ConfigMaps, and ConfigMaps of every namespace narrowed by a label selector. Keys are
// "namespace/name" as client-go's MetaNamespaceKeyFunc makes them. Each test has namespaces of its
// own, so other tests' objects never show up.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport, type KubeResponse } from "../../../webhook/src/shared/transport.js";
import {
  keyOf,
  WatchCache,
  type CacheTransport,
  type ChangeType,
} from "../../../webhook/src/kube/watch-cache.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { until } from "../../support/until.js";

type Data = Record<string, string> | undefined;
const keepData = (o: Record<string, unknown>): Data => o["data"] as Data;

/** The cache's transport, noting every path it asked for. */
class Recording implements CacheTransport {
  readonly paths: string[] = [];
  constructor(private readonly inner: KubeTransport) {}
  request(method: string, path: string): Promise<KubeResponse> {
    this.paths.push(path);
    return this.inner.request(method, path);
  }
  stream(path: string, onLine: (line: string) => void) {
    this.paths.push(path);
    return this.inner.stream(path, onLine);
  }
  redact(text: string): string {
    return this.inner.redact(text);
  }
}

describe("keyOf", () => {
  it("is namespace/name for namespaced objects and name for cluster-scoped ones", () => {
    assert.equal(keyOf({ metadata: { name: "a", namespace: "ns" } }), "ns/a");
    assert.equal(keyOf({ metadata: { name: "a" } }), "a");
    assert.equal(keyOf({ metadata: { name: "a", namespace: "" } }), "a");
    assert.equal(keyOf({ metadata: { namespace: "ns" } }), null);
    assert.equal(keyOf({}), null);
  });
});

describe("WatchCache.waitForSync without a server", () => {
  const never: CacheTransport = {
    request: () => new Promise<KubeResponse>(() => undefined),
    stream: () => ({ done: new Promise<KubeResponse>(() => undefined), abort: () => undefined }),
    redact: (t) => t,
  };
  it("rejects with the signal's reason when aborted before the cache synced", async () => {
    const c = new WatchCache(never, "/api/v1/configmaps", keepData);
    c.start();
    const ac = new AbortController();
    const waiting = c.waitForSync(ac.signal);
    ac.abort(new Error("shutting down"));
    await assert.rejects(waiting, /shutting down/);
    await assert.rejects(c.waitForSync(ac.signal), /shutting down/);
    c.stop();
  });
});

(HAVE_KUBE ? describe : describe.skip)(`WatchCache, namespaced${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let transport: KubeTransport;
  const cleanup: (() => unknown)[] = [];

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    const kc = await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} });
    transport = new KubeTransport(kc!, { timeoutMs: 10_000 });
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  after(() => transport?.close());

  /** A fresh namespace, removed (after its ConfigMaps) when the test ends. */
  async function namespace(): Promise<string> {
    const name = `wcache-${randomBytes(4).toString("hex")}`;
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
    await cluster.admin.create(ns);
    cleanup.push(() => cluster.admin.delete(ns));
    return name;
  }
  const configMap = (
    ns: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string> = {},
  ): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns, labels },
    data,
  });
  async function put(obj: KubeObject): Promise<KubeObject> {
    const out = await cluster.admin.apply(obj);
    cleanup.push(() => cluster.admin.delete(obj));
    return out;
  }
  function cache(path: string, changes: [ChangeType, string][], labelSelector?: string) {
    const via = new Recording(transport);
    const c = new WatchCache(via, path, keepData, {
      labelSelector,
      onChange: (type, key) => changes.push([type, key]),
    });
    cleanup.push(() => c.stop());
    c.start();
    return { c, via };
  }

  it("keys one namespace's objects as namespace/name and applies add, modify and delete", async () => {
    const ns = await namespace();
    await put(configMap(ns, "before", { v: "1" }));
    const changes: [ChangeType, string][] = [];
    const { c } = cache(`/api/v1/namespaces/${ns}/configmaps`, changes);
    await c.waitForSync();
    assert.equal(c.synced(), true);
    assert.deepEqual(c.get(`${ns}/before`), { v: "1" });
    assert.equal(c.get("before"), undefined, "a namespaced object is not found by its bare name");

    await put(configMap(ns, "late", { v: "1" }));
    await until(() => c.get(`${ns}/late`) !== undefined, "ADDED applied");
    await put(configMap(ns, "late", { v: "2" }));
    await until(() => c.get(`${ns}/late`)?.["v"] === "2", "MODIFIED applied");
    assert.deepEqual(c.keys().sort(), [`${ns}/before`, `${ns}/late`]);
    assert.deepEqual(
      c.entries().sort(([a], [b]) => a.localeCompare(b)),
      [
        [`${ns}/before`, { v: "1" }],
        [`${ns}/late`, { v: "2" }],
      ],
    );
    await cluster.admin.delete(configMap(ns, "late", {}));
    await until(() => c.get(`${ns}/late`) === undefined, "DELETED applied");
    assert.deepEqual(changes, [
      ["ADDED", `${ns}/before`],
      ["ADDED", `${ns}/late`],
      ["MODIFIED", `${ns}/late`],
      ["DELETED", `${ns}/late`],
    ]);
  });

  it("watches every namespace through a label selector sent on LIST and WATCH", async () => {
    const [a, b] = [await namespace(), await namespace()];
    const run = randomBytes(4).toString("hex");
    const selector = `wcache-run=${run},wcache-role in (x,y)`;
    const mine = (role: string) => ({ "wcache-run": run, "wcache-role": role });
    await put(configMap(a, "one", { v: "1" }, mine("x")));
    await put(configMap(a, "other-role", { v: "1" }, mine("z")));
    await put(configMap(b, "unlabelled", { v: "1" }));
    const changes: [ChangeType, string][] = [];
    const { c, via } = cache("/api/v1/configmaps", changes, selector);
    await c.waitForSync();
    assert.deepEqual(c.keys(), [`${a}/one`]);

    await put(configMap(b, "two", { v: "1" }, mine("y")));
    await until(() => c.get(`${b}/two`) !== undefined, "ADDED in the second namespace");
    await put(configMap(b, "unlabelled", { v: "2" }));
    // An object that stops matching is DELETED for a watch with a selector; one that starts, ADDED.
    await put(configMap(a, "one", { v: "1" }, mine("z")));
    await until(() => c.get(`${a}/one`) === undefined, "relabelled object dropped");
    await put(configMap(b, "unlabelled", { v: "3" }, mine("x")));
    await until(() => c.get(`${b}/unlabelled`)?.["v"] === "3", "newly matching object added");
    assert.deepEqual(changes, [
      ["ADDED", `${a}/one`],
      ["ADDED", `${b}/two`],
      ["DELETED", `${a}/one`],
      ["ADDED", `${b}/unlabelled`],
    ]);
    const sent = via.paths.map((p) => new URL(p, "https://x"));
    assert.ok(sent.length >= 2);
    for (const url of sent) {
      assert.equal(url.pathname, "/api/v1/configmaps");
      assert.equal(url.searchParams.get("labelSelector"), selector);
    }
    assert.ok(sent.some((u) => u.searchParams.get("watch") === "true"));
    assert.ok(sent.some((u) => u.searchParams.get("limit") === "500"));
    assert.ok(!via.paths.some((p) => p.includes(" ")), "the selector is URL-encoded");
  });
});
