// Property: for random annotation and label edits on either side, with an inverse expression pair
// ('"p-" + value' / 'value.slice(2)'), repeated reconcile passes reach a fixed point (a pass that
// plans nothing) within 2 passes; there both sides agree key by key, and on a conflict the virtual
// side's value wins. The real sandbox runner; plain object maps as the clusters.

import assert from "node:assert/strict";
import fc from "fast-check";
import { after, before, describe, it } from "mocha";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
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
  virtualEndpoints,
  World,
} from "./reconcile-fixtures.js";

const PATCHES = [
  {
    path: 'metadata.annotations["owner"]',
    expression: '"p-" + value',
    reverseExpression: "value.slice(2)",
  },
  {
    path: 'metadata.labels["tier"]',
    expression: '"p-" + value',
    reverseExpression: "value.slice(2)",
  },
];
const PATCHED = new Set(["owner", "tier"]);
const forward = (key: string, value: string) => (PATCHED.has(key) ? `p-${value}` : value);

type Map = "annotations" | "labels";
const KEYS: Record<Map, string[]> = { annotations: ["owner", "a", "b"], labels: ["tier", "x"] };

interface Edit {
  side: "virtual" | "host";
  map: Map;
  key: string;
  /** null: delete. A host value of a patched key is always an `expression` result ("p-…"). */
  value: string | null;
}

const value = fc.option(fc.constantFrom("1", "2", "xy", ""), { nil: null, freq: 4 });
const edit: fc.Arbitrary<Edit> = fc
  .record({
    side: fc.constantFrom("virtual" as const, "host" as const),
    map: fc.constantFrom("annotations" as const, "labels" as const),
    pick: fc.nat(),
    value,
  })
  .map(({ side, map, pick, value }) => {
    const key = KEYS[map][pick % KEYS[map].length]!;
    const v = value !== null && side === "host" ? forward(key, value) : value;
    return { side, map, key, value: v };
  });

const initial = fc.record({
  annotations: fc.dictionary(fc.constantFrom(...KEYS.annotations), fc.constantFrom("1", "2", "z")),
  labels: fc.dictionary(fc.constantFrom(...KEYS.labels), fc.constantFrom("1", "2", "z")),
});

type Runner = Awaited<ReturnType<typeof startRunner>>;
const key = { namespace: "team", name: "db" };

describe("sync/controller/reconcile: convergence (property)", function () {
  this.timeout(120_000);
  let runner: Runner;
  before(async () => {
    runner = await startRunner(PATCHES);
  });
  after(async () => {
    await runner?.close();
  });

  /** Runs passes until one plans nothing; returns how many passes planned something. */
  async function converge(world: World): Promise<number> {
    for (let passes = 0; passes < 5; passes++) {
      const plan = await reconcileEndpoints(world.state(key, runner.vcluster), world.deps(runner));
      if (plan.actions.length === 0) return passes;
      world.apply(plan);
    }
    return Infinity;
  }

  type Values = Record<Map, Record<string, string | undefined>>;
  const valuesOf = (o: JsonObject): Values => ({
    annotations: { ...annotationsOf(o) },
    labels: { ...labelsOf(o) },
  });

  /** Applies the edits; returns the keys each side really changed, with the virtual side's values. */
  function applyEdits(world: World, edits: Edit[]): { virtual: Values; changed: Set<string> } {
    const hostKey = hostKeyFor(key, runner.vcluster);
    const objects = {
      virtual: world.virtual.endpoints("team", "db")!,
      host: world.host.endpoints(hostKey.namespace, hostKey.name)!,
    };
    const before = { virtual: valuesOf(objects.virtual), host: valuesOf(objects.host) };
    for (const e of edits) {
      (e.map === "annotations" ? editAnnotations : editLabels)(objects[e.side], {
        [e.key]: e.value,
      });
    }
    world.virtual.put(objects.virtual);
    world.host.put(objects.host);
    const after = { virtual: valuesOf(objects.virtual), host: valuesOf(objects.host) };
    const changed = new Set<string>();
    for (const map of ["annotations", "labels"] as const) {
      for (const k of KEYS[map]) {
        const v = before.virtual[map][k] !== after.virtual[map][k];
        const h = before.host[map][k] !== after.host[map][k];
        if (v && h) changed.add(`${map}/${k}`);
      }
    }
    return { virtual: after.virtual, changed };
  }

  function assertAgree(world: World, edited: { virtual: Values; changed: Set<string> }): void {
    const hostKey = hostKeyFor(key, runner.vcluster);
    const v = valuesOf(world.virtual.endpoints("team", "db")!);
    const h = valuesOf(world.host.endpoints(hostKey.namespace, hostKey.name)!);
    for (const map of ["annotations", "labels"] as const) {
      for (const k of KEYS[map]) {
        const vv = v[map][k];
        const hv = h[map][k];
        assert.equal(
          hv,
          vv === undefined ? undefined : forward(k, vv),
          `${map} ${k}: host ${hv}, virtual ${vv}`,
        );
        // Both sides changed the key: the virtual side's value wins.
        if (edited.changed.has(`${map}/${k}`)) {
          assert.equal(vv, edited.virtual[map][k], `${map} ${k}: the virtual side wins`);
        }
      }
    }
  }

  it("random edits on both sides converge within 2 passes, both sides agree, and the virtual side wins conflicts", async () => {
    await fc.assert(
      fc.asyncProperty(
        initial,
        fc.array(fc.array(edit, { maxLength: 6 }), { minLength: 1, maxLength: 2 }),
        async (start, rounds) => {
          const world = new World();
          world.virtual.put(
            virtualEndpoints(
              "team",
              "db",
              start as { annotations: Record<string, string>; labels: Record<string, string> },
            ),
          );
          world.virtual.put(service("team", "db") as JsonObject);
          assert.ok((await converge(world)) <= 1, "create settles in one pass");
          for (const edits of rounds) {
            const edited = applyEdits(world, edits);
            const passes = await converge(world);
            assert.ok(passes <= 1, `the second pass plans nothing (${passes} passes wrote)`);
            assertAgree(world, edited);
          }
        },
      ),
      { numRuns: 40, seed: 20261125 },
    );
  });
});
