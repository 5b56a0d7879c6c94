// The reconciler asks the sandbox only when some patch acts in the direction it syncs: with
// `patches: []` a whole create / flow-back / update cycle makes no sandbox call and plans what the
// sandbox would have; an `expression` without `reverseExpression` still acts going back (it drops
// its field), so that direction still runs.

import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import type { PatchSpec } from "../../../../webhook/src/patches/types.js";
import type { ReconcileDeps } from "../../../../webhook/src/sync/controller/contracts.js";
import {
  hostKeyFor,
  reconcileEndpoints,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  annotationsOf,
  editAnnotations,
  service,
  startRunner,
  vclusterFor,
  virtualEndpoints,
  World,
} from "./reconcile-fixtures.js";

const key = { namespace: "team", name: "db" };

type Runner = Awaited<ReturnType<typeof startRunner>>;

/** Runs one create, one host edit flowing back and one virtual edit; counts sandbox calls per direction. */
async function cycle(runner: {
  run: ReconcileDeps["run"];
  vcluster: ReturnType<typeof vclusterFor>;
}) {
  const calls = { toHost: 0, toVirtual: 0 };
  const counted = {
    vcluster: runner.vcluster,
    run: ((job) => {
      calls[job.direction]++;
      return runner.run(job);
    }) as ReconcileDeps["run"],
  };
  const world = new World();
  world.virtual.put(virtualEndpoints("team", "db", { annotations: { owner: "ann", keep: "k" } }));
  world.virtual.put(service("team", "db"));
  const pass = async () => {
    const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(counted));
    world.apply(plan);
    return plan;
  };
  await pass();
  const at = hostKeyFor(key, runner.vcluster);
  const host = world.host.endpoints(at.namespace, at.name)!;
  editAnnotations(host, { owner: "bob" });
  world.host.put(host);
  await pass();
  const virtual = world.virtual.endpoints("team", "db")!;
  editAnnotations(virtual, { keep: "k2" });
  world.virtual.put(virtual);
  await pass();
  const quiet = await pass();
  return {
    calls,
    quiet,
    virtual: annotationsOf(world.virtual.endpoints("team", "db")),
    host: annotationsOf(world.host.endpoints(at.namespace, at.name)),
  };
}

describe("sync/controller/reconcile: sandbox use", function () {
  this.timeout(60_000);
  const runners: Runner[] = [];
  const start = async (patches: PatchSpec[]) => {
    const r = await startRunner(patches);
    runners.push(r);
    return r;
  };
  let empty: Runner;
  before(async () => {
    empty = await start([]);
  });
  after(async () => {
    for (const r of runners) await r.close();
  });

  it("makes no sandbox call with patches: [], and syncs both ways as the sandbox does", async () => {
    const { calls, quiet, virtual, host } = await cycle(empty);
    assert.deepEqual(calls, { toHost: 0, toVirtual: 0 });
    assert.equal(virtual["owner"], "bob", "the host edit flowed back");
    assert.equal(host["keep"], "k2", "the virtual edit reached the host");
    assert.deepEqual(quiet.actions, [], "and the next pass plans nothing");
    // The same cycle through the sandbox, with a patch that matches nothing here.
    const unrelated = await start([
      {
        path: 'metadata.annotations["unrelated"]',
        expression: "value",
        reverseExpression: "value",
      },
    ]);
    const sandboxed = await cycle(unrelated);
    assert.ok(sandboxed.calls.toHost > 0 && sandboxed.calls.toVirtual > 0);
    const synced = (a: Record<string, string>) => ({ owner: a["owner"], keep: a["keep"] });
    assert.deepEqual(synced(virtual), synced(sandboxed.virtual));
    assert.deepEqual(synced(host), synced(sandboxed.host));
    assert.deepEqual(sandboxed.quiet.actions, []);
  });

  it("still runs a direction in which a patch acts", async () => {
    const oneWay = await start([{ path: 'metadata.annotations["owner"]', expression: "value" }]);
    const { calls, virtual } = await cycle(oneWay);
    assert.ok(calls.toHost >= 2, `toHost calls: ${calls.toHost}`);
    assert.ok(calls.toVirtual >= 1, `toVirtual calls: ${calls.toVirtual}`);
    // Without reverseExpression the field is dropped from what goes back
    // (docs/reference.md#patch-directions): the host edit never reaches the virtual object.
    assert.equal(virtual["owner"], "ann");
  });
});
