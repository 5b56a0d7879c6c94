// sync.toHost.endpoints.enabled: false (docs/decisions.md EPS-10): nothing is synced, and host
// copies made earlier are left alone: neither updated nor deleted. With --alongside-vcluster
// (EPS-25, EPS-26) the switch is vCluster's alone: it must be off, and vgate sync syncs.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import { metric, sleep, type SyncContext } from "./sync-context.js";

const DISABLED = `sync:
  toHost:
    endpoints:
      enabled: false
`;

/** A vcluster.yaml shared with vCluster's syncer: its Endpoints sync as `endpoints` says. */
const shared = (endpoints: boolean, prefix: string) => `sync:
  toHost:
    endpointSlices:
      enabled: false
    endpoints:
      enabled: ${endpoints}
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: '"${prefix}-" + value'
`;

export function enabledTests(ctx: SyncContext): void {
  let disabled: SyncProcess | undefined;
  let alongside: SyncProcess | undefined;
  after(() => Promise.all([disabled?.stop(), alongside?.stop()]));

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

  it("--alongside-vcluster syncs with vCluster's Endpoints sync off, and refuses a reload that turns it on", async () => {
    await ctx.stopMain();
    alongside = await ctx.controller("alongside", shared(false, "kept"), ["--alongside-vcluster"]);
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "first", { annotations: { "example.com/owner": "amy" } });
    await ctx.waitForHost(
      ns,
      "first",
      (h) => h.metadata.annotations?.["example.com/owner"] === "kept-amy",
    );

    const logBefore = (await alongside.log()).length;
    await writeFile(join(ctx.rig.dir, "alongside.yaml"), shared(true, "refused"));
    await until(
      async () =>
        /sync\.toHost\.endpoints\.enabled must be false with --alongside-vcluster/.test(
          (await alongside!.log()).slice(logBefore),
        ),
      "the log says why the reload is refused",
    );
    await ctx.syncable(ns, "second", { annotations: { "example.com/owner": "bob" } });
    const host = await ctx.waitForHost(ns, "second");
    assert.equal(
      host.metadata.annotations?.["example.com/owner"],
      "kept-bob",
      "the last good config",
    );
    assert.equal(await metric(alongside, "vgate_sync_config_reloads_total"), 0);
    assert.ok((await metric(alongside, "vgate_sync_config_reload_errors_total")) >= 1);
    await alongside.stop();
    alongside = undefined;
  });
}
