// An API server restart (etcd keeps its data) breaks every watch; the controller lists and watches
// again and keeps syncing, objects from before the restart included. The controller runs with
// client-go's default leader-election timings here (15 s lease, 10 s renew deadline), so the leader
// rides out a host API server restart of a few seconds instead of giving up its Lease.

import type { SyncProcess } from "../../support/sync-rig.js";
import { BASE_CONFIG, type SyncContext } from "./sync-context.js";

const DEFAULT_TIMINGS = [
  "--leader-elect-lease-duration=15s",
  "--leader-elect-renew-deadline=10s",
  "--leader-elect-retry-period=2s",
];

export function apiserverRestartTests(ctx: SyncContext): void {
  let proc: SyncProcess | undefined;
  before(async () => {
    await ctx.stopMain();
    proc = await ctx.controller("apiserver-restart", BASE_CONFIG, DEFAULT_TIMINGS);
    // A restarted API server refuses requests for a moment while its RBAC cache fills: those
    // 403s are not the manifests' fault.
    ctx.exemptFromRbacCheck(proc);
  });
  after(() => proc?.stop());

  for (const side of ["virtual", "host"] as const) {
    it(`keeps syncing after the ${side} kube-apiserver restarts`, async () => {
      const ns = await ctx.namespace();
      await ctx.syncable(ns, "before", { annotations: { "example.com/owner": "pre" } });
      await ctx.waitForHost(
        ns,
        "before",
        (h) => h.metadata.annotations?.["example.com/owner"] === "PRE",
      );
      const plane = side === "virtual" ? ctx.rig.virtual : ctx.rig.host;
      await plane.stopApiServer();
      await plane.startApiServer();
      await ctx.syncable(ns, "after", { annotations: { "example.com/owner": "post" } });
      await ctx.waitForHost(
        ns,
        "after",
        (h) => h.metadata.annotations?.["example.com/owner"] === "POST",
      );
      await ctx.updateVirtual(ns, "before", (e) => {
        e.metadata.annotations!["example.com/owner"] = "changed";
      });
      await ctx.waitForHost(
        ns,
        "before",
        (h) => h.metadata.annotations?.["example.com/owner"] === "CHANGED",
        "an object from before the restart updated",
      );
      await ctx.updateHost(ns, "before", (h) => {
        h.metadata.annotations!["example.com/owner"] = "FROM-HOST";
      });
      await ctx.waitForVirtual(
        ns,
        "before",
        (v) => v.metadata.annotations?.["example.com/owner"] === "from-host",
        "a host edit of an object from before the restart flowed back",
      );
    });
  }
}
