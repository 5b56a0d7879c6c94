// A controller killed with SIGKILL (no shutdown, no Lease release) restarts and converges: every
// change made while it was down arrives, with no duplicate host object and no lost update. The
// snapshot it keeps on the host copy is what lets it tell a host edit from a virtual one.

import assert from "node:assert/strict";
import { BOOKKEEPING, type SyncContext } from "./sync-context.js";

export function restartTests(ctx: SyncContext): void {
  it("converges after SIGKILL and a restart: creates, updates, deletes and host edits", async () => {
    const main = await ctx.main();
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "upd", {
      annotations: { "example.com/owner": "ann" },
      ips: ["10.4.0.1"],
    });
    await ctx.syncable(ns, "del", {});
    await ctx.syncable(ns, "hostedit", { annotations: { "example.com/owner": "hal" } });
    await ctx.syncable(ns, "hostgone", {});
    await ctx.syncable(ns, "both", { annotations: { "example.com/owner": "bo" } });
    await ctx.waitForHost(ns, "upd");
    await ctx.waitForHost(ns, "del");
    await ctx.waitForHost(
      ns,
      "hostedit",
      (h) => h.metadata.annotations?.["example.com/owner"] === "HAL",
    );

    await ctx.waitForHost(
      ns,
      "both",
      (h) => h.metadata.annotations?.["example.com/owner"] === "BO",
    );
    const hostgone = await ctx.waitForHost(ns, "hostgone");
    await main.kill("SIGKILL");
    await ctx.host.delete(hostgone);
    // Both sides change the same key: the virtual side wins (docs/reference.md#endpoints-syncer-update).
    await ctx.updateHost(ns, "both", (h) => {
      h.metadata.annotations!["example.com/owner"] = "HOST-SIDE";
    });
    await ctx.updateVirtual(ns, "both", (e) => {
      e.metadata.annotations!["example.com/owner"] = "virtual-side";
    });
    await ctx.syncable(ns, "new", { annotations: { "example.com/owner": "nia" } });
    const updated = await ctx.updateVirtual(ns, "upd", (e) => {
      e.metadata.annotations!["example.com/owner"] = "ben";
      e.subsets![0]!.addresses!.push({ ip: "10.4.0.2" });
    });
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "del", namespace: ns },
    });
    await ctx.updateHost(ns, "hostedit", (h) => {
      h.metadata.annotations!["example.com/owner"] = "HOLLY";
    });

    await ctx.main();
    const created = await ctx.getVirtual(ns, "new");
    await ctx.waitForHost(
      ns,
      "new",
      (h) => h.metadata.annotations?.["example.com/owner"] === "NIA",
    );
    const upd = await ctx.waitForHost(
      ns,
      "upd",
      (h) =>
        h.metadata.annotations?.["example.com/owner"] === "BEN" &&
        h.subsets?.[0]?.addresses?.length === 2,
      "the update made while down",
    );
    assert.deepEqual(upd.subsets, ctx.expectedHost(updated, {}).subsets);
    await ctx.waitForHostGone(ns, "del");
    await ctx.waitForHost(
      ns,
      "both",
      (h) => h.metadata.annotations?.["example.com/owner"] === "VIRTUAL-SIDE",
      "the virtual side's value when both sides changed",
    );
    assert.equal(
      (await ctx.getVirtual(ns, "both"))?.metadata.annotations?.["example.com/owner"],
      "virtual-side",
    );
    await ctx.waitForHost(
      ns,
      "hostgone",
      undefined,
      "the host copy deleted while down, made again",
    );
    await ctx.waitForVirtual(
      ns,
      "hostedit",
      (v) => v.metadata.annotations?.["example.com/owner"] === "holly",
      "the host edit made while down, flowed back",
    );
    // The host edit won: the virtual side did not push its old value over it.
    const hostedit = await ctx.waitForHost(ns, "hostedit");
    assert.equal(hostedit.metadata.annotations?.["example.com/owner"], "HOLLY");

    const copies = await ctx.hostCopiesOf(ns);
    const names = copies.map((c) => c.metadata.annotations?.[BOOKKEEPING.name]).sort();
    assert.deepEqual(
      names,
      ["both", "hostedit", "hostgone", "new", "upd"],
      "exactly one host copy per virtual object",
    );
    assert.equal(
      copies.find((c) => c.metadata.annotations?.[BOOKKEEPING.name] === "new")?.metadata
        .annotations?.[BOOKKEEPING.uid],
      created?.metadata.uid,
    );
  });
}
