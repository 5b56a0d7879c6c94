// Leader election against the shared real kube-apiserver, with short durations (Lease 2 s, renew
// deadline 1.5 s, retry 0.3 s): one leader of two, a hand-over on stop() through the released
// Lease, and a leader cut off from the API server (a fault proxy answering 503) that stops leading
// before its Lease expires, after which the standby takes over. Each test has a Lease of its own.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { loadKubeConfig } from "../../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport } from "../../../../webhook/src/shared/transport.js";
import {
  LeaderElector,
  microTime,
  recordOf,
  type LeaderElectorOptions,
} from "../../../../webhook/src/sync/controller/leader-election.js";
import { sharedCluster, type VgateCluster } from "../../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../../support/kube/binaries.js";
import { kubeStatus, type FaultProxy } from "../../../support/kube/fault-proxy.js";
import type { KubeObject } from "../../../support/kube/kube-client.js";
import { until } from "../../../support/until.js";

const FAST = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 300 };
const NAMESPACE = "default";

describe("leader election helpers", () => {
  it("writes times as metav1.MicroTime does", () => {
    assert.equal(microTime(new Date("2026-01-02T03:04:05.678Z")), "2026-01-02T03:04:05.678000Z");
  });
  it("reads a Lease's record, missing fields as zero values", () => {
    assert.deepEqual(recordOf({ spec: { holderIdentity: "a", leaseTransitions: 3 } }), {
      holderIdentity: "a",
      leaseDurationSeconds: 0,
      acquireTime: "",
      renewTime: "",
      leaseTransitions: 3,
    });
  });
  it("refuses durations client-go refuses", () => {
    const base = {
      transport: { request: () => Promise.reject(new Error("unused")) },
      namespace: "ns",
      name: "n",
      identity: "me",
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    assert.throws(
      () => new LeaderElector({ ...base, leaseDurationMs: 5_000, renewDeadlineMs: 5_000 }),
      /leaseDurationMs must be greater than renewDeadlineMs/,
    );
    assert.throws(
      () => new LeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }),
      /renewDeadlineMs must be greater than retryPeriodMs\*1.2/,
    );
    assert.throws(() => new LeaderElector({ ...base, identity: "" }), /identity must not be empty/);
  });
});

