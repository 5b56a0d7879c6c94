// reconcileEndpoints on update: subsets follow the virtual object; annotations and labels sync both
// ways against the snapshot, through `expression` / `reverseExpression` on change sets only; only
// real changes are written; references host → virtual are imported. The real sandbox runner, and
// two plain object maps as the clusters (reconcile-fixtures.ts).

import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import { convertLabelKeyWithPrefix } from "../../../../webhook/src/patches/host-names.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import type { SyncPlan } from "../../../../webhook/src/sync/controller/contracts.js";
import {
  hostKeyFor,
  reconcileEndpoints,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  annotationsOf,
  editAnnotations,
  editLabels,
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
  { path: 'metadata.annotations["one-way"]', expression: "value.toUpperCase()" },
  {
    path: 'metadata.labels["tier"]',
    expression: '"p-" + value',
    reverseExpression: "value.slice(2)",
  },
  { path: 'metadata.annotations["secret-name"]', reference: { apiVersion: "v1", kind: "Secret" } },
  { path: "subsets[*].addresses[*].ip", expression: 'value.replace(/^10\\./, "172.")' },
];

type Runner = Awaited<ReturnType<typeof startRunner>>;
const key = { namespace: "team", name: "db" };
const RELEASE_HOST_KEY = convertLabelKeyWithPrefix("vcluster.loft.sh/label", "release", VC_NAME);

