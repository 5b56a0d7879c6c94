// Create, update and delete: the host copy follows the virtual Endpoints (vCluster's translation,
// then the `expression` patches), and goes when the virtual object goes.

import assert from "node:assert/strict";
import {
  assertHostIs,
  BOOKKEEPING,
  sleep,
  type Endpoints,
  type SyncContext,
} from "./sync-context.js";

export function crudTests(ctx: SyncContext): void {
  before(() => ctx.main());

  it("creates the host copy: vCluster's name, bookkeeping, labels, Pod targetRefs, patches", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "web", {
      annotations: { "example.com/owner": "alice", "example.com/plain": "kept as is" },
      labels: { app: "web" },
      ips: ["10.1.0.1", "10.1.0.2"],
    });
    const host = await ctx.waitForHost(ns, "web");
    const expected = ctx.expectedHost(virtual, {
      "example.com/owner": "ALICE",
      "example.com/plain": "kept as is",
    });
    assertHostIs(host, expected);
    // The Pod targetRef spelled out once: name-x-ns-x-vc in the host namespace, no uid.
    assert.deepEqual(host.subsets?.[0]?.addresses?.[0]?.targetRef, {
      kind: "Pod",
      name: `web-0-x-${ns}-x-${ctx.vc.name}`,
      namespace: ctx.vc.namespace,
    });
  });

  it("updates the host copy when subsets and annotations change", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "api", {
      annotations: { "example.com/owner": "alice", "example.com/gone": "soon" },
      labels: { app: "api", old: "label" },
      ips: ["10.2.0.1"],
    });
    await ctx.waitForHost(ns, "api");
    const updated = await ctx.updateVirtual(ns, "api", (e) => {
      e.subsets![0]!.addresses!.push({
        ip: "10.2.0.2",
        targetRef: { kind: "Pod", name: "api-new", namespace: ns, uid: "u-2" },
      });
      e.metadata.annotations = { "example.com/owner": "bob", "example.com/added": "yes" };
      e.metadata.labels = { app: "api-v2", added: "label" };
    });
    const expected = ctx.expectedHost(updated, {
      "example.com/owner": "BOB",
      "example.com/added": "yes",
    });
    const host = await ctx.waitForHost(
      ns,
      "api",
      (h) =>
        h.subsets?.[0]?.addresses?.length === 2 &&
        h.metadata.annotations?.["example.com/owner"] === "BOB",
      "the host copy updated",
    );
    assertHostIs(host, expected);
  });

  it("deletes the host copy when the virtual Endpoints is deleted", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "db", {});
    await ctx.waitForHost(ns, "db");
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "db", namespace: ns },
    });
    await ctx.waitForHostGone(ns, "db");
  });

  it("recreates the host copy when it is deleted on the host while the virtual object exists", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "cache", {
      annotations: { "example.com/owner": "eve" },
    });
    const first = await ctx.waitForHost(ns, "cache");
    await ctx.host.delete(first);
    const again = await ctx.waitForHost(
      ns,
      "cache",
      (h) => h.metadata.uid !== first.metadata.uid,
      "a new host copy",
    );
    assertHostIs(again, ctx.expectedHost(virtual, { "example.com/owner": "EVE" }));
    // The virtual object stays (docs/decisions.md: recreate rather than delete the virtual one).
    const still: Endpoints | null = await ctx.getVirtual(ns, "cache");
    assert.equal(still?.metadata.uid, virtual.metadata.uid);
    assert.equal(again.metadata.annotations?.[BOOKKEEPING.uid], virtual.metadata.uid);
  });

  it("never copies bookkeeping annotations a tenant sets on the virtual object", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "spoof", {
      annotations: {
        [BOOKKEEPING.name]: "someone-else",
        [BOOKKEEPING.namespace]: "kube-system",
        [BOOKKEEPING.uid]: "not-mine",
        "example.com/owner": "mallory",
      },
    });
    const host = await ctx.waitForHost(ns, "spoof");
    assertHostIs(host, ctx.expectedHost(virtual, { "example.com/owner": "MALLORY" }));
  });

  it("overwrites host drift in subsets with the virtual object's", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "drift", { ips: ["10.5.0.1"] });
    await ctx.waitForHost(ns, "drift");
    await ctx.updateHost(ns, "drift", (h) => {
      h.subsets = [{ addresses: [{ ip: "172.16.0.99" }], ports: [{ port: 1, protocol: "TCP" }] }];
    });
    // The drift stays until the virtual object changes (vCluster recomputes subsets on each sync).
    const touched = await ctx.updateVirtual(ns, "drift", (e) => {
      e.metadata.annotations = { "example.com/touch": "1" };
    });
    const host = await ctx.waitForHost(
      ns,
      "drift",
      (h) => h.subsets?.[0]?.addresses?.[0]?.ip === "10.5.0.1",
      "the host subsets back to the virtual object's",
    );
    assert.deepEqual(host.subsets, ctx.expectedHost(touched, {}).subsets);
    assert.equal(virtual.metadata.uid, touched.metadata.uid);
  });

  it("follows a virtual object deleted and created again under the same name (new uid)", async () => {
    const ns = await ctx.namespace();
    const first = await ctx.syncable(ns, "again", { ips: ["10.6.0.1"] });
    await ctx.waitForHost(ns, "again");
    await ctx.virtual.delete(first);
    const second = await ctx.endpoints(ns, "again", { ips: ["10.6.0.2"] });
    const host = await ctx.waitForHost(
      ns,
      "again",
      (h) => h.metadata.annotations?.[BOOKKEEPING.uid] === second.metadata.uid,
      "the host copy of the new object",
    );
    assertHostIs(host, ctx.expectedHost(second, {}));
    assert.equal((await ctx.hostCopiesOf(ns)).length, 1, "one host copy");
  });

  it("syncs an object whose host name is hashed (over 63 characters), both ways", async () => {
    const ns = await ctx.namespace();
    const name = "a-rather-long-service-name-for-an-external-database";
    const virtual = await ctx.syncable(ns, name, { annotations: { "example.com/owner": "lin" } });
    const host = await ctx.waitForHost(ns, name);
    assert.match(
      host.metadata.name,
      /^a-rather-long-service-name-for-an-external-database--[0-9a-f]{10}$/,
    );
    assertHostIs(host, ctx.expectedHost(virtual, { "example.com/owner": "LIN" }));
    await ctx.updateHost(ns, name, (h) => {
      h.metadata.annotations!["example.com/owner"] = "LIU";
    });
    await ctx.waitForVirtual(
      ns,
      name,
      (v) => v.metadata.annotations?.["example.com/owner"] === "liu",
      "the host edit flowed back to the hashed name's virtual object",
    );
  });

  it("never syncs the API server's own default/kubernetes Endpoints", async () => {
    const own = await ctx.getVirtual("default", "kubernetes");
    // Make it change once, so the controller surely sees it.
    if (own) {
      await ctx.updateVirtual("default", "kubernetes", (e) => {
        e.metadata.annotations = { ...e.metadata.annotations, "example.com/touch": "1" };
      });
    } else {
      // Newer API servers keep only its EndpointSlice: an Endpoints object of that name stands in.
      await ctx.endpoints("default", "kubernetes", {});
    }
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "witness", {});
    await ctx.waitForHost(ns, "witness");
    await sleep(1000);
    assert.equal(await ctx.getHost("default", "kubernetes"), null);
  });

  it("strips the leader-election annotation from the host copy", async () => {
    const ns = await ctx.namespace();
    const virtual = await ctx.syncable(ns, "leader", {
      annotations: { "control-plane.alpha.kubernetes.io/leader": "{}", "example.com/x": "1" },
    });
    const host = await ctx.waitForHost(ns, "leader");
    assertHostIs(host, ctx.expectedHost(virtual, { "example.com/x": "1" }));
  });
}
