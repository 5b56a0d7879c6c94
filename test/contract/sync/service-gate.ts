// The Service gate (docs/reference.md#endpoints-syncer; vCluster's ReconcileStart): only the
// Endpoints of a selector-less Service are synced. A Service with a selector has its Endpoints
// managed by the host's endpoints controller, so a managed host copy goes when the Service gains
// one. Endpoints created before their Service are synced once the Service appears.

import assert from "node:assert/strict";
import { sleep, type SyncContext } from "./sync-context.js";

/** How long "not synced" is watched for, after a later object of the same namespace synced. */
const SETTLE_MS = 500;

export function serviceGateTests(ctx: SyncContext): void {
  before(() => ctx.main());

  it("does not sync Endpoints without a Service", async () => {
    const ns = await ctx.namespace();
    await ctx.endpoints(ns, "orphan", {});
    // A later object of the same namespace syncs: the controller has seen the orphan by then.
    await ctx.syncable(ns, "witness", {});
    await ctx.waitForHost(ns, "witness");
    await sleep(SETTLE_MS);
    assert.equal(await ctx.getHost(ns, "orphan"), null);
  });

  it("does not sync the Endpoints of a Service with a selector", async () => {
    const ns = await ctx.namespace();
    await ctx.service(ns, "selected", { app: "x" });
    await ctx.endpoints(ns, "selected", {});
    await ctx.syncable(ns, "witness", {});
    await ctx.waitForHost(ns, "witness");
    await sleep(SETTLE_MS);
    assert.equal(await ctx.getHost(ns, "selected"), null);
  });

  it("treats an empty selector ({}) as a selector", async () => {
    const ns = await ctx.namespace();
    await ctx.service(ns, "empty-sel", {});
    await ctx.endpoints(ns, "empty-sel", {});
    await ctx.syncable(ns, "witness", {});
    await ctx.waitForHost(ns, "witness");
    await sleep(SETTLE_MS);
    const svc = await ctx.virtual.get<
      { spec?: { selector?: unknown } } & import("./sync-context.js").Obj
    >({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "empty-sel", namespace: ns },
    });
    // kube-apiserver may drop an empty map; then the Service is selector-less and syncs.
    if (svc?.spec?.selector === undefined) await ctx.waitForHost(ns, "empty-sel");
    else assert.equal(await ctx.getHost(ns, "empty-sel"), null);
  });

  it("syncs the Endpoints of a selector-less Service", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "external", {});
    await ctx.waitForHost(ns, "external");
  });

  it("deletes the managed host copy when the Service gains a selector", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "flip", {});
    await ctx.waitForHost(ns, "flip");
    const svc = await ctx.virtual.get<
      import("./sync-context.js").Obj & { spec: Record<string, unknown> }
    >({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "flip", namespace: ns },
    });
    svc!.spec["selector"] = { app: "flip" };
    const res = await ctx.virtual.request("PUT", `/api/v1/namespaces/${ns}/services/flip`, svc);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await ctx.waitForHostGone(ns, "flip");
    // The virtual Endpoints stays: only the host copy was vgate's.
    assert.ok(await ctx.getVirtual(ns, "flip"));
  });

  it("syncs Endpoints created before their Service once the Service appears", async () => {
    const ns = await ctx.namespace();
    await ctx.endpoints(ns, "early", { annotations: { "example.com/owner": "zoe" } });
    await sleep(SETTLE_MS);
    assert.equal(await ctx.getHost(ns, "early"), null, "not synced without its Service");
    await ctx.service(ns, "early");
    const host = await ctx.waitForHost(ns, "early");
    assert.equal(host.metadata.annotations?.["example.com/owner"], "ZOE");
  });
}
