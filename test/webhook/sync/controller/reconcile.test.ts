// reconcileEndpoints: the gate, create, delete, and the unmanaged-object rule, with the real sandbox
// runner and two plain object maps as the clusters (reconcile-fixtures.ts).

import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import { hostName, hostNameShort } from "../../../../webhook/src/patches/host-names.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import { KubeError } from "../../../../webhook/src/shared/status.js";
import { SyncError, type SyncAction } from "../../../../webhook/src/sync/controller/contracts.js";
import {
  hostKeyFor,
  reconcileEndpoints,
  virtualKeyFromHost,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  readSnapshot,
  SNAPSHOT_ANNOTATION,
} from "../../../../webhook/src/sync/controller/snapshot.js";
import { translateEndpointsToHost } from "../../../../webhook/src/sync/translate-endpoints.js";
import {
  annotationsOf,
  labelsOf,
  service,
  startRunner,
  VC_NAME,
  VC_NAMESPACE,
  virtualEndpoints,
  World,
} from "./reconcile-fixtures.js";

const PATCHES = [
  {
    path: 'metadata.annotations["owner"]',
    expression: '"p-" + value',
    reverseExpression: "value.slice(2)",
  },
  { path: 'metadata.annotations["secret-name"]', reference: { apiVersion: "v1", kind: "Secret" } },
  { path: "subsets[*].addresses[*].ip", expression: 'value.replace(/^10\\./, "172.")' },
];

type Runner = Awaited<ReturnType<typeof startRunner>>;

