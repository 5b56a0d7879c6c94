// A host Endpoints object at the translated name that vgate does not manage (no bookkeeping) is
// never touched, unlike vCluster PR #1608 which deleted it to take over; the virtual object gets a
// SyncError Event saying why.

import assert from "node:assert/strict";
import { until } from "../../support/until.js";
import { sleep, type Endpoints, type SyncContext } from "./sync-context.js";

export function unmanagedTests(ctx: SyncContext): void {
  before(() => ctx.main());

  it("never touches an unmanaged host object in the way, and records a SyncError", async () => {
    const ns = await ctx.namespace();
    const hostName = ctx.hostName("taken", ns);
    const theirs = await ctx.host.create<Endpoints>({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: hostName, namespace: ctx.vc.namespace, labels: { owner: "someone-else" } },
      subsets: [{ addresses: [{ ip: "192.168.7.7" }], ports: [{ port: 9, protocol: "TCP" }] }],
    });
    await ctx.syncable(ns, "taken", { annotations: { "example.com/owner": "x" } });
    const virtual = await ctx.getVirtual(ns, "taken");
    const event = await ctx.waitForSyncError(ns, "taken");
    assert.equal(event.type, "Warning");
    assert.match(event.message ?? "", new RegExp(hostName));
    assert.equal(event.involvedObject?.uid, virtual?.metadata.uid);
    assert.equal(event.source?.component, "vgate-sync");
    // Retries repeat the same error: one Event whose count grows, as client-go's correlator does.
    await until(
      async () => ((await ctx.syncErrors(ns, "taken"))[0]?.count ?? 0) >= 2,
      "the SyncError Event's count raised by a retry",
    );
    assert.equal((await ctx.syncErrors(ns, "taken")).length, 1, "one Event, not one per retry");
    await ctx.updateVirtual(ns, "taken", (e) => {
      e.metadata.annotations!["example.com/owner"] = "y";
    });
    await sleep(1000);
    const after = await ctx.getHost(ns, "taken");
    assert.equal(after?.metadata.uid, theirs.metadata.uid);
    assert.equal(after?.metadata.resourceVersion, theirs.metadata.resourceVersion, "never written");
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "taken", namespace: ns },
    });
    await sleep(1000);
    const stillThere = await ctx.getHost(ns, "taken");
    assert.equal(
      stillThere?.metadata.resourceVersion,
      theirs.metadata.resourceVersion,
      "not deleted",
    );
  });
}
