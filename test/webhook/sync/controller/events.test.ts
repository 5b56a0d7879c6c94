// EventRecorder against the shared real kube-apiserver: the Event it writes (fields as client-go's
// recorder writes them), repeats counted on the same Event by PATCH, a new Event when the old one is
// gone, and failures that are logged by name and never thrown. The involved objects are ConfigMaps
// with names of this file's own in "default".

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { loadKubeConfig } from "../../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport, TransportError } from "../../../../webhook/src/shared/transport.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import {
  capBytes,
  EventRecorder,
  MAX_MESSAGE_BYTES,
} from "../../../../webhook/src/sync/controller/events.js";
import { sharedCluster, type VgateCluster } from "../../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../../support/kube/binaries.js";
import type { KubeObject } from "../../../support/kube/kube-client.js";

type Event = KubeObject & Record<string, unknown>;

describe("capBytes", () => {
  it("cuts UTF-8 text to a byte limit without splitting a character", () => {
    assert.equal(capBytes("abc", 3), "abc");
    assert.equal(capBytes("abcd", 3), "abc");
    assert.equal(capBytes("aé", 2), "a", "é is two bytes");
    assert.equal(capBytes("a€b", 3), "a");
    assert.equal(Buffer.byteLength(capBytes("€".repeat(500), MAX_MESSAGE_BYTES)), 1023);
  });
});

describe("EventRecorder without a server", () => {
  it("never throws when the API server cannot be reached, and logs names only", async () => {
    const logs: [string, object | undefined][] = [];
    const transport = {
      request: () => Promise.reject(new TransportError("connect ECONNREFUSED", false)),
    };
    const r = new EventRecorder(transport, {
      component: "vgate-sync",
      log: (msg, fields) => logs.push([msg, fields]),
    });
    const object = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "web", namespace: "team" },
      subsets: [{ addresses: [{ ip: "10.1.2.3" }] }],
    };
    await r.warning(object, "SyncError", "Sync", "secret-looking detail 10.1.2.3");
    assert.equal(logs.length, 1);
    const text = JSON.stringify(logs);
    assert.match(text, /Endpoints team\/web/);
    assert.match(text, /SyncError/);
    assert.doesNotMatch(text, /10\.1\.2\.3|secret-looking/);
  });
});