describe("sync/controller/reconcile: gate, create, delete", function () {
  this.timeout(60_000);
  let runner: Runner;
  before(async () => {
    runner = await startRunner(PATCHES);
  });
  after(async () => {
    await runner?.close();
  });

  const key = { namespace: "team", name: "db" };
  const hostKey = () => hostKeyFor(key, runner.vcluster);

  /** A world where `team/db` and its selector-less Service exist and the host copy was synced. */
  async function synced(): Promise<World> {
    const world = new World();
    world.virtual.put(virtualEndpoints("team", "db", { annotations: { owner: "ann" } }));
    world.virtual.put(service("team", "db"));
    world.apply(await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)));
    assert.ok(
      world.host.endpoints(hostKey().namespace, hostKey().name),
      "the host copy was created",
    );
    return world;
  }

  const deletes = (actions: SyncAction[]) => actions.filter((a) => a.type === "delete");

  it("hostKeyFor is vCluster's long name in the vCluster namespace; virtualKeyFromHost maps it back", () => {
    const vc = runner.vcluster;
    assert.deepEqual(hostKeyFor(key, vc), {
      namespace: VC_NAMESPACE,
      name: hostName("db", "team", VC_NAME),
    });
    assert.equal(hostKeyFor(key, vc).name, "db-x-team-x-vc");
    const host = translateEndpointsToHost(virtualEndpoints("team", "db"), vc);
    assert.deepEqual(virtualKeyFromHost(host, vc), key);
    // Another vCluster's copy, an object without bookkeeping, and one whose name does not match its
    // bookkeeping are not ours.
    assert.equal(virtualKeyFromHost(host, { ...vc, name: "other" }), null);
    const plain = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "db-x-team-x-vc", namespace: VC_NAMESPACE },
    };
    assert.equal(virtualKeyFromHost(plain, vc), null);
    const renamed = structuredClone(host);
    (renamed.metadata as JsonObject).name = "something-else";
    assert.equal(virtualKeyFromHost(renamed, vc), null);
    // Multi-namespace mode: the same name in the mapped namespace, and back.
    const mapped = { ...vc, namespaceMappings: { team: "host-team" } };
    assert.deepEqual(hostKeyFor(key, mapped), { namespace: "host-team", name: "db" });
    const mappedHost = translateEndpointsToHost(virtualEndpoints("team", "db"), mapped);
    assert.deepEqual(virtualKeyFromHost(mappedHost, mapped), key);
    assert.equal(virtualKeyFromHost(mappedHost, vc), null);
    const controlled = structuredClone(host);
    (controlled.metadata as { labels: Record<string, string> }).labels[
      "vcluster.loft.sh/controlled-by"
    ] = "x";
    assert.equal(virtualKeyFromHost(controlled, vc), null);
  });

  it("enabled: false plans nothing at all, and leaves existing host copies alone", async () => {
    const world = await synced();
    const deps = world.deps(runner, false);
    assert.deepEqual(await reconcileEndpoints(world.state(key, runner.vcluster), deps), {
      actions: [],
      warnings: [],
    });
    world.virtual.delete({ apiVersion: "v1", kind: "Endpoints", ...key });
    assert.deepEqual(await reconcileEndpoints(world.state(key, runner.vcluster), deps), {
      actions: [],
      warnings: [],
    });
  });

  it("the gate: no Service, nothing; default/kubernetes, nothing", async () => {
    const world = new World();
    world.virtual.put(virtualEndpoints("team", "db"));
    assert.deepEqual(
      (await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner))).actions,
      [],
    );
    const k8s = { namespace: "default", name: "kubernetes" };
    world.virtual.put(virtualEndpoints("default", "kubernetes"));
    world.virtual.put(service("default", "kubernetes"));
    assert.deepEqual(
      (await reconcileEndpoints(world.state(k8s, runner.vcluster), world.deps(runner))).actions,
      [],
    );
  });

  it("the gate: a Service with a selector, even {}, deletes our host copy (uid precondition) so the host's endpoints controller takes over", async () => {
    const world = await synced();
    world.virtual.put(service("team", "db", {}));
    const host = world.host.endpoints(hostKey().namespace, hostKey().name)!;
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.equal(plan.actions.length, 1);
    assert.deepEqual(plan.actions[0], {
      type: "delete",
      side: "host",
      ref: { apiVersion: "v1", kind: "Endpoints", ...hostKey() },
      uid: (host.metadata as JsonObject).uid,
      reason: plan.actions[0]!.reason,
    });
    assert.match(plan.actions[0]!.reason, /selector/);
    world.apply(plan);
    // Now the host object is Kubernetes' own: a selector Service never touches it.
    world.host.put({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { ...hostKey() },
      subsets: [],
    });
    assert.deepEqual(
      (await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner))).actions,
      [],
    );
  });

  it("creates the host copy: vCluster's translation, then expression patches, references copied, the snapshot added", async () => {
    const world = new World();
    world.virtual.put(
      virtualEndpoints("team", "db", {
        annotations: { owner: "ann", "secret-name": "db-cred", plain: "kept" },
        labels: { app: "db" },
      }),
    );
    world.virtual.put(service("team", "db"));
    world.virtual.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "db-cred",
        namespace: "team",
        uid: "s-uid",
        resourceVersion: "9",
        labels: { app: "db" },
      },
      type: "Opaque",
      data: { password: "c2VjcmV0" },
    });
    const sourceVersion = (
      world.virtual.get({ apiVersion: "v1", kind: "Secret", namespace: "team", name: "db-cred" })!
        .metadata as Record<string, string>
    ).resourceVersion;
    const virtual = world.virtual.endpoints("team", "db")!;
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      plan.actions.map((a) => [a.type, a.side]),
      [
        ["ensure", "host"],
        ["create", "host"],
      ],
    );
    const created = plan.actions[1]!.type === "create" ? plan.actions[1]!.object : {};
    const secretHostName = hostNameShort("db-cred", "team", VC_NAME);
    const expected = translateEndpointsToHost(virtual, runner.vcluster);
    const meta = created.metadata as JsonObject;
    assert.equal(meta.name, "db-x-team-x-vc");
    assert.equal(meta.namespace, VC_NAMESPACE);
    assert.equal(meta.uid, undefined);
    assert.equal(meta.resourceVersion, undefined);
    const annotations = annotationsOf(created);
    assert.equal(annotations.owner, "p-ann");
    assert.equal(annotations["secret-name"], secretHostName);
    assert.equal(annotations.plain, "kept");
    for (const k of Object.keys(annotationsOf(expected)).filter((k) =>
      k.startsWith("vcluster.loft.sh/"),
    )) {
      assert.equal(annotations[k], annotationsOf(expected)[k], k);
    }
    assert.deepEqual(labelsOf(created), labelsOf(expected));
    const subsets = created.subsets as { addresses: { ip: string; targetRef: JsonObject }[] }[];
    assert.equal(subsets[0]!.addresses[0]!.ip, "172.0.0.7");
    assert.deepEqual(subsets[0]!.addresses[0]!.targetRef, {
      kind: "Pod",
      name: "db-0-x-team-x-vc",
      namespace: VC_NAMESPACE,
    });
    assert.ok(readSnapshot(created).snapshot, "the snapshot is readable");
    // The referenced Secret is copied under the translated name with vCluster-style bookkeeping.
    const ensure = plan.actions[0]!;
    assert.equal(ensure.type, "ensure");
    const secret = ensure.type === "ensure" ? ensure.object : {};
    assert.deepEqual(secret.metadata, {
      name: secretHostName,
      namespace: VC_NAMESPACE,
      annotations: {
        "vcluster.loft.sh/object-name": "db-cred",
        "vcluster.loft.sh/object-namespace": "team",
        "vcluster.loft.sh/object-uid": "s-uid",
        "vcluster.loft.sh/object-kind": "/v1, Kind=Secret",
        "vcluster.loft.sh/object-host-name": secretHostName,
        "vgate.loft.sh/source-resource-version": sourceVersion,
        "vcluster.loft.sh/object-host-namespace": VC_NAMESPACE,
      },
      labels: {
        app: "db",
        "vcluster.loft.sh/managed-by": VC_NAME,
        "vcluster.loft.sh/namespace": "team",
      },
    });
    assert.deepEqual(secret.data, { password: "c2VjcmV0" });
    assert.equal(secret.type, "Opaque");
    // Applied, the next pass finds nothing to do.
    world.apply(plan);
    assert.deepEqual(
      await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)),
      { actions: [], warnings: [] },
    );
  });

  it("a reference to a virtual object that does not exist is a warning, not an error", async () => {
    const world = new World();
    world.virtual.put(
      virtualEndpoints("team", "db", { annotations: { "secret-name": "missing" } }),
    );
    world.virtual.put(service("team", "db"));
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      plan.actions.map((a) => a.type),
      ["create"],
    );
    assert.equal(plan.warnings.length, 1);
    assert.match(
      plan.warnings[0]!,
      /Secret team\/missing \(patches\[1\]\) is referenced but does not exist in the virtual cluster/,
    );
  });

  it("the virtual object's snapshot annotation is never copied to the host", async () => {
    const world = new World();
    world.virtual.put(
      virtualEndpoints("team", "db", { annotations: { [SNAPSHOT_ANNOTATION]: "forged", a: "1" } }),
    );
    world.virtual.put(service("team", "db"));
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    const created = plan.actions[0]!.type === "create" ? plan.actions[0]!.object : {};
    assert.ok(readSnapshot(created).snapshot, "the host carries its own snapshot");
    assert.equal(annotationsOf(created)["vcluster.loft.sh/managed-annotations"], "a");
  });

  it("deletion follows the virtual object: our host copy is deleted, with its uid as the precondition", async () => {
    const world = await synced();
    const host = world.host.endpoints(hostKey().namespace, hostKey().name)!;
    world.virtual.delete({ apiVersion: "v1", kind: "Endpoints", ...key });
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(plan.actions, [
      {
        type: "delete",
        side: "host",
        ref: { apiVersion: "v1", kind: "Endpoints", ...hostKey() },
        uid: (host.metadata as JsonObject).uid,
        reason: "virtual object was deleted",
      },
    ]);
    // Also when the Service went with it (a namespace deletion), rather than leaking the copy.
    world.virtual.delete({ apiVersion: "v1", kind: "Service", ...key });
    assert.deepEqual(
      deletes(
        (await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner))).actions,
      ).length,
      1,
    );
  });

  it("a host copy deleted while the virtual object exists is created again", async () => {
    const world = await synced();
    world.host.delete({ apiVersion: "v1", kind: "Endpoints", ...hostKey() });
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      plan.actions.map((a) => [a.type, a.side]),
      [["create", "host"]],
    );
  });

  it("a host copy of an earlier virtual object (other object-uid) is deleted, and created again on the next pass", async () => {
    const world = await synced();
    const recreated = virtualEndpoints("team", "db", { annotations: { owner: "ann" } });
    world.virtual.delete({ apiVersion: "v1", kind: "Endpoints", ...key });
    world.virtual.put(recreated);
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      plan.actions.map((a) => [a.type, a.side]),
      [["delete", "host"]],
    );
    assert.match(plan.actions[0]!.reason, /object-uid differs/);
    world.apply(plan);
    const next = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      next.actions.map((a) => [a.type, a.side]),
      [["create", "host"]],
    );
  });

  it("a host object that vgate does not manage is never touched: the key fails with a clear SyncError", async () => {
    const world = new World();
    world.virtual.put(virtualEndpoints("team", "db"));
    world.virtual.put(service("team", "db"));
    // Made by someone else on the host, at the name the copy would get.
    world.host.put({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { ...hostKey() },
      subsets: [],
    });
    await assert.rejects(
      reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)),
      (err: unknown) =>
        err instanceof SyncError &&
        err.message ===
          `host endpoints ${VC_NAMESPACE}/db-x-team-x-vc exists and is not managed by vgate for this virtual cluster; not touching it (remove it, or rename the virtual Service, to let vgate sync these Endpoints)`,
    );
    // vCluster's bookkeeping for another virtual object is not ours for this key either.
    const other = translateEndpointsToHost(virtualEndpoints("team", "other"), runner.vcluster);
    world.host.put({ ...other, metadata: { ...(other.metadata as JsonObject), ...hostKey() } });
    await assert.rejects(
      reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)),
      SyncError,
    );
    // With the virtual object gone there is nothing to do, and still nothing is touched.
    world.virtual.delete({ apiVersion: "v1", kind: "Endpoints", ...key });
    assert.deepEqual(
      (await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner))).actions,
      [],
    );
  });

  // Differences test/cluster/vcluster-translation.test.ts found against vCluster v0.34.0's syncer.
  describe("as vCluster's own syncer does", () => {
    const CONTROLLED_BY = "vcluster.loft.sh/controlled-by";

    it("a virtual object another controller controls gets no host copy, and a copy is left alone", async () => {
      const world = await synced();
      const deps = world.deps(runner);
      const before = world.host.endpoints(hostKey().namespace, hostKey().name);
      const controlled: JsonObject[] = [
        { labels: { [CONTROLLED_BY]: "someone" } },
        { annotations: { [CONTROLLED_BY]: "another-syncer" } },
      ];
      for (const meta of controlled) {
        const v = world.virtual.endpoints("team", "db")!;
        world.virtual.put({ ...v, metadata: { ...(v.metadata as JsonObject), ...meta } });
        assert.deepEqual(await reconcileEndpoints(world.state(key, runner.vcluster), deps), {
          actions: [],
          warnings: [],
        });
        // Not even its deletion deletes the copy (vCluster sees no virtual object at all).
      }
      assert.deepEqual(world.host.endpoints(hostKey().namespace, hostKey().name), before);
      // Annotated as the Endpoints syncer's own: synced, the annotation copied.
      const fresh = new World();
      fresh.virtual.put(
        virtualEndpoints("team", "db", { annotations: { [CONTROLLED_BY]: "endpoints" } }),
      );
      fresh.virtual.put(service("team", "db"));
      const plan = await reconcileEndpoints(fresh.state(key, runner.vcluster), fresh.deps(runner));
      const created = plan.actions.find((a) => a.type === "create");
      assert.ok(created && created.type === "create");
      assert.equal(annotationsOf(created.object)[CONTROLLED_BY], "endpoints");
      assert.deepEqual(virtualKeyFromHost(created.object, runner.vcluster), key);
    });

    it("a host object annotated as another syncer's is not a copy of ours", async () => {
      const host = translateEndpointsToHost(virtualEndpoints("team", "db"), runner.vcluster);
      (host.metadata as { annotations: Record<string, string> }).annotations[CONTROLLED_BY] =
        "services";
      assert.equal(virtualKeyFromHost(host, runner.vcluster), null);
    });

    it("the copy names the vCluster's Service as owner; none when it does not exist; a 403 warns", async () => {
      const ownerRefsOf = async (world: World) => {
        const plan = await reconcileEndpoints(
          world.state(key, runner.vcluster),
          world.deps(runner),
        );
        const created = plan.actions.find((a) => a.type === "create");
        assert.ok(created && created.type === "create");
        return { refs: (created.object.metadata as JsonObject).ownerReferences, plan };
      };
      const world = new World();
      world.virtual.put(virtualEndpoints("team", "db"));
      world.virtual.put(service("team", "db"));
      assert.equal((await ownerRefsOf(world)).refs, undefined);
      const vcService = world.host.put(service(VC_NAMESPACE, VC_NAME));
      const uid = (vcService.metadata as { uid: string }).uid;
      assert.deepEqual((await ownerRefsOf(world)).refs, [
        { apiVersion: "v1", kind: "Service", name: VC_NAME, uid, controller: false },
      ]);
      const forbidden = new World();
      forbidden.virtual.put(virtualEndpoints("team", "db"));
      forbidden.virtual.put(service("team", "db"));
      const deps = forbidden.deps(runner);
      const denied = {
        ...deps,
        get: () => Promise.reject(new KubeError(403, "Forbidden", "services is forbidden")),
      };
      const plan = await reconcileEndpoints(forbidden.state(key, runner.vcluster), denied);
      const created = plan.actions.find((a) => a.type === "create");
      assert.ok(created && created.type === "create");
      assert.equal((created.object.metadata as JsonObject).ownerReferences, undefined);
      assert.ok(plan.warnings.some((w) => w.includes("no owner reference")));
      // Any other failure to read it fails the key, to be retried.
      const down = {
        ...deps,
        get: () => Promise.reject(new KubeError(503, "ServiceUnavailable", "")),
      };
      await assert.rejects(
        reconcileEndpoints(forbidden.state(key, runner.vcluster), down),
        KubeError,
      );
    });
  });
});
