// The EndpointSlice reconciler with the real sandbox (docs/decisions.md KND-80..KND-83): the gates
// (switch, controlled-by, Service, selector), ownership (an object in the way is never touched),
// the copy as a function of the virtual slice (a second pass plans nothing), and deletion.

import assert from "node:assert/strict";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import {
  SyncError,
  type ReconcileDeps,
} from "../../../../webhook/src/sync/controller/contracts.js";
import { reconcileEndpointSlice } from "../../../../webhook/src/sync/controller/reconcile-endpoint-slices.js";
import { translateEndpointSliceToHost } from "../../../../webhook/src/sync/translate-endpoint-slices.js";
import { newUid, service, startRunner, VC_NAME, VC_NAMESPACE } from "./reconcile-fixtures.js";

const NS = "team";

function virtualSlice(ips: string[]): JsonObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "db-k2x9z",
      namespace: NS,
      uid: newUid(),
      resourceVersion: "10",
      labels: {
        "kubernetes.io/service-name": "db",
        "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ port: 5432, protocol: "TCP" }],
  };
}

describe("sync/controller/reconcile EndpointSlices", function () {
  this.timeout(30_000);
  let runner: Awaited<ReturnType<typeof startRunner>>;
  let deps: ReconcileDeps;
  before(async () => {
    runner = await startRunner([
      { path: "subsets[*].addresses[*].ip", expression: 'value.replace("10.5.", "10.6.")' },
    ]);
    deps = {
      vcluster: runner.vcluster,
      enabled: true,
      run: runner.run,
      slices: { enabled: true },
      get: () => Promise.resolve(null),
      list: () => Promise.resolve([]),
    };
  });
  after(() => runner.close());
  const key = { namespace: NS, name: "db-k2x9z" };

  it("creates the copy through the Endpoints patches, then a pass on the copy plans nothing", async () => {
    const virtual = virtualSlice(["10.5.0.1"]);
    const plan = await reconcileEndpointSlice(
      { key, virtual, service: service(NS, "db"), host: null },
      deps,
    );
    assert.equal(plan.actions.length, 1);
    const action = plan.actions[0]!;
    assert.equal(action.type, "create");
    const created = action.type === "create" ? action.object : {};
    assert.deepEqual(created["endpoints"], [
      { addresses: ["10.6.0.1"], conditions: { ready: true } },
    ]);
    const stored = structuredClone(created);
    (stored["metadata"] as JsonObject)["uid"] = newUid();
    (stored["metadata"] as JsonObject)["resourceVersion"] = "11";
    const again = await reconcileEndpointSlice(
      { key, virtual, service: service(NS, "db"), host: stored },
      deps,
    );
    assert.deepEqual(again.actions, [], "the copy is a function of the virtual slice");
  });

  it("plans nothing with the switch off, for a controlled slice, without a Service", async () => {
    const virtual = virtualSlice(["10.5.0.1"]);
    const svc = service(NS, "db");
    const off = { ...deps, slices: { enabled: false } };
    assert.deepEqual(
      (await reconcileEndpointSlice({ key, virtual, service: svc, host: null }, off)).actions,
      [],
    );
    const controlled = structuredClone(virtual);
    (controlled["metadata"] as JsonObject)["labels"] = { "vcluster.loft.sh/controlled-by": "x" };
    assert.deepEqual(
      (await reconcileEndpointSlice({ key, virtual: controlled, service: svc, host: null }, deps))
        .actions,
      [],
    );
    assert.deepEqual(
      (await reconcileEndpointSlice({ key, virtual, service: null, host: null }, deps)).actions,
      [],
    );
  });

  it("deletes its copy when the Service gains a selector or the virtual slice goes", async () => {
    const virtual = virtualSlice(["10.5.0.1"]);
    const host = translateEndpointSliceToHost(virtual, deps.vcluster);
    (host["metadata"] as JsonObject)["uid"] = "host-uid";
    for (const state of [
      { key, virtual, service: service(NS, "db", { app: "db" }), host },
      { key, virtual: null, service: null, host },
    ]) {
      const plan = await reconcileEndpointSlice(state, deps);
      assert.equal(plan.actions.length, 1);
      const action = plan.actions[0]!;
      assert.equal(action.type, "delete");
      assert.equal(action.type === "delete" && action.uid, "host-uid");
    }
  });

  it("never touches a host slice in the way that is not its copy: a SyncError names it", async () => {
    const virtual = virtualSlice(["10.5.0.1"]);
    const stranger: JsonObject = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `db-k2x9z-x-${NS}-x-${VC_NAME}`, namespace: VC_NAMESPACE, uid: "s" },
      addressType: "IPv4",
    };
    await assert.rejects(
      reconcileEndpointSlice({ key, virtual, service: service(NS, "db"), host: stranger }, deps),
      (err) => err instanceof SyncError && /not managed by vgate/.test(err.message),
    );
  });
});