(HAVE_KUBE ? describe : describe.skip)(`EventRecorder${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let transport: KubeTransport;
  let involved: KubeObject;
  const logs: [string, object | undefined][] = [];

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    const kc = await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} });
    transport = new KubeTransport(kc!, { timeoutMs: 10_000 });
  });
  beforeEach(async () => {
    logs.length = 0;
    involved = await cluster.admin.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `h1-ev-${randomBytes(4).toString("hex")}`, namespace: "default" },
    });
  });
  afterEach(async () => {
    for (const e of await eventsOf(involved)) await cluster.admin.delete(e);
    await cluster.admin.delete(involved);
  });
  after(() => transport?.close());

  const recorder = () =>
    new EventRecorder(transport, {
      component: "vgate-sync",
      host: "replica-1",
      log: (msg, fields) => logs.push([msg, fields]),
    });
  async function eventsOf(obj: KubeObject): Promise<Event[]> {
    const selector = encodeURIComponent(`involvedObject.name=${obj.metadata.name}`);
    const res = await cluster.admin.request<{ items: Event[] }>(
      "GET",
      `/api/v1/namespaces/${obj.metadata.namespace}/events?fieldSelector=${selector}`,
    );
    assert.equal(res.status, 200);
    // List items come without apiVersion and kind.
    return res.body.items.map((e) => ({ ...e, apiVersion: "v1", kind: "Event" }));
  }

  it("writes a core/v1 Event about the object, as client-go's recorder does", async () => {
    await recorder().warning(involved as JsonObject, "SyncError", "Sync", "patch 0 failed");
    const [event, ...more] = await eventsOf(involved);
    assert.ok(event, "an Event exists");
    assert.equal(more.length, 0);
    const meta = involved.metadata;
    assert.match(event.metadata.name!, new RegExp(`^${meta.name}\\.[0-9a-f]{12,16}$`));
    assert.equal(event.metadata.namespace, "default");
    assert.deepEqual(event["involvedObject"], {
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "default",
      name: meta.name,
      uid: meta["uid"],
      resourceVersion: meta["resourceVersion"],
    });
    assert.equal(event["reason"], "SyncError");
    assert.equal(event["message"], "patch 0 failed");
    assert.equal(event["type"], "Warning");
    assert.equal(event["action"], "Sync");
    assert.deepEqual(event["source"], { component: "vgate-sync", host: "replica-1" });
    assert.equal(event["reportingComponent"], "vgate-sync");
    assert.equal(event["reportingInstance"], "replica-1");
    assert.equal(event["count"], 1);
    assert.match(String(event["firstTimestamp"]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(event["lastTimestamp"], event["firstTimestamp"]);
    assert.equal(event["eventTime"], null);
    assert.deepEqual(logs, []);
  });

  it("counts repeats on the same Event and starts another for a different message", async () => {
    const r = recorder();
    const obj = involved as JsonObject;
    await r.warning(obj, "SyncError", "Sync", "same");
    const [first] = await eventsOf(involved);
    // Concurrent repeats: each waits for the one before, so all land on the one Event.
    await Promise.all([
      r.warning(obj, "SyncError", "Sync", "same"),
      r.warning(obj, "SyncError", "Sync", "same"),
    ]);
    await r.warning(obj, "SyncError", "Sync", "different");
    const events = await eventsOf(involved);
    assert.equal(events.length, 2);
    const same = events.find((e) => e["message"] === "same")!;
    assert.equal(same.metadata.name, first!.metadata.name);
    assert.equal(same["count"], 3);
    assert.equal(same["firstTimestamp"], first!["firstTimestamp"]);
    assert.ok(String(same["lastTimestamp"]) >= String(first!["lastTimestamp"]));
    assert.equal(events.find((e) => e["message"] === "different")!["count"], 1);
    assert.deepEqual(logs, []);
  });

  it("creates a new Event when the one it would count on is gone", async () => {
    const r = recorder();
    const obj = involved as JsonObject;
    await r.warning(obj, "SyncError", "Sync", "again");
    const [first] = await eventsOf(involved);
    await cluster.admin.delete(first!);
    await r.warning(obj, "SyncError", "Sync", "again");
    const [second, ...more] = await eventsOf(involved);
    assert.equal(more.length, 0);
    assert.notEqual(second!.metadata.name, first!.metadata.name);
    assert.equal(second!["count"], 1);
  });

  it("lets each object have a burst of 25 events, then one per 5 minutes", async () => {
    let now = Date.now();
    const r = new EventRecorder(transport, { component: "vgate-sync", now: () => now });
    const obj = involved as JsonObject;
    for (let i = 0; i < 30; i++) await r.warning(obj, "SyncError", "Sync", "flood");
    await r.warning(obj, "SyncError", "Sync", "another message, same object");
    let events = await eventsOf(involved);
    assert.equal(events.length, 1);
    assert.equal(events[0]!["count"], 25);
    now += 5 * 60 * 1000;
    await r.warning(obj, "SyncError", "Sync", "flood");
    await r.warning(obj, "SyncError", "Sync", "flood");
    events = await eventsOf(involved);
    assert.equal(events[0]!["count"], 26, "one more after 5 minutes");
  });

  it("caps the message at 1024 bytes", async () => {
    await recorder().warning(involved as JsonObject, "SyncError", "Sync", "x".repeat(5000));
    const [event] = await eventsOf(involved);
    assert.equal(String(event!["message"]).length, 1024);
  });

  it("does not throw on an API error, and logs it by name", async () => {
    const ghost = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "ghost", namespace: `h1-missing-${randomBytes(4).toString("hex")}` },
    };
    await recorder().warning(ghost, "SyncError", "Sync", "in a namespace that does not exist");
    assert.equal(logs.length, 1);
    assert.match(JSON.stringify(logs[0]), /ConfigMap h1-missing-[0-9a-f]+\/ghost.*status 404/);
  });
});
