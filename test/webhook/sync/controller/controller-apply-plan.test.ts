// apply-plan.ts against the shared cluster's real kube-apiserver. "virtual" and "host" are two
// transports to the same server here (each side is only a transport to apply-plan); two namespaces
// keep them apart. Every 409, 404 and 422 below is the real server's answer.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { KubeError } from "../../../../webhook/src/shared/status.js";
import { loadKubeConfig } from "../../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport } from "../../../../webhook/src/shared/transport.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import {
  applyAction,
  applyPlan,
  FIELD_MANAGER,
  RetryConflict,
  sameSource,
  type Sides,
  type WriteOutcome,
} from "../../../../webhook/src/sync/controller/apply-plan.js";
import { SyncError, type SyncAction } from "../../../../webhook/src/sync/controller/contracts.js";
import { ResourcePaths } from "../../../../webhook/src/sync/controller/resource-paths.js";
import { writeGuard } from "../../../../webhook/src/sync/controller/write-guard.js";
import { DEFAULT_REFERENCE_SECRET_TYPES } from "../../../../webhook/src/sync/secret-types.js";
import { sharedCluster, type VgateCluster } from "../../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../../support/kube/binaries.js";
import type { KubeObject } from "../../../support/kube/kube-client.js";

const suffix = randomBytes(3).toString("hex");
const VIRTUAL_NS = `apply-v-${suffix}`;
const HOST_NS = `apply-h-${suffix}`;

function endpoints(
  namespace: string,
  name: string,
  annotations: Record<string, string> = {},
  labels: Record<string, string> = {},
): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name, namespace, annotations, labels },
    subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }],
  };
}

/** The field managers of an object's managedFields. */
const managers = (o: KubeObject) =>
  ((o.metadata["managedFields"] as { manager?: string }[] | undefined) ?? []).map((m) => m.manager);

/** A host copy's bookkeeping, as translateEndpointsToHost writes it. */
function hostCopy(name: string, source: string): JsonObject {
  return endpoints(
    HOST_NS,
    name,
    {
      "vcluster.loft.sh/object-name": source,
      "vcluster.loft.sh/object-namespace": VIRTUAL_NS,
      "vcluster.loft.sh/object-kind": "/v1, Kind=Endpoints",
      "vcluster.loft.sh/object-host-name": name,
      "vcluster.loft.sh/object-host-namespace": HOST_NS,
    },
    { "vcluster.loft.sh/managed-by": "vc" },
  );
}

/** The rules of a vCluster whose namespace is HOST_NS (write-guard.ts has its own tests). */
const guard = writeGuard({
  owner: { vclusterName: "vc", vclusterNamespace: HOST_NS, ownNamespaces: [HOST_NS] },
  secretTypes: new Set(DEFAULT_REFERENCE_SECRET_TYPES),
  copyKinds: () => new Set(["v1/Secret", "v1/ConfigMap"]),
});

const create = (object: JsonObject): SyncAction => ({
  type: "create",
  side: "host",
  object,
  reason: "test",
});
const ensure = (object: JsonObject): SyncAction => ({
  type: "ensure",
  side: "host",
  object,
  reason: "test",
});