describe("sync/controller/reconcile: update", function () {
  this.timeout(60_000);
  let runner: Runner;
  before(async () => {
    runner = await startRunner(PATCHES);
  });
  after(async () => {
    await runner?.close();
  });

  const hostKey = () => hostKeyFor(key, runner.vcluster);

  async function pass(world: World): Promise<SyncPlan> {
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    world.apply(plan);
    return plan;
  }

  async function synced(
    annotations: Record<string, string>,
    labels: Record<string, string> = {},
  ): Promise<World> {
    const world = new World();
    world.virtual.put(virtualEndpoints("team", "db", { annotations, labels }));
    world.virtual.put(service("team", "db"));
    await pass(world);
    assert.deepEqual((await pass(world)).actions, [], "synced and settled");
    return world;
  }

  const host = (world: World) => world.host.endpoints(hostKey().namespace, hostKey().name)!;
  const virtual = (world: World) => world.virtual.endpoints("team", "db")!;
  const kinds = (plan: SyncPlan) => plan.actions.map((a) => `${a.type} ${a.side}`);

  function editVirtual(world: World, edit: (o: JsonObject) => void): void {
    const v = virtual(world);
    edit(v);
    world.virtual.put(v);
  }

  function editHost(world: World, edit: (o: JsonObject) => void): void {
    const h = host(world);
    edit(h);
    world.host.put(h);
  }

  it("a virtual edit goes to the host through expression on the change set only, in one host write", async () => {
    const world = await synced({ owner: "ann", other: "1" });
    editVirtual(world, (v) => editAnnotations(v, { other: "2" }));
    const plan = await pass(world);
    assert.deepEqual(kinds(plan), ["update host"]);
    // `owner` was not in the change set: its host value is not transformed a second time.
    assert.equal(annotationsOf(host(world)).owner, "p-ann");
    assert.equal(annotationsOf(host(world)).other, "2");
    editVirtual(world, (v) => editAnnotations(v, { owner: "bob" }));
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.equal(annotationsOf(host(world)).owner, "p-bob");
    assert.deepEqual((await pass(world)).actions, []);
  });

  it('a virtual deletion passes through as a deletion, never as "p-null"', async () => {
    const world = await synced({ owner: "ann", keep: "k" });
    editVirtual(world, (v) => editAnnotations(v, { owner: null }));
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.equal(Object.hasOwn(annotationsOf(host(world)), "owner"), false);
    assert.equal(annotationsOf(host(world))["vcluster.loft.sh/managed-annotations"], "keep");
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("a host edit flows back through reverseExpression; the host write carries only the snapshot; then nothing", async () => {
    const world = await synced({ owner: "ann" });
    const before = host(world);
    editHost(world, (h) => editAnnotations(h, { owner: "p-bob", "host-made": "x" }));
    const plan = await pass(world);
    assert.deepEqual(kinds(plan), ["update virtual", "update host"]);
    assert.deepEqual(annotationsOf(virtual(world)), { owner: "bob", "host-made": "x" });
    const after = host(world);
    assert.equal(annotationsOf(after).owner, "p-bob");
    assert.deepEqual(after.subsets, before.subsets);
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("a host write lost to a conflict after the virtual write: the next pass converges, the virtual side winning", async () => {
    const world = await synced({ owner: "ann" });
    editHost(world, (h) => editAnnotations(h, { owner: "p-bob" }));
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(kinds(plan), ["update virtual", "update host"]);
    // The virtual write lands; the host write fails (409) because the host moved on meanwhile.
    world.apply({ ...plan, actions: plan.actions.slice(0, 1) });
    editHost(world, (h) => editAnnotations(h, { unrelated: "u" }));
    const retry = await pass(world);
    assert.deepEqual(kinds(retry), ["update virtual", "update host"]);
    assert.equal(annotationsOf(virtual(world)).owner, "bob");
    assert.equal(annotationsOf(virtual(world)).unrelated, "u");
    assert.equal(annotationsOf(host(world)).owner, "p-bob");
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("a host deletion flows back as a deletion", async () => {
    const world = await synced({ owner: "ann", keep: "k" });
    editHost(world, (h) => editAnnotations(h, { owner: null }));
    assert.deepEqual(kinds(await pass(world)), ["update virtual", "update host"]);
    assert.deepEqual(annotationsOf(virtual(world)), { keep: "k" });
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("the virtual side wins when both sides changed a key", async () => {
    const world = await synced({ owner: "ann" });
    editVirtual(world, (v) => editAnnotations(v, { owner: "vic" }));
    editHost(world, (h) => editAnnotations(h, { owner: "p-hal" }));
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.equal(annotationsOf(host(world)).owner, "p-vic");
    assert.equal(annotationsOf(virtual(world)).owner, "vic");
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("a host edit of a field without reverseExpression is dropped: no virtual write, and no host write", async () => {
    const world = await synced({ "one-way": "abc" });
    assert.equal(annotationsOf(host(world))["one-way"], "ABC");
    editHost(world, (h) => editAnnotations(h, { "one-way": "XYZ" }));
    assert.deepEqual((await pass(world)).actions, []);
    assert.equal(annotationsOf(virtual(world))["one-way"], "abc");
    assert.equal(annotationsOf(host(world))["one-way"], "XYZ");
  });

  it("vCluster's bookkeeping is asserted again on the host and never flows back", async () => {
    const world = await synced({ owner: "ann" });
    editHost(world, (h) =>
      editAnnotations(h, {
        "vcluster.loft.sh/object-uid": annotationsOf(h)["vcluster.loft.sh/object-uid"]!,
        "vcluster.loft.sh/managed-annotations": "forged",
        "vcluster.loft.sh/extra": "host-only",
      }),
    );
    const plan = await pass(world);
    assert.deepEqual(kinds(plan), ["update host"]);
    assert.equal(annotationsOf(host(world))["vcluster.loft.sh/managed-annotations"], "owner");
    assert.deepEqual(annotationsOf(virtual(world)), { owner: "ann" });
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("labels: both ways through VirtualLabel; release, managed-by, namespace and controlled-by never flow back", async () => {
    const world = await synced({}, { tier: "gold", release: "r1", app: "db" });
    const hostLabels = labelsOf(host(world));
    assert.equal(hostLabels.tier, "p-gold");
    assert.equal(hostLabels[RELEASE_HOST_KEY], "r1");
    assert.equal(hostLabels["vcluster.loft.sh/managed-by"], VC_NAME);
    editHost(world, (h) =>
      editLabels(h, {
        tier: "p-silver",
        team: "blue",
        [RELEASE_HOST_KEY]: "r2",
        release: "host",
        "vcluster.loft.sh/namespace": "forged",
      }),
    );
    assert.deepEqual(kinds(await pass(world)), ["update virtual", "update host"]);
    assert.deepEqual(labelsOf(virtual(world)), {
      tier: "silver",
      team: "blue",
      release: "r1",
      app: "db",
    });
    assert.equal(
      labelsOf(host(world))["vcluster.loft.sh/namespace"],
      "team",
      "scoping label re-asserted",
    );
    assert.deepEqual((await pass(world)).actions, []);
    editVirtual(world, (v) => editLabels(v, { release: "r3", app: null }));
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.equal(labelsOf(host(world))[RELEASE_HOST_KEY], "r3");
    assert.equal(Object.hasOwn(labelsOf(host(world)), "app"), false);
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("subsets follow the virtual object: host drift is overwritten, virtual changes are patched", async () => {
    const world = await synced({});
    const synced0 = host(world).subsets;
    editHost(world, (h) => {
      h.subsets = [{ addresses: [{ ip: "192.168.9.9" }], ports: [{ port: 1 }] }];
    });
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.deepEqual(host(world).subsets, synced0);
    editVirtual(world, (v) => {
      v.subsets = [{ addresses: [{ ip: "10.1.2.3" }], ports: [{ port: 80 }] }];
    });
    assert.deepEqual(kinds(await pass(world)), ["update host"]);
    assert.deepEqual(host(world).subsets, [
      { addresses: [{ ip: "172.1.2.3" }], ports: [{ port: 80 }] },
    ]);
    assert.deepEqual(virtual(world).subsets, [
      { addresses: [{ ip: "10.1.2.3" }], ports: [{ port: 80 }] },
    ]);
    assert.deepEqual((await pass(world)).actions, []);
  });

  it("a host-side reference is resolved back, and a host object with no virtual counterpart is imported", async () => {
    const world = await synced({ "secret-name": "a" });
    // A Secret a host-side controller made next to the host copy: not vgate's.
    world.host.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "host-made",
        namespace: VC_NAMESPACE,
        uid: "h-1",
        resourceVersion: "3",
        labels: { from: "host" },
      },
      data: { k: "dg==" },
    });
    editHost(world, (h) => editAnnotations(h, { "secret-name": "host-made" }));
    const plan = await pass(world);
    assert.deepEqual(kinds(plan), ["ensure virtual", "update virtual", "update host"]);
    assert.equal(annotationsOf(virtual(world))["secret-name"], "host-made");
    const imported = world.virtual.get({
      apiVersion: "v1",
      kind: "Secret",
      namespace: "team",
      name: "host-made",
    })!;
    assert.deepEqual(annotationsOf(imported), {
      "vcluster.loft.sh/object-imported": "true",
      "vcluster.loft.sh/object-name": "host-made",
      "vcluster.loft.sh/object-namespace": VC_NAMESPACE,
    });
    assert.deepEqual(labelsOf(imported), { from: "host" });
    assert.deepEqual(imported.data, { k: "dg==" });
    // The host annotation still names the host object; the next pass finds nothing to do.
    assert.equal(annotationsOf(host(world))["secret-name"], "host-made");
    assert.deepEqual((await pass(world)).actions, []);
    // A host copy of a virtual Secret resolves to that Secret's virtual name; it exists: no import.
    world.virtual.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db-cred", namespace: "team" },
      data: {},
    });
    editVirtual(world, (v) => editAnnotations(v, { "secret-name": "db-cred" }));
    const copy = await pass(world);
    assert.deepEqual(kinds(copy), ["ensure host", "update host"]);
    const hostSecretName = annotationsOf(host(world))["secret-name"]!;
    assert.match(hostSecretName, /^v[0-9a-z]{13}$/);
    editHost(world, (h) => editAnnotations(h, { owner: "p-x" }));
    const back = await pass(world);
    assert.deepEqual(kinds(back), ["update virtual", "update host"]);
    assert.equal(annotationsOf(virtual(world))["secret-name"], "db-cred");
    assert.equal(annotationsOf(virtual(world)).owner, "x");
  });

  it("a pass with nothing to do runs no patch at all", async () => {
    const world = await synced({ owner: "ann" }, { tier: "gold" });
    let runs = 0;
    const deps = world.deps(runner);
    const counted = {
      ...deps,
      run: (job: Parameters<typeof deps.run>[0]) => (runs++, deps.run(job)),
    };
    assert.deepEqual(await reconcileEndpoints(world.state(key, runner.vcluster), counted), {
      actions: [],
      warnings: [],
    });
    assert.equal(runs, 0);
    editVirtual(world, (v) => editAnnotations(v, { owner: "bob" }));
    await reconcileEndpoints(world.state(key, runner.vcluster), counted);
    assert.equal(runs, 1, "one toHost run on the change set");
  });

  it("deps.get and deps.list are used only when references need them", async () => {
    const world = await synced({ owner: "ann" });
    world.reads = 0;
    editVirtual(world, (v) => editAnnotations(v, { owner: "bob" }));
    editHost(world, (h) => editAnnotations(h, { other: "o" }));
    await pass(world);
    // One LIST of the reference kind for the host → virtual run; no GET (no reference changed).
    assert.equal(world.reads, 1);
  });
});
