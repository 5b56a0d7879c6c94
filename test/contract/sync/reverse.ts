// Host → virtual: annotation and label edits on the host copy flow back to the virtual Endpoints
// through `reverseExpression` (docs/reference.md#endpoints-syncer-update), and the two sides then
// settle: no write follows another (the ping-pong guard of vCluster PR #3265/#3266).

import assert from "node:assert/strict";
import { assertHostIs, assertQuiet, type SyncContext } from "./sync-context.js";

/** How long both sides must stay unwritten to count as settled. */
const QUIET_MS = 1500;

export function reverseTests(ctx: SyncContext): void {
  before(() => ctx.main());

  it("flows a host annotation edit back through reverseExpression, then stays quiet", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "rev", { annotations: { "example.com/owner": "alice" } });
    await ctx.waitForHost(
      ns,
      "rev",
      (h) => h.metadata.annotations?.["example.com/owner"] === "ALICE",
    );
    await ctx.updateHost(ns, "rev", (h) => {
      h.metadata.annotations!["example.com/owner"] = "CAROL";
    });
    await ctx.waitForVirtual(
      ns,
      "rev",
      (v) => v.metadata.annotations?.["example.com/owner"] === "carol",
      "the virtual annotation lower-cased by reverseExpression",
    );
    const host = await ctx.waitForHost(
      ns,
      "rev",
      (h) => h.metadata.annotations?.["example.com/owner"] === "CAROL",
    );
    assert.equal(host.metadata.annotations?.["example.com/owner"], "CAROL");
    await assertQuiet(
      async () => [await ctx.getVirtual(ns, "rev"), await ctx.getHost(ns, "rev")],
      QUIET_MS,
      "after the reverse sync",
    );
  });

  it("flows an annotation without patches and a label back as they are", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "plain", {
      annotations: { "example.com/note": "v1" },
      labels: { app: "plain" },
    });
    await ctx.waitForHost(ns, "plain");
    await ctx.updateHost(ns, "plain", (h) => {
      h.metadata.annotations!["example.com/note"] = "edited on host";
      h.metadata.labels!["tier"] = "gold";
    });
    const virtual = await ctx.waitForVirtual(
      ns,
      "plain",
      (v) =>
        v.metadata.annotations?.["example.com/note"] === "edited on host" &&
        v.metadata.labels?.["tier"] === "gold",
      "the host's annotation and label on the virtual Endpoints",
    );
    // vCluster's scoping labels never flow back.
    assert.deepEqual(virtual.metadata.labels, { app: "plain", tier: "gold" });
    await assertQuiet(
      async () => [await ctx.getVirtual(ns, "plain"), await ctx.getHost(ns, "plain")],
      QUIET_MS,
      "after the reverse sync",
    );
  });

  it("stays quiet after a create: the controller does not rewrite what it wrote", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "still", { annotations: { "example.com/owner": "dan" } });
    await ctx.waitForHost(ns, "still");
    await assertQuiet(
      async () => [await ctx.getVirtual(ns, "still"), await ctx.getHost(ns, "still")],
      QUIET_MS,
      "after the create",
    );
  });

  it("flows an annotation and a label removed on the host back as removals", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "rm", {
      annotations: { "example.com/note": "x", "example.com/keep": "y" },
      labels: { app: "rm", tier: "bronze" },
    });
    await ctx.waitForHost(ns, "rm");
    await ctx.updateHost(ns, "rm", (h) => {
      delete h.metadata.annotations!["example.com/note"];
      delete h.metadata.labels!["tier"];
    });
    const virtual = await ctx.waitForVirtual(
      ns,
      "rm",
      (v) =>
        v.metadata.annotations?.["example.com/note"] === undefined &&
        v.metadata.labels?.["tier"] === undefined,
      "the annotation and label removed on the virtual Endpoints",
    );
    assert.deepEqual(virtual.metadata.annotations, { "example.com/keep": "y" });
    assert.deepEqual(virtual.metadata.labels, { app: "rm" });
  });

  it("never writes vgate's snapshot or vCluster's bookkeeping to the virtual object", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "clean", { annotations: { "example.com/owner": "olga" } });
    await ctx.waitForHost(ns, "clean");
    await ctx.updateHost(ns, "clean", (h) => {
      h.metadata.annotations!["example.com/owner"] = "OTTO";
    });
    const virtual = await ctx.waitForVirtual(
      ns,
      "clean",
      (v) => v.metadata.annotations?.["example.com/owner"] === "otto",
      "the reverse sync",
    );
    assert.deepEqual(Object.keys(virtual.metadata.annotations ?? {}), ["example.com/owner"]);
    assert.deepEqual(virtual.metadata.labels ?? {}, {});
  });

  it("flows an annotation added on the host back, and counts it as managed from then on", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "added", { annotations: { "example.com/a": "1" } });
    await ctx.waitForHost(ns, "added");
    await ctx.updateHost(ns, "added", (h) => {
      h.metadata.annotations!["example.com/from-host"] = "2";
    });
    const updated = await ctx.waitForVirtual(
      ns,
      "added",
      (v) => v.metadata.annotations?.["example.com/from-host"] === "2",
      "the host's new annotation on the virtual Endpoints",
    );
    assert.equal(updated.metadata.uid, virtual.metadata.uid);
    await assertQuiet(
      async () => [await ctx.getVirtual(ns, "added"), await ctx.getHost(ns, "added")],
      QUIET_MS,
      "after the reverse sync",
    );
    const host = await ctx.getHost(ns, "added");
    assertHostIs(
      host!,
      ctx.expectedHost(updated, { "example.com/a": "1", "example.com/from-host": "2" }),
    );
    // Removed on the virtual side now, it goes from the host too.
    await ctx.updateVirtual(ns, "added", (e) => {
      delete e.metadata.annotations!["example.com/from-host"];
    });
    await ctx.waitForHost(
      ns,
      "added",
      (h) => h.metadata.annotations?.["example.com/from-host"] === undefined,
      "the annotation removed from the host copy",
    );
  });
}
