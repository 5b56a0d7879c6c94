// applyGuardedPatches, the one patch pipeline, with a runner that does what a hostile patch set
// could do to the object it is given. The sandbox end to end (webhook and `vgate patch` giving the
// same answer) is in admit-endpoints-https.test.ts.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import { applyGuardedPatches, type PatchRunner } from "../../../webhook/src/sync/guarded-patch.js";

const host: JsonObject = {
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: {
    name: "db-x-default-x-vc",
    annotations: {
      owner: "team-a",
      "vcluster.loft.sh/object-name": "db",
      "vcluster.loft.sh/object-uid": "1234",
    },
    labels: { app: "db", "vcluster.loft.sh/managed-by": "vc" },
  },
};

describe("sync/guarded-patch", () => {
  it("the runner never sees vCluster's keys, and cannot change or remove them", async () => {
    const seen: JsonObject[] = [];
    const run: PatchRunner = async (job) => {
      const object = JSON.parse(job.objectJson) as JsonObject;
      seen.push(structuredClone(object));
      const meta = object.metadata as { annotations: Record<string, string> };
      meta.annotations.owner = "patched";
      meta.annotations["vcluster.loft.sh/object-name"] = "evil";
      delete (object.metadata as JsonObject).labels;
      return { objectJson: JSON.stringify(object), warnings: ["w"], explain: [] };
    };
    const out = await applyGuardedPatches(run, host, { direction: "toHost" });
    assert.deepEqual(seen[0]!.metadata, {
      name: "db-x-default-x-vc",
      annotations: { owner: "team-a" },
      labels: { app: "db" },
    });
    assert.deepEqual(out.object.metadata, {
      name: "db-x-default-x-vc",
      annotations: {
        owner: "patched",
        "vcluster.loft.sh/object-name": "db",
        "vcluster.loft.sh/object-uid": "1234",
      },
      labels: { "vcluster.loft.sh/managed-by": "vc" },
    });
    assert.deepEqual(out.warnings, ["w"]);
    // The caller's object is not changed.
    assert.equal((host.metadata as { annotations: { owner: string } }).annotations.owner, "team-a");
  });

  it("passes the job through: direction, change set and context", async () => {
    let job: Parameters<PatchRunner>[0] | undefined;
    const run: PatchRunner = async (j) => {
      job = j;
      return { objectJson: j.objectJson, warnings: [], explain: [] };
    };
    await applyGuardedPatches(
      run,
      { a: null },
      {
        direction: "toVirtual",
        changeSet: true,
        hostObjectJson: "null",
        virtualObjectJson: '{"v":1}',
        explain: true,
      },
    );
    assert.deepEqual(job, {
      direction: "toVirtual",
      changeSet: true,
      hostObjectJson: "null",
      virtualObjectJson: '{"v":1}',
      explain: true,
      objectJson: '{"a":null}',
    });
  });

  it("a failing runner fails the call", async () => {
    const run: PatchRunner = () => Promise.reject(new Error('patches[0] at "a": boom'));
    await assert.rejects(applyGuardedPatches(run, host, { direction: "toHost" }), /boom/);
  });
});
