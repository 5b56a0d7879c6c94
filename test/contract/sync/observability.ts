// What an operator sees: /healthz and /readyz over plain HTTP, and /metrics covering the queue,
// the syncs and their errors (controller-runtime's names where it has them).

import assert from "node:assert/strict";
import { until } from "../../support/until.js";
import { metric, type SyncContext } from "./sync-context.js";

export function observabilityTests(ctx: SyncContext): void {
  it("answers /healthz and /readyz, and counts syncs, writes and errors on /metrics", async () => {
    const main = await ctx.main();
    assert.equal((await main.get("/healthz")).status, 200);
    assert.equal((await main.get("/readyz")).status, 200);
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "seen", {});
    await ctx.waitForHost(ns, "seen");
    // An unmanaged host object in the way: an error for that key.
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: ctx.hostName("blocked", ns), namespace: ctx.vc.namespace },
    });
    await ctx.syncable(ns, "blocked", {});
    await ctx.waitForSyncError(ns, "blocked");
    assert.ok((await metric(main, "workqueue_depth", { name: "endpoints" })) >= 0);
    assert.ok(
      (await metric(main, "controller_runtime_reconcile_total", { result: "success" })) > 0,
    );
    assert.ok((await metric(main, "controller_runtime_reconcile_errors_total")) > 0);
    assert.ok(
      (await metric(main, "vgate_sync_writes_total", { side: "host", type: "create" })) > 0,
    );
    assert.ok((await metric(main, "workqueue_retries_total")) > 0);
  });

  it("logs which object a sync is about", async () => {
    const main = await ctx.main();
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "logged", {});
    await ctx.waitForHost(ns, "logged");
    let lines: string[] = [];
    await until(async () => {
      const log = await main.log();
      lines = log.split("\n").filter((l) => l.includes(ctx.hostName("logged", ns)));
      return lines.length > 0;
    }, "a log line naming the host object (the log is flushed every second)");
    assert.ok(
      lines.some((l) => l.includes(`${ns}/logged`)),
      `a log line names the virtual key ${ns}/logged:\n${lines.join("\n")}`,
    );
  });
}