(HAVE_KUBE ? describe : describe.skip)(`LeaderElector${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let direct: KubeTransport;
  let lease: KubeObject;
  const cleanup: (() => unknown)[] = [];
  /** What happened, in order: "a started", "b stopped", ... */
  let events: string[];

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    const kc = await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} });
    direct = new KubeTransport(kc!, { timeoutMs: 5_000 });
  });
  beforeEach(() => {
    events = [];
    lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: `h1-le-${randomBytes(4).toString("hex")}`, namespace: NAMESPACE },
    };
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
    await cluster.admin.request("DELETE", leasePath());
  });
  after(() => direct?.close());

  const leasePath = () =>
    `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${lease.metadata.name}`;
  async function readLease() {
    const got = await cluster.admin.get(lease);
    assert.ok(got, "the Lease exists");
    return recordOf(got as Parameters<typeof recordOf>[0]);
  }

  function elector(id: string, extra: Partial<LeaderElectorOptions> = {}): LeaderElector {
    const e = new LeaderElector({
      transport: direct,
      namespace: NAMESPACE,
      name: lease.metadata.name!,
      identity: id,
      ...FAST,
      onStartedLeading: () => events.push(`${id} started`),
      onStoppedLeading: () => events.push(`${id} stopped`),
      onNewLeader: (who) => events.push(`${id} sees ${who}`),
      ...extra,
    });
    cleanup.push(() => e.stop());
    e.start();
    return e;
  }
  const started = () => events.filter((e) => e.endsWith(" started"));

  it("elects exactly one of two candidates, which keeps renewing", async () => {
    const a = elector("a");
    const b = elector("b");
    await until(() => a.isLeader() || b.isLeader(), "a leader");
    const [leader, standby] = a.isLeader() ? ["a", "b"] : ["b", "a"];
    await until(() => events.includes(`${standby} sees ${leader}`), "the standby saw the leader");
    const first = await readLease();
    assert.equal(first.holderIdentity, leader);
    assert.equal(first.leaseDurationSeconds, 2);
    assert.equal(first.leaseTransitions, 0);
    assert.match(first.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Several renew periods later: the same single leader, renewed, same tenure.
    await until(async () => (await readLease()).renewTime > first.renewTime, "a renew", 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const later = await readLease();
    assert.equal(later.holderIdentity, leader);
    assert.equal(later.acquireTime, first.acquireTime);
    assert.equal(later.leaseTransitions, 0);
    assert.deepEqual(started(), [`${leader} started`]);
    assert.equal(a.isLeader() !== b.isLeader(), true);
  });

  it("releases the Lease on stop(): empty holder, expiring at once", async () => {
    const a = elector("a");
    await until(() => a.isLeader(), "a leads");
    await a.stop();
    assert.equal(a.isLeader(), false);
    assert.deepEqual(events, ["a sees a", "a started", "a stopped"]);
    const released = await readLease();
    assert.equal(released.holderIdentity, "");
    assert.equal(released.leaseDurationSeconds, 1);
    assert.equal(released.leaseTransitions, 0);
  });

  it("hands over on the leader's stop() without waiting for the Lease to expire", async () => {
    // a's Lease lasts a minute: only its release (not expiry) lets b take over within the wait.
    const a = elector("a", { leaseDurationMs: 60_000, renewDeadlineMs: 40_000 });
    await until(() => a.isLeader(), "a leads");
    const b = elector("b");
    await until(() => events.includes("b sees a"), "b saw a");
    await a.stop();
    await until(() => b.isLeader(), "b took over");
    assert.deepEqual(started(), ["a started", "b started"]);
    assert.ok(events.indexOf("a stopped") < events.indexOf("b started"));
    const now = await readLease();
    assert.equal(now.holderIdentity, "b");
    assert.equal(now.leaseTransitions, 1, "a change of holder is a transition");
    assert.equal(now.leaseDurationSeconds, 2, "b writes its own lease duration");
  });

  /** A transport through a fault proxy that speaks as the admin upstream. */
  async function proxied(): Promise<{ proxy: FaultProxy; transport: KubeTransport }> {
    const proxy = await cluster.plane.faultProxy({ client: cluster.plane.adminCert });
    cleanup.push(() => proxy.close());
    const viaProxy = await cluster.plane.clientCertKubeconfig("h1-elector", [], proxy.url);
    const kc = await loadKubeConfig({ kubeconfig: viaProxy, env: {} });
    const transport = new KubeTransport(kc!, { timeoutMs: 1_000 });
    cleanup.push(() => transport.close());
    return { proxy, transport };
  }
  const isLease = (r: { path: string }) => r.path === leasePath();

  it("takes over a Lease nobody renews only after its duration passed on its own clock", async () => {
    // renewTime is ancient: only the duration since the record was first seen counts, as in
    // client-go, so clocks of different machines are never compared.
    const ancient = "2000-01-01T00:00:00.000000Z";
    await cluster.admin.create({
      ...lease,
      spec: {
        holderIdentity: "ghost",
        leaseDurationSeconds: 2,
        acquireTime: ancient,
        renewTime: ancient,
        leaseTransitions: 4,
      },
    });
    const { proxy, transport } = await proxied();
    const a = elector("a", { transport });
    await until(() => a.isLeader(), "a took over", 15_000);
    const calls = proxy.requests.filter(isLease).map((r) => r.method);
    const firstPut = calls.indexOf("PUT");
    assert.ok(firstPut >= 2, `the Lease was read again before the takeover: ${calls}`);
    assert.deepEqual(events.slice(0, 3), ["a sees ghost", "a sees a", "a started"]);
    const now = await readLease();
    assert.equal(now.holderIdentity, "a");
    assert.equal(now.leaseTransitions, 5);
    assert.notEqual(now.acquireTime, ancient);
  });

  it("treats a 409 Conflict on renew as someone else's write: reads again and keeps leading", async () => {
    const { proxy, transport } = await proxied();
    const a = elector("a", { transport });
    await until(() => a.isLeader(), "a leads");
    const before = proxy.requests.length;
    proxy.inject((r) => r.method === "PUT" && isLease(r), {
      status: 409,
      body: kubeStatus(409, "Conflict", "the object has been modified"),
    });
    await until(
      () => proxy.requests.slice(before).filter((r) => r.method === "PUT").length >= 3,
      "renews after the conflict",
    );
    const after = proxy.requests.slice(before).map((r) => r.method);
    assert.deepEqual(after.slice(0, 3), ["PUT", "GET", "PUT"], "the slow path follows a conflict");
    assert.equal(a.isLeader(), true);
    assert.deepEqual(events, ["a sees a", "a started"]);
    assert.equal((await readLease()).leaseTransitions, 0);
  });

  it("stops leading when renewing fails for renewDeadline; the standby takes over after expiry", async () => {
    const { proxy, transport: cutOff } = await proxied();

    const a = elector("a", { transport: cutOff });
    await until(() => a.isLeader(), "a leads");
    const b = elector("b");
    await until(() => events.includes("b sees a"), "b saw a");
    proxy.setDown(true);
    await until(() => events.includes("a stopped"), "a gave up", 10_000);
    await until(() => b.isLeader(), "b took over", 10_000);
    // a stops within its renew deadline, before b can consider the Lease expired.
    assert.deepEqual(
      events.filter((e) => !e.includes(" sees ")),
      ["a started", "a stopped", "b started"],
    );
    const now = await readLease();
    assert.equal(now.holderIdentity, "b");
    assert.equal(now.leaseTransitions, 1);
    assert.ok(
      proxy.requests.some((r) => r.method === "PUT" && r.path === leasePath()),
      "a renewed through the proxy before it failed",
    );
    // Back online, a is a candidate again but b keeps the Lease.
    proxy.setDown(false);
    await until(() => events.includes("a sees b"), "a saw b", 10_000);
    assert.equal(a.isLeader(), false);
    assert.equal(b.isLeader(), true);
  });
});
