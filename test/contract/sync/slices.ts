// EndpointSlices (docs/decisions.md KND-80..KND-83): vgate sync copies the virtual slices of
// selector-less Services to the host as vCluster's EndpointSlice syncer names them, with the
// Endpoints patches (through the slice's Endpoints view) and the slice's own patches, labels its
// host Endpoints skip-mirror so that it is the only writer of those slices, and deletes a copy
// whose virtual slice or Service gate is gone. The rig has no kube-controller-manager, so the
// virtual slices are written here as the virtual cluster's mirroring controller writes them.

import assert from "node:assert/strict";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import {
  assertQuiet,
  BOOKKEEPING,
  MARKER_LABEL,
  metric,
  type Obj,
  type SyncContext,
} from "./sync-context.js";

const SLICES_CONFIG = `sync:
  toHost:
    endpoints:
      patches:
        - path: subsets[*].addresses[*].ip
          expression: 'value.startsWith("10.5.") ? "10.6." + value.slice(5) : value'
    endpointSlices:
      patches:
        - path: metadata.annotations["example.com/tier"]
          expression: '"host-" + value'
`;

const OFF_CONFIG = `sync:
  toHost:
    endpointSlices:
      enabled: false
`;

type Slice = Obj & {
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  endpoints?: { addresses: string[]; targetRef?: Record<string, string>; conditions?: object }[];
};

const sliceRef = (namespace: string, name: string) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace },
});

