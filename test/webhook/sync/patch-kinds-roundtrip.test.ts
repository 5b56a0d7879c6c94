// Round trips on every kind, through the real sandbox (docs/decisions.md KND-2): for each
// sync.toHost row of docs/patches.md's table of kinds, the example's reverseExpression undoes its
// expression on any string, run as the sync runs them (startPatchRunner, one set per kind, with
// the kind's keywords); and a sync.fromHost kind runs its one keyword host → virtual and nothing
// virtual → host.

import assert from "node:assert/strict";
import fc from "fast-check";
import { after, before, describe, it } from "mocha";
import type { LoadedVCluster, PatchSet } from "../../../webhook/src/config/loaded-vcluster.js";
import {
  customResourceKind,
  PATCH_KINDS,
  type PatchKind,
} from "../../../webhook/src/config/patch-kinds.js";
import { parsePath } from "../../../webhook/src/patches/path.js";
import type { JsonObject, PatchSpec } from "../../../webhook/src/patches/types.js";
import { applyGuardedPatches } from "../../../webhook/src/sync/guarded-patch.js";
import {
  startPatchRunner,
  type StartedPatchRunner,
} from "../../../webhook/src/sync/patch-runner.js";
import { tableRows, type Row } from "../../support/patch-kinds-table.js";

type Obj = JsonObject;

function kindOf(row: Row): PatchKind {
  if (row.key.startsWith("customResources.")) {
    return customResourceKind(row.side, row.key.slice("customResources.".length), true);
  }
  return PATCH_KINDS.find((k) => k.section === row.side && k.key === row.key)!;
}

function keysOf(path: string): string[] {
  return parsePath(path).map((s) => (s.kind === "key" ? s.key : String(s.kind)));
}

function objectWith(path: string, value: string): Obj {
  const object: Obj = { apiVersion: "v1", kind: "Any", metadata: { name: "x", namespace: "a" } };
  const keys = keysOf(path);
  let at = object;
  for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Obj;
  at[keys.at(-1)!] = value;
  return object;
}

function valueAt(object: Obj, path: string): unknown {
  return keysOf(path).reduce<unknown>((at, key) => (at as Obj | undefined)?.[key], object);
}

describe("patches on every kind: round trips through the sandbox (fast-check)", function () {
  this.timeout(120_000);
  const rows = tableRows();
  const sets: PatchSet[] = rows.map((row) => ({
    kind: kindOf(row),
    enabled: true,
    patches: [row.example as unknown as PatchSpec],
  }));
  let runner: StartedPatchRunner;

  before(async () => {
    const loaded: LoadedVCluster = {
      vcluster: { name: "vc", namespace: "vc-ns", config: {} },
      enabled: true,
      patches: [],
      patchSets: sets,
    };
    runner = await startPatchRunner(loaded, { workers: 1, deadlineMs: 2000 });
  });
  after(async () => runner.close());

  const pass = async (kind: PatchKind, direction: "toHost" | "toVirtual", object: Obj) => {
    const run = runner.runFor(kind);
    assert.ok(run, `no runner for ${kind.key}`);
    const r = await applyGuardedPatches(run, object, {
      direction,
      hostObjectJson: direction === "toVirtual" ? JSON.stringify(object) : "null",
      virtualObjectJson: direction === "toHost" ? JSON.stringify(object) : "null",
      explain: true,
    });
    return r;
  };

  for (const [i, row] of rows.entries()) {
    const kind = sets[i]!.kind;
    const path = row.example["path"] as string;
    if (row.side === "toHost") {
      it(`sync.toHost.${row.key}: reverseExpression ∘ expression is the identity`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.string({ maxLength: 40 }), async (value) => {
            const host = await pass(kind, "toHost", objectWith(path, value));
            assert.equal(host.explain[0]?.action, "expression");
            const back = await pass(kind, "toVirtual", host.object);
            assert.equal(back.explain[0]?.action, "reverseExpression");
            assert.equal(valueAt(back.object, path), value);
          }),
          { numRuns: 50 },
        );
      });
      continue;
    }
    it(`sync.fromHost.${row.key}: runs ${kind.toVirtual!} host → virtual, nothing the other way`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 40 }), async (value) => {
          const down = await pass(kind, "toVirtual", objectWith(path, value));
          assert.equal(down.explain[0]?.action, kind.toVirtual);
          const source = row.example[kind.toVirtual!] as string;
          const plain = new Function("value", `return (${source});`) as (v: string) => unknown;
          assert.equal(valueAt(down.object, path), plain(value));
          const up = await pass(kind, "toHost", objectWith(path, value));
          assert.equal(up.explain[0]?.action, "skip");
          assert.equal(valueAt(up.object, path), value);
        }),
        { numRuns: 20 },
      );
    });
  }
});