(HAVE_KUBE ? describe : describe.skip)(
  `apply-plan: writes against a real API server${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let sides: Sides;
    let transport: KubeTransport;

    const get = (name: string, ns = HOST_NS) =>
      cluster.admin.get<KubeObject>({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name, namespace: ns },
      });

    before(async () => {
      cluster = await sharedCluster();
      const kc = await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} });
      transport = new KubeTransport(kc!, { timeoutMs: 10_000 });
      const access = { transport, paths: new ResourcePaths(transport) };
      sides = { virtual: access, host: { transport, paths: new ResourcePaths(transport) } };
      for (const name of [VIRTUAL_NS, HOST_NS]) {
        await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
    });

    after(async () => {
      for (const name of [VIRTUAL_NS, HOST_NS]) {
        await cluster?.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
      transport?.close();
    });

    it("create: POSTs; over a copy of the same source it retries; over someone else's object it refuses and leaves it alone", async () => {
      const outcomes: WriteOutcome[] = [];
      await applyPlan(
        { actions: [create(hostCopy("c1", "c1"))], warnings: [] },
        sides,
        guard,
        (o) => outcomes.push(o),
      );
      assert.deepEqual(
        outcomes.map((o) => [o.side, o.type, o.did, o.ref.namespace, o.ref.name]),
        [["host", "create", "created", HOST_NS, "c1"]],
      );
      assert.deepEqual(managers((await get("c1"))!), [FIELD_MANAGER]);
      await assert.rejects(applyAction(create(hostCopy("c1", "c1")), sides, guard), RetryConflict);

      await cluster.admin.create({
        ...endpoints(HOST_NS, "theirs"),
        metadata: { name: "theirs", namespace: HOST_NS },
      } as KubeObject);
      const before = await get("theirs");
      await assert.rejects(
        applyAction(create(hostCopy("theirs", "theirs")), sides, guard),
        (err: unknown) =>
          err instanceof SyncError &&
          err.message === `host Endpoints "${HOST_NS}/theirs" exists and is not managed by vgate`,
      );
      assert.equal(
        (await get("theirs"))!.metadata.resourceVersion,
        before!.metadata.resourceVersion,
      );
    });

    it("create and ensure into a namespace that does not exist: a SyncError that says so", async () => {
      const missing = `apply-gone-${suffix}`;
      // The vCluster's own namespace, missing (the guard lets its own namespaces through).
      const guard = writeGuard({
        owner: { vclusterName: "vc", vclusterNamespace: missing, ownNamespaces: [missing] },
        secretTypes: new Set(DEFAULT_REFERENCE_SECRET_TYPES),
        copyKinds: () => new Set(["v1/Secret", "v1/ConfigMap"]),
      });
      for (const action of [create, ensure]) {
        const object = {
          ...hostCopy("lost", "lost"),
          metadata: { name: "lost", namespace: missing },
        };
        await assert.rejects(
          applyAction(action(object as JsonObject), sides, guard),
          (err: unknown) =>
            err instanceof SyncError &&
            err.message.startsWith(
              `cannot create host Endpoints "${missing}/lost": 404 NotFound: namespaces "${missing}" not found`,
            ) &&
            err.message.endsWith(
              `(vgate sync does not create namespaces: create namespace "${missing}" on the host, or map this namespace elsewhere)`,
            ),
        );
      }
    });

    it("refuses every write outside the namespaces the vCluster owns before it reaches the server", async () => {
      const foreign = VIRTUAL_NS; // exists, and is not the vCluster's
      for (const action of [create, ensure]) {
        const object = {
          ...hostCopy("intruder", "x"),
          metadata: { name: "intruder", namespace: foreign },
        };
        await assert.rejects(
          applyAction(action(object as JsonObject), sides, guard),
          (err: unknown) =>
            err instanceof SyncError &&
            err.message.includes(`host namespace "${foreign}" does not belong to vCluster "vc"`),
        );
      }
      assert.equal(await get("intruder", foreign), null);
    });

    it("update: PUT with the resourceVersion read; a stale one is a 409 Conflict and retried", async () => {
      const created = (await cluster.admin.create(
        hostCopy("u1", "u1") as KubeObject,
      )) as JsonObject;
      const stale = structuredClone(created);
      const next = structuredClone(created);
      ((next["metadata"] as JsonObject)["labels"] as JsonObject)["changed"] = "yes";
      const outcome = await applyAction(
        { type: "update", side: "host", object: next, reason: "test" },
        sides,
        guard,
      );
      assert.equal(outcome.did, "updated");
      const updated = (await get("u1"))!;
      assert.equal((updated.metadata["labels"] as Record<string, string>)["changed"], "yes");
      assert.ok(managers(updated).includes(FIELD_MANAGER), "the update names vgate sync");
      await assert.rejects(
        applyAction({ type: "update", side: "host", object: stale, reason: "test" }, sides, guard),
        (err: unknown) =>
          err instanceof RetryConflict && /the object has been modified/.test(err.message),
      );
    });

    it("delete: only the object with the uid read; gone already is done", async () => {
      const created = await cluster.admin.create(hostCopy("d1", "d1") as KubeObject);
      const ref = { apiVersion: "v1", kind: "Endpoints", namespace: HOST_NS, name: "d1" };
      await assert.rejects(
        applyAction(
          {
            type: "delete",
            side: "host",
            ref,
            uid: "00000000-0000-0000-0000-000000000000",
            reason: "test",
          },
          sides,
          guard,
        ),
        (err: unknown) =>
          err instanceof RetryConflict &&
          /the UID in the precondition .* does not match/.test(err.message),
      );
      assert.ok(await get("d1"));
      const uid = created.metadata["uid"] as string;
      assert.equal(
        (
          await applyAction(
            { type: "delete", side: "host", ref, uid, reason: "test" },
            sides,
            guard,
          )
        ).did,
        "deleted",
      );
      assert.equal(await get("d1"), null);
      assert.equal(
        (
          await applyAction(
            { type: "delete", side: "host", ref, uid, reason: "test" },
            sides,
            guard,
          )
        ).did,
        "unchanged",
      );
    });

    it("ensure: creates, updates a copy of the same source, refuses anyone else's object", async () => {
      assert.equal((await applyAction(ensure(hostCopy("e1", "e1")), sides, guard)).did, "created");
      const changed = hostCopy("e1", "e1");
      (changed["subsets"] as JsonObject[])[0]!["addresses"] = [{ ip: "10.0.0.2" }];
      assert.equal((await applyAction(ensure(changed), sides, guard)).did, "updated");
      const live = await get("e1");
      assert.deepEqual((live!["subsets"] as JsonObject[])[0]!["addresses"], [{ ip: "10.0.0.2" }]);

      await cluster.admin.create(endpoints(HOST_NS, "e2") as KubeObject);
      const before = await get("e2");
      await assert.rejects(
        applyAction(ensure(hostCopy("e2", "e2")), sides, guard),
        /exists and is not managed by vgate/,
      );
      // A copy of another source under the same name is not ours to overwrite either.
      await cluster.admin.create(hostCopy("e3", "other") as KubeObject);
      await assert.rejects(applyAction(ensure(hostCopy("e3", "e3")), sides, guard), SyncError);
      assert.equal((await get("e2"))!.metadata.resourceVersion, before!.metadata.resourceVersion);
    });

    it("an object the server finds invalid is a SyncError naming the object (for the Event); later actions do not run", async () => {
      const bad = endpoints(HOST_NS, "bad");
      (bad["subsets"] as JsonObject[])[0]!["addresses"] = [{ ip: "not-an-ip" }];
      const outcomes: WriteOutcome[] = [];
      await assert.rejects(
        applyPlan(
          { actions: [create(bad), create(hostCopy("after-bad", "x"))], warnings: [] },
          sides,
          guard,
          (o) => outcomes.push(o),
        ),
        (err: unknown) =>
          err instanceof SyncError &&
          err.message.startsWith(`cannot create host Endpoints "${HOST_NS}/bad": 422 Invalid: `),
      );
      assert.deepEqual(outcomes, []);
      assert.equal(await get("after-bad"), null);
    });

    it("other kinds are found through discovery; an unknown kind is a SyncError", async () => {
      const lease: JsonObject = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "l1", namespace: VIRTUAL_NS },
        spec: { holderIdentity: "x" },
      };
      assert.equal(
        (
          await applyAction(
            { type: "create", side: "virtual", object: lease, reason: "test" },
            sides,
            guard,
          )
        ).did,
        "created",
      );
      const read = await cluster.admin.request(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${VIRTUAL_NS}/leases/l1`,
      );
      assert.equal(read.status, 200);
      await assert.rejects(
        applyAction(
          {
            type: "create",
            side: "virtual",
            object: { ...lease, kind: "NoSuchKind" },
            reason: "test",
          },
          sides,
          guard,
        ),
        (err: unknown) =>
          err instanceof SyncError &&
          /no resource for NoSuchKind in "coordination.k8s.io\/v1"/.test(err.message),
      );
    });

    it("a server error that is not about the object is retried without an Event (not a SyncError)", async () => {
      // A 503 a real server does not give on demand: a transport that answers only that.
      const down = {
        request: async () => ({
          status: 503,
          body: { kind: "Status", reason: "ServiceUnavailable", message: "etcd is down" },
        }),
      };
      const broken: Sides = { ...sides, host: { transport: down, paths: new ResourcePaths(down) } };
      const err = await applyAction(create(hostCopy("x", "x")), broken, guard).catch(
        (e: unknown) => e,
      );
      assert.ok(err instanceof KubeError && !(err instanceof SyncError), String(err));
      assert.equal((err as KubeError).code, 503);
    });
  },
);

describe("apply-plan: sameSource", () => {
  it("needs the desired object's source bookkeeping, with equal values, and the same managed-by label", () => {
    const a = hostCopy("x", "src");
    assert.equal(sameSource(a, hostCopy("x", "src")), true);
    assert.equal(sameSource(a, hostCopy("x", "other")), false);
    assert.equal(sameSource(a, endpoints(HOST_NS, "x")), false);
    const otherVc = hostCopy("x", "src");
    (otherVc["metadata"] as JsonObject)["labels"] = { "vcluster.loft.sh/managed-by": "another" };
    assert.equal(sameSource(a, otherVc), false);
    // Without bookkeeping on the desired object nothing can be told: never ours.
    assert.equal(sameSource(endpoints(HOST_NS, "x"), endpoints(HOST_NS, "x")), false);
  });
});
