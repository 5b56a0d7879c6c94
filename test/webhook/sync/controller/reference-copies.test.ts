// A host copy of a referenced object follows its virtual source (reference-copies.ts): rewritten
// when the source changes, deleted with it, and never anything but vgate's own copy touched.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { referenceHostLocation } from "../../../../webhook/src/patches/reference.js";
import type { JsonObject, VClusterInfo } from "../../../../webhook/src/patches/types.js";
import type { ReconcileDeps } from "../../../../webhook/src/sync/controller/contracts.js";
import { scopeOf } from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  copySourceOf,
  isReferenceKey,
  parseReferenceKey,
  reconcileReferenceCopy,
  referenceKey,
  type ReferencedObject,
} from "../../../../webhook/src/sync/controller/reference-copies.js";
import {
  hostCopyOf,
  IMPORTED_ANNOTATION,
  SOURCE_VERSION_ANNOTATION,
} from "../../../../webhook/src/sync/controller/references.js";
import { annotationsOf, editAnnotations, vclusterFor, World } from "./reconcile-fixtures.js";

const SOURCE: ReferencedObject = {
  apiVersion: "v1",
  kind: "Secret",
  namespace: "team",
  name: "db",
};

function secret(data: string, extra: Record<string, string> = {}): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: SOURCE.name,
      namespace: SOURCE.namespace,
      annotations: { note: "n", ...extra },
    },
    type: "Opaque",
    data: { password: Buffer.from(data).toString("base64") },
  };
}

/** A world with the virtual Secret and vgate's host copy of it, as an Endpoints sync made it. */
function world(vc: VClusterInfo): { world: World; deps: ReconcileDeps; at: ReturnType<typeof at> } {
  const w = new World();
  const virtual = w.virtual.put(secret("one"));
  const where = at(vc);
  w.host.put(hostCopyOf(virtual, reference(vc), scopeOf(vc)));
  // The reconcile reads only; it runs no patch.
  const deps = w.deps({ vcluster: vc, run: () => Promise.reject(new Error("no patches")) });
  return { world: w, deps, at: where };
}

const at = (vc: VClusterInfo) => referenceHostLocation(SOURCE.name, SOURCE.namespace, vc);

function reference(vc: VClusterInfo) {
  return {
    patchIndex: 0,
    direction: "toHost" as const,
    apiVersion: "v1",
    kind: "Secret",
    virtual: { namespace: SOURCE.namespace, name: SOURCE.name },
    host: at(vc),
  };
}

const hostRef = (vc: VClusterInfo) => ({ apiVersion: "v1", kind: "Secret", ...at(vc) });
const dataOf = (o: JsonObject | null) => (o?.["data"] as Record<string, string> | undefined) ?? {};

