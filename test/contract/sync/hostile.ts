// A hostile expression in the config (an endless loop, a memory bomb, a reach for `process`) fails
// only the objects it applies to: each gets a SyncError Event naming the patch, and every other
// object keeps syncing.

import assert from "node:assert/strict";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import type { KubeEvent, SyncContext } from "./sync-context.js";

const HOSTILE = `sync:
  toHost:
    endpoints:
      enabled: true
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: value.toUpperCase()
        - path: metadata.annotations["example.com/spin"]
          expression: (() => { while (true) {} })()
        - path: metadata.annotations["example.com/bomb"]
          expression: (() => { const a = []; for (;;) a.push(value.repeat(1 << 20) + a.length); })()
        - path: metadata.annotations["example.com/escape"]
          expression: process.mainModule.require("child_process").execSync("id").toString()
`;

const CASES = [
  { name: "spin", patch: 1 },
  { name: "bomb", patch: 2 },
  { name: "escape", patch: 3 },
] as const;

export function hostileTests(ctx: SyncContext): void {
  let proc: SyncProcess | undefined;
  before(async () => {
    await ctx.stopMain();
    proc = await ctx.controller("hostile", HOSTILE);
  });
  after(() => proc?.stop());

  it("fails only the objects a hostile expression applies to, each with a SyncError naming the patch", async () => {
    const ns = await ctx.namespace();
    for (const c of CASES) {
      await ctx.syncable(ns, c.name, { annotations: { [`example.com/${c.name}`]: "x" } });
    }
    await ctx.syncable(ns, "good", { annotations: { "example.com/owner": "gus" } });
    await ctx.waitForHost(
      ns,
      "good",
      (h) => h.metadata.annotations?.["example.com/owner"] === "GUS",
    );
    for (const c of CASES) {
      const named = new RegExp(`patches\\[${c.patch}\\]`);
      let events: KubeEvent[] = [];
      await until(
        async () => (events = await ctx.syncErrors(ns, c.name)).length > 0,
        `a SyncError on ${c.name}`,
        60_000,
      );
      // Every one names the patch, the first included (the sandbox pool re-runs an object whose
      // patch it could not learn when its child was killed).
      for (const e of events) assert.match(e.message ?? "", named, c.name);
      assert.ok(events.every((e) => e.type === "Warning"));
      assert.equal(await ctx.getHost(ns, c.name), null, `${c.name} is not synced`);
    }
    // Still syncing after all that, and still healthy.
    await ctx.syncable(ns, "after", { annotations: { "example.com/owner": "ivy" } });
    await ctx.waitForHost(
      ns,
      "after",
      (h) => h.metadata.annotations?.["example.com/owner"] === "IVY",
    );
    assert.equal((await proc!.get("/healthz")).status, 200);
    assert.ok(!proc!.exited());
    // The hostile objects go, so that their retries stop.
    for (const c of CASES) {
      await ctx.virtual.delete({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: c.name, namespace: ns },
      });
    }
  });

  it("names the patch in the first SyncError of a memory bomb too", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "bomb", { annotations: { "example.com/bomb": "x" } });
    const first = await ctx.waitForSyncError(ns, "bomb", 60_000);
    assert.match(first.message ?? "", /patches\[2\]/);
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "bomb", namespace: ns },
    });
  });
}
