// The sync snapshot: its bounded format, reading a missing or garbled one (absent, with a warning,
// never a crash), and what the reconciler does without one (the virtual side wins for every key,
// and the snapshot is written), with the real sandbox runner.

import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import {
  hostKeyFor,
  reconcileEndpoints,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  formatSnapshot,
  hashValue,
  readSnapshot,
  SNAPSHOT_ANNOTATION,
  type Snapshot,
} from "../../../../webhook/src/sync/controller/snapshot.js";
import { translateEndpointsToHost } from "../../../../webhook/src/sync/translate-endpoints.js";
import {
  annotationsOf,
  editAnnotations,
  service,
  startRunner,
  virtualEndpoints,
  World,
} from "./reconcile-fixtures.js";

const withSnapshot = (text: unknown): JsonObject => ({
  metadata: { annotations: { [SNAPSHOT_ANNOTATION]: text as string } },
});

describe("sync/controller/snapshot", () => {
  const snapshot: Snapshot = {
    annotations: { b: [hashValue("x"), hashValue("p-x")], a: [hashValue("1"), ""] },
    labels: { tier: ["", hashValue("gold")] },
    subsets: [hashValue([]), hashValue([])],
    config: hashValue({}),
  };

  it("round-trips, and the text is canonical (sorted keys), so equal snapshots are equal strings", () => {
    const text = formatSnapshot(snapshot);
    assert.deepEqual(readSnapshot(withSnapshot(text)), { snapshot });
    const reordered = {
      ...snapshot,
      annotations: { a: snapshot.annotations.a!, b: snapshot.annotations.b! },
    };
    assert.equal(formatSnapshot(reordered), text);
    assert.match(
      text,
      /^\{"v":1,"c":"[\w-]{11}","s":\["[\w-]{11}","[\w-]{11}"\],"a":\{"a":\["[\w-]{11}",""\],"b":/,
    );
  });

  it("is bounded: keys in the clear and two 11-character hashes per key, never the values", () => {
    const big = "v".repeat(100_000);
    const s: Snapshot = {
      ...snapshot,
      annotations: { "example.com/big": [hashValue(big), hashValue(`p-${big}`)] },
    };
    const text = formatSnapshot(s);
    assert.ok(text.length < 150, `${text.length} bytes`);
    assert.ok(text.includes('"example.com/big"'));
    assert.ok(!text.includes("vvvv"));
  });

  it("no annotation is no snapshot, without a warning", () => {
    assert.deepEqual(readSnapshot({ metadata: {} }), { snapshot: null });
    assert.deepEqual(readSnapshot({}), { snapshot: null });
  });

  for (const [what, text] of [
    ["not JSON", "{oops"],
    ["another format version", JSON.stringify({ ...JSON.parse(formatSnapshot(snapshot)), v: 2 })],
    ["a hash of the wrong shape", formatSnapshot({ ...snapshot, config: "short" })],
    [
      "a pair of three",
      JSON.stringify({ ...JSON.parse(formatSnapshot(snapshot)), a: { k: ["", "", ""] } }),
    ],
    ["a JSON string", '"text"'],
    ["null", "null"],
    ["a number instead of a string", 7],
  ] as const) {
    it(`a garbled snapshot (${what}) is treated as absent, with a warning`, () => {
      const read = readSnapshot(withSnapshot(text));
      assert.equal(read.snapshot, null);
      assert.match(
        read.warning ?? "",
        /vgate\.loft\.sh\/sync-snapshot cannot be read; it is treated as absent/,
      );
    });
  }
});

describe("sync/controller/reconcile without a snapshot", function () {
  this.timeout(60_000);
  const PATCHES = [
    {
      path: 'metadata.annotations["owner"]',
      expression: '"p-" + value',
      reverseExpression: "value.slice(2)",
    },
  ];
  let runner: Awaited<ReturnType<typeof startRunner>>;
  before(async () => {
    runner = await startRunner(PATCHES);
  });
  after(async () => {
    await runner?.close();
  });

  const key = { namespace: "team", name: "db" };

  /** A host copy as vCluster itself made it: translated and patched, no snapshot. */
  function vclusterMade(
    world: World,
    virtual: JsonObject,
    hostAnnotations: Record<string, string | null>,
  ): void {
    const host = translateEndpointsToHost(virtual, runner.vcluster);
    editAnnotations(host, hostAnnotations);
    world.host.put(host);
  }

  it("the first sync of a host copy vCluster made: the virtual side wins for every key, host-only keys stay, the snapshot is written", async () => {
    const world = new World();
    const virtual = world.virtual.put(
      virtualEndpoints("team", "db", { annotations: { owner: "ann", keep: "v" } }),
    );
    world.virtual.put(service("team", "db"));
    // vCluster copied `gone` from the virtual object earlier (managed-annotations lists it); the host
    // edited owner and keep, and a host controller added `host-only`.
    vclusterMade(world, virtual, {
      owner: "p-hal",
      keep: "h",
      gone: "old",
      "host-only": "h",
      "vcluster.loft.sh/managed-annotations": "gone\nkeep\nowner",
    });
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      plan.actions.map((a) => `${a.type} ${a.side}`),
      ["update host"],
    );
    assert.deepEqual(plan.warnings, []);
    world.apply(plan);
    const hostKey = hostKeyFor(key, runner.vcluster);
    const host = world.host.endpoints(hostKey.namespace, hostKey.name)!;
    const a = annotationsOf(host);
    assert.equal(a.owner, "p-ann");
    assert.equal(a.keep, "v");
    assert.equal(Object.hasOwn(a, "gone"), false);
    assert.equal(a["host-only"], "h");
    assert.ok(readSnapshot(host).snapshot, "written");
    assert.deepEqual(annotationsOf(world.virtual.endpoints("team", "db")), {
      owner: "ann",
      keep: "v",
    });
    assert.deepEqual(
      (await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner))).actions,
      [],
    );
    // From now on a host edit of the host-only key flows back.
    editAnnotations(host, { "host-only": "h2" });
    world.host.put(host);
    const back = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.deepEqual(
      back.actions.map((x) => `${x.type} ${x.side}`),
      ["update virtual", "update host"],
    );
  });

  it("a garbled snapshot: a warning, the virtual side wins, and it is rewritten; never a crash", async () => {
    const world = new World();
    const virtual = world.virtual.put(
      virtualEndpoints("team", "db", { annotations: { owner: "ann" } }),
    );
    world.virtual.put(service("team", "db"));
    vclusterMade(world, virtual, { owner: "p-hal", [SNAPSHOT_ANNOTATION]: "{garbled" });
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
    assert.equal(plan.warnings.length, 1);
    assert.match(
      plan.warnings[0]!,
      /host endpoints vc-ns\/db-x-team-x-vc: annotation vgate\.loft\.sh\/sync-snapshot cannot be read/,
    );
    world.apply(plan);
    const hostKey = hostKeyFor(key, runner.vcluster);
    const host = world.host.endpoints(hostKey.namespace, hostKey.name)!;
    assert.equal(annotationsOf(host).owner, "p-ann");
    assert.ok(readSnapshot(host).snapshot);
    assert.deepEqual(
      await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)),
      { actions: [], warnings: [] },
    );
  });

  it("a new patch config re-runs expression on every key (the snapshot records the config)", async () => {
    const world = new World();
    world.virtual.put(virtualEndpoints("team", "db", { annotations: { owner: "ann" } }));
    world.virtual.put(service("team", "db"));
    world.apply(await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner)));
    const hostKey = hostKeyFor(key, runner.vcluster);
    const host = world.host.endpoints(hostKey.namespace, hostKey.name)!;
    editAnnotations(host, { owner: "p-hal" });
    world.host.put(host);
    const changed = {
      ...world.deps(runner),
      // Another config with the same patches (the runner has them): only its hash differs.
      vcluster: {
        ...runner.vcluster,
        config: { ...(runner.vcluster.config as object), reloaded: true },
      },
    };
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), changed);
    assert.deepEqual(
      plan.actions.map((a) => `${a.type} ${a.side}`),
      ["update host"],
    );
    world.apply(plan);
    assert.equal(
      annotationsOf(world.host.endpoints(hostKey.namespace, hostKey.name)).owner,
      "p-ann",
    );
    assert.deepEqual(
      (await reconcileEndpoints(world.state(key, runner.vcluster), changed)).actions,
      [],
    );
  });
});