/** PUT of a slice read before: its resourceVersion makes it conditional. */
async function replace(client: SyncContext["virtual"], slice: Slice): Promise<void> {
  const { namespace, name } = slice.metadata;
  const res = await client.request(
    "PUT",
    `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${name}`,
    slice,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

export function sliceTests(ctx: SyncContext): void {
  let own: SyncProcess | undefined;
  before(async () => {
    await ctx.stopMain();
    own = await ctx.controller("slices", SLICES_CONFIG);
  });
  after(() => own?.stop());

  /** A virtual slice of Service `service`, as the virtual mirroring controller writes it. */
  const virtualSlice = (ns: string, service: string, ips: string[]): Promise<Slice> =>
    ctx.virtual.create({
      ...sliceRef(ns, `${service}-abcde`),
      metadata: {
        name: `${service}-abcde`,
        namespace: ns,
        labels: {
          "kubernetes.io/service-name": service,
          "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
        },
        annotations: { "example.com/tier": "db" },
      },
      addressType: "IPv4",
      endpoints: ips.map((ip, i) => ({
        addresses: [ip],
        conditions: { ready: true },
        targetRef: { kind: "Pod", name: `${service}-${i}`, namespace: ns, uid: `u-${i}` },
      })),
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    } as Obj) as Promise<Slice>;

  const hostSlice = (ns: string, service: string) =>
    ctx.host.get<Slice>(sliceRef(ctx.vc.namespace, ctx.hostName(`${service}-abcde`, ns)));

  async function waitForHostSlice(
    ns: string,
    service: string,
    check: (s: Slice) => boolean = () => true,
  ): Promise<Slice> {
    let last: Slice | null = null;
    await until(
      async () => {
        last = await hostSlice(ns, service);
        return last !== null && check(last);
      },
      `the host slice of ${ns}/${service} (last seen: ${JSON.stringify(last)})`,
      30_000,
    );
    return last!;
  }

  it("copies a selector-less Service's slice: vCluster's name and bookkeeping, both patch sets", async () => {
    const ns = await ctx.namespace("s");
    await ctx.service(ns, "db");
    const virtual = await virtualSlice(ns, "db", ["10.5.0.1", "10.7.0.2"]);
    const host = await waitForHostSlice(ns, "db");
    assert.equal(host.metadata.name, ctx.hostName("db-abcde", ns));
    assert.deepEqual(host.metadata.labels, {
      "kubernetes.io/service-name": ctx.hostName("db", ns),
      "endpointslice.kubernetes.io/managed-by": "vgate-sync.vgate.loft.sh",
      [MARKER_LABEL]: ctx.vc.name,
      "vcluster.loft.sh/namespace": ns,
    });
    const a = host.metadata.annotations ?? {};
    assert.equal(a[BOOKKEEPING.name], "db-abcde");
    assert.equal(a[BOOKKEEPING.namespace], ns);
    assert.equal(a[BOOKKEEPING.uid], virtual.metadata.uid);
    assert.equal(a[BOOKKEEPING.kind], "discovery.k8s.io/v1, Kind=EndpointSlice");
    assert.equal(a["example.com/tier"], "host-db", "the slice's own patch ran");
    assert.deepEqual(
      host.endpoints?.map((e) => [
        e.addresses[0],
        e.targetRef?.["name"],
        e.targetRef?.["namespace"],
      ]),
      [
        ["10.6.0.1", ctx.hostName("db-0", ns), ctx.vc.namespace],
        ["10.7.0.2", ctx.hostName("db-1", ns), ctx.vc.namespace],
      ],
      "the Endpoints address patch ran through the slice's Endpoints view",
    );
  });

  it("follows the virtual slice, then deletes the copy with it", async () => {
    const ns = await ctx.namespace("s");
    await ctx.service(ns, "api");
    await virtualSlice(ns, "api", ["10.5.1.1"]);
    await waitForHostSlice(ns, "api");
    const current = (await ctx.virtual.get<Slice>(sliceRef(ns, "api-abcde")))!;
    current.endpoints = [
      ...(current.endpoints ?? []),
      { addresses: ["10.5.1.2"], conditions: { ready: true } },
    ];
    await replace(ctx.virtual, current);
    await waitForHostSlice(
      ns,
      "api",
      (s) => s.endpoints?.some((e) => e.addresses[0] === "10.6.1.2") === true,
    );
    await ctx.virtual.delete(sliceRef(ns, "api-abcde"));
    await until(
      async () => (await hostSlice(ns, "api")) === null,
      "the host slice deleted",
      30_000,
    );
  });

  it("copies nothing for a Service with a selector, and no slice without a Service", async () => {
    const ns = await ctx.namespace("s");
    await ctx.service(ns, "web", { app: "web" });
    await virtualSlice(ns, "web", ["10.5.2.1"]);
    await virtualSlice(ns, "ghost", ["10.5.2.2"]);
    // A marker slice synced after both proves the controller has seen them.
    await ctx.service(ns, "marker");
    await virtualSlice(ns, "marker", ["10.5.2.3"]);
    await waitForHostSlice(ns, "marker");
    assert.equal(await hostSlice(ns, "web"), null);
    assert.equal(await hostSlice(ns, "ghost"), null);
  });

  it("labels its host Endpoints skip-mirror, and the label never reaches the virtual Endpoints", async () => {
    const ns = await ctx.namespace("s");
    await ctx.syncable(ns, "cache", { ips: ["10.5.3.1"] });
    const host = await ctx.waitForHost(ns, "cache");
    assert.equal(host.metadata.labels?.["endpointslice.kubernetes.io/skip-mirror"], "true");
    // A host-side label edit flows back; skip-mirror, set in the same write, does not.
    await ctx.updateHost(ns, "cache", (e) => {
      e.metadata.labels = { ...e.metadata.labels, "example.com/flows": "back" };
    });
    const virtual = await ctx.waitForVirtual(
      ns,
      "cache",
      (v) => v.metadata.labels?.["example.com/flows"] === "back",
      "the host label flowed back",
    );
    assert.equal(virtual.metadata.labels?.["endpointslice.kubernetes.io/skip-mirror"], undefined);
  });

  it("a host slice edited by hand is put back, and then nothing is written", async () => {
    const ns = await ctx.namespace("s");
    await ctx.syncable(ns, "queue", { ips: ["10.5.4.1"] });
    await virtualSlice(ns, "queue", ["10.5.4.1"]);
    const before = await waitForHostSlice(ns, "queue");
    await replace(ctx.host, {
      ...before,
      endpoints: [{ addresses: ["192.0.2.9"], conditions: { ready: true } }],
    });
    await waitForHostSlice(ns, "queue", (s) => s.endpoints?.[0]?.addresses[0] === "10.6.4.1");
    // The host Endpoints and the slice: vgate sync is their one writer, so both fall quiet.
    await assertQuiet(
      async () => [await ctx.getHost(ns, "queue"), await hostSlice(ns, "queue")],
      2000,
      "the host Endpoints and slice of queue",
    );
    const writes = await metric(own!, "vgate_sync_writes_total", { kind: "EndpointSlice" });
    assert.ok(writes >= 2, `slice writes counted by kind (${writes})`);
  });

  it("never touches a host slice in the way: a SyncError Event on the virtual slice names it", async () => {
    const ns = await ctx.namespace("s");
    const hostName = ctx.hostName("blocked-abcde", ns);
    await ctx.host.create({
      ...sliceRef(ctx.vc.namespace, hostName),
      metadata: { name: hostName, namespace: ctx.vc.namespace, labels: { team: "host" } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["192.0.2.1"] }],
    } as Obj);
    const stranger = (await ctx.host.get<Slice>(sliceRef(ctx.vc.namespace, hostName)))!;
    await ctx.service(ns, "blocked");
    await virtualSlice(ns, "blocked", ["10.5.6.1"]);
    let events: { reason?: string; action?: string; message?: string }[] = [];
    await until(
      async () => {
        const res = await ctx.virtual.request<{
          items?: {
            reason?: string;
            action?: string;
            message?: string;
            involvedObject?: { kind?: string; name?: string };
          }[];
        }>("GET", `/api/v1/namespaces/${ns}/events`);
        events = (res.body.items ?? []).filter(
          (e) =>
            e.reason === "SyncError" &&
            e.involvedObject?.kind === "EndpointSlice" &&
            e.involvedObject.name === "blocked-abcde",
        );
        return events.length > 0;
      },
      "a SyncError Event on the virtual EndpointSlice",
      30_000,
    );
    assert.equal(events[0]!.action, "SyncEndpointSlice");
    assert.match(events[0]!.message ?? "", /exists and is not managed by vgate/);
    const after = await ctx.host.get<Slice>(sliceRef(ctx.vc.namespace, hostName));
    assert.equal(after?.metadata.resourceVersion, stranger.metadata.resourceVersion, "untouched");
  });

  it("with sync.toHost.endpointSlices.enabled: false, no slice and no skip-mirror label", async () => {
    const ns = await ctx.namespace("s");
    await own?.stop();
    own = await ctx.controller("slices-off", OFF_CONFIG);
    await ctx.syncable(ns, "off", { ips: ["10.5.5.1"] });
    await virtualSlice(ns, "off", ["10.5.5.1"]);
    const host = await ctx.waitForHost(ns, "off");
    assert.equal(host.metadata.labels?.["endpointslice.kubernetes.io/skip-mirror"], undefined);
    assert.equal(await hostSlice(ns, "off"), null);
  });
}