describe("sync/controller/reference-copies", () => {
  const vc = vclusterFor([]);

  describe("queue keys", () => {
    it("round-trips a referenced object through its key, and tells it from an Endpoints key", () => {
      for (const r of [
        SOURCE,
        { apiVersion: "example.com/v1", kind: "Thing", namespace: "a", name: "b.c" },
      ]) {
        const key = referenceKey(r);
        assert.ok(isReferenceKey(key));
        assert.deepEqual(parseReferenceKey(key), r);
      }
      assert.equal(isReferenceKey("team/db"), false);
      assert.equal(parseReferenceKey("team/db"), null);
      assert.equal(parseReferenceKey("ref:v1:Secret"), null);
    });
  });

  describe("copySourceOf", () => {
    it("names the source of vgate's copy", () => {
      const { world: w } = world(vc);
      assert.deepEqual(copySourceOf(w.host.get(hostRef(vc))!, vc), SOURCE);
    });

    it("is null for an object that is not a copy for this vCluster at its place", () => {
      const { world: w } = world(vc);
      const copy = w.host.get(hostRef(vc))!;
      const cases: [string, (o: JsonObject) => void][] = [
        [
          "another vCluster's",
          (o) => ((o.metadata as JsonObject).labels = { "vcluster.loft.sh/managed-by": "other" }),
        ],
        [
          "no object-uid (a host object, imported)",
          (o) => editAnnotations(o, { "vcluster.loft.sh/object-uid": null }),
        ],
        ["another source", (o) => editAnnotations(o, { "vcluster.loft.sh/object-name": "other" })],
        [
          "a bad kind annotation",
          (o) => editAnnotations(o, { "vcluster.loft.sh/object-kind": "Secret" }),
        ],
        ["not where the copy belongs", (o) => ((o.metadata as JsonObject).name = "elsewhere")],
      ];
      for (const [what, edit] of cases) {
        const o = structuredClone(copy);
        edit(o);
        assert.equal(copySourceOf(o, vc), null, what);
      }
    });
  });

  describe("reconcileReferenceCopy", () => {
    it("plans nothing while the copy records the source's version", async () => {
      const { deps } = world(vc);
      assert.deepEqual(await reconcileReferenceCopy(SOURCE, deps), { actions: [], warnings: [] });
    });

    it("rewrites the copy when the source changed, then plans nothing", async () => {
      const { world: w, deps } = world(vc);
      const changed = w.virtual.put({ ...w.virtual.get(SOURCE)!, data: { password: "dHdv" } });
      const plan = await reconcileReferenceCopy(SOURCE, deps);
      assert.equal(plan.actions.length, 1);
      assert.equal(plan.actions[0]!.type, "update");
      w.apply(plan);
      const copy = w.host.get(hostRef(vc));
      assert.deepEqual(dataOf(copy), { password: "dHdv" });
      const meta = changed.metadata as JsonObject;
      assert.equal(annotationsOf(copy)[SOURCE_VERSION_ANNOTATION], meta.resourceVersion);
      assert.equal(annotationsOf(copy)["note"], "n");
      assert.deepEqual((await reconcileReferenceCopy(SOURCE, deps)).actions, []);
    });

    it("rewrites the copy of a source deleted and made again (another uid)", async () => {
      const { world: w, deps } = world(vc);
      w.virtual.delete(SOURCE);
      const again = w.virtual.put(secret("three"));
      w.apply(await reconcileReferenceCopy(SOURCE, deps));
      const copy = w.host.get(hostRef(vc));
      assert.equal(
        annotationsOf(copy)["vcluster.loft.sh/object-uid"],
        (again.metadata as JsonObject).uid,
      );
      assert.deepEqual(dataOf(copy), dataOf(again));
    });

    it("deletes the copy, with a uid precondition, when the source is deleted", async () => {
      const { world: w, deps } = world(vc);
      const copy = w.host.get(hostRef(vc))!;
      w.virtual.delete(SOURCE);
      const plan = await reconcileReferenceCopy(SOURCE, deps);
      assert.equal(plan.actions.length, 1);
      const action = plan.actions[0]!;
      assert.equal(action.type, "delete");
      assert.equal(action.type === "delete" ? action.uid : "", (copy.metadata as JsonObject).uid);
      w.apply(plan);
      assert.equal(w.host.get(hostRef(vc)), null);
      assert.deepEqual((await reconcileReferenceCopy(SOURCE, deps)).actions, []);
    });

    it("makes no copy that is not there, and reads nothing else to know it", async () => {
      const { world: w, deps } = world(vc);
      w.host.delete(hostRef(vc));
      w.reads = 0;
      assert.deepEqual((await reconcileReferenceCopy(SOURCE, deps)).actions, []);
      assert.equal(w.reads, 1);
    });

    it("never touches a host object that is not vgate's copy, even when the source is gone", async () => {
      const { world: w, deps } = world(vc);
      const edits: Record<string, string | null>[] = [
        { "vcluster.loft.sh/object-uid": null },
        { "vcluster.loft.sh/object-name": "someone-else" },
      ];
      for (const edit of edits) {
        const copy = w.host.get(hostRef(vc))!;
        editAnnotations(copy, edit);
        w.host.put(copy);
        w.virtual.put({ ...w.virtual.get(SOURCE)!, data: { x: "eA==" } });
        assert.deepEqual(
          (await reconcileReferenceCopy(SOURCE, deps)).actions,
          [],
          JSON.stringify(edit),
        );
        w.virtual.delete(SOURCE);
        assert.deepEqual(
          (await reconcileReferenceCopy(SOURCE, deps)).actions,
          [],
          JSON.stringify(edit),
        );
        w.virtual.put(secret("one"));
      }
    });

    it("leaves the host object of an imported source alone", async () => {
      const { world: w, deps } = world(vc);
      w.virtual.put(secret("changed", { [IMPORTED_ANNOTATION]: "true" }));
      assert.deepEqual((await reconcileReferenceCopy(SOURCE, deps)).actions, []);
    });

    it("plans nothing and reads nothing with sync.toHost.endpoints.enabled false", async () => {
      const { world: w, deps } = world(vc);
      w.virtual.delete(SOURCE);
      w.reads = 0;
      assert.deepEqual(
        (await reconcileReferenceCopy(SOURCE, { ...deps, enabled: false })).actions,
        [],
      );
      assert.equal(w.reads, 0);
    });

    it("finds the copy in the mapped namespace in multi-namespace mode", async () => {
      const mapped = { ...vc, namespaceMappings: { team: "host-team" } };
      assert.deepEqual(at(mapped), { namespace: "host-team", name: "db" });
      const { world: w, deps } = world(mapped);
      w.virtual.put({ ...w.virtual.get(SOURCE)!, data: { password: "Zm91cg==" } });
      w.apply(await reconcileReferenceCopy(SOURCE, deps));
      assert.deepEqual(dataOf(w.host.get(hostRef(mapped))), { password: "Zm91cg==" });
    });
  });
});
