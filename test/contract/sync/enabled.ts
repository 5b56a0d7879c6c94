// sync.toHost.endpoints.enabled: false (docs/decisions.md EPS-10): nothing is synced, and host
// copies made earlier are left alone: neither updated nor deleted.

import assert from "node:assert/strict";
import type { SyncProcess } from "../../support/sync-rig.js";
import { sleep, type SyncContext } from "./sync-context.js";

const DISABLED = `sync:
  toHost:
    endpoints:
      enabled: false
`;

export function enabledTests(ctx: SyncContext): void {
  let disabled: SyncProcess | undefined;
  after(() => disabled?.stop());

  it("enabled: false syncs nothing and leaves existing host copies alone", async () => {
    await ctx.main();
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "kept", { annotations: { "example.com/owner": "amy" } });
    await ctx.syncable(ns, "orphaned", {});
    const keptBefore = await ctx.waitForHost(ns, "kept");
    const orphanedBefore = await ctx.waitForHost(ns, "orphaned");
    await ctx.stopMain();

    disabled = await ctx.controller("disabled", DISABLED);
    await ctx.syncable(ns, "new", {});
    await ctx.updateVirtual(ns, "kept", (e) => {
      e.metadata.annotations!["example.com/owner"] = "changed";
      e.subsets![0]!.addresses!.push({ ip: "10.3.0.3" });
    });
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "orphaned", namespace: ns },
    });
    await sleep(2000);

    assert.equal(await ctx.getHost(ns, "new"), null, "a new object is not synced");
    const kept = await ctx.getHost(ns, "kept");
    assert.equal(
      kept?.metadata.resourceVersion,
      keptBefore.metadata.resourceVersion,
      "not updated",
    );
    const orphaned = await ctx.getHost(ns, "orphaned");
    assert.equal(orphaned?.metadata.uid, orphanedBefore.metadata.uid, "not deleted");
    assert.equal(orphaned?.metadata.resourceVersion, orphanedBefore.metadata.resourceVersion);
    assert.deepEqual(await ctx.syncErrors(ns, "new"), [], "no SyncError either");
    await disabled.stop();
    disabled = undefined;
  });
}
