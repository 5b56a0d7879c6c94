// sync/vcluster-lookup.ts: which discovered vCluster a host object belongs to (KND-21).

import assert from "node:assert/strict";
import type { LoadedVCluster } from "../../../webhook/src/config/loaded-vcluster.js";
import {
  clusterMarker,
  vclusterForObject,
  type DiscoveredVCluster,
  type VClusterRegistry,
} from "../../../webhook/src/sync/vcluster-lookup.js";

function discovered(namespace: string, name: string, multi = false): DiscoveredVCluster {
  const loaded = {
    vcluster: { name, namespace, config: {}, namespaceMappings: multi ? { "*": "*" } : undefined },
    enabled: true,
    patches: [],
    patchSets: [],
  } as unknown as LoadedVCluster;
  const fail = () => Promise.reject(new Error("not run here"));
  return { ref: { namespace, name }, loaded, runner: { run: fail, runFor: () => undefined } };
}

function registry(all: DiscoveredVCluster[], synced = true): VClusterRegistry {
  return {
    synced: () => synced,
    get: (ns, name) => all.find((v) => v.ref.namespace === ns && v.ref.name === name),
    byClusterMarker: (m) => all.filter((v) => clusterMarker(v.ref) === m),
  };
}

const managed = (value: string) => ({
  metadata: { labels: { "vcluster.loft.sh/managed-by": value } },
});

describe("vclusterForObject", () => {
  const a = discovered("team-a", "vc");
  const b = discovered("team-b", "vc");
  const reg = registry([a, b]);

  it("matches by namespace and label together: same name, two namespaces, two vClusters", () => {
    const inA = vclusterForObject(reg, "team-a", managed("vc"));
    const inB = vclusterForObject(reg, "team-b", managed("vc"));
    assert.ok(inA.found && inB.found);
    assert.equal(inA.vcluster, a);
    assert.equal(inB.vcluster, b);
  });

  it("never matches a vCluster of another namespace by its label alone", () => {
    const r = vclusterForObject(reg, "team-c", managed("vc"));
    assert.deepEqual([r.found, !r.found && r.reason], [false, "UnknownVCluster"]);
  });

  it("objects without the label are not managed; before the configs load, nobody can tell", () => {
    const none = vclusterForObject(reg, "team-a", { metadata: { labels: {} } });
    assert.equal(!none.found && none.reason, "NotManaged");
    const early = vclusterForObject(registry([a], false), "team-a", managed("vc"));
    assert.equal(!early.found && early.reason, "NotSynced");
  });

  it("multi-namespace mode: the namespace's labels name the vCluster, which must map namespaces", () => {
    const multi = discovered("vc-home", "mvc", true);
    const labels: Record<string, Record<string, string>> = {
      "host-ns": {
        "vcluster.loft.sh/vcluster-name": "mvc",
        "vcluster.loft.sh/vcluster-namespace": "vc-home",
      },
      "forged-ns": {
        "vcluster.loft.sh/vcluster-name": "vc",
        "vcluster.loft.sh/vcluster-namespace": "team-a",
      },
    };
    const source = { synced: () => true, labels: (n: string) => labels[n] };
    const reg2 = registry([a, multi]);
    const ok = vclusterForObject(reg2, "host-ns", managed("mvc"), source);
    assert.ok(ok.found && ok.vcluster === multi);
    // team-a/vc does not map namespaces: labels naming it elsewhere give it nothing.
    const forged = vclusterForObject(reg2, "forged-ns", managed("vc"), source);
    assert.equal(forged.found, false);
    const unsynced = vclusterForObject(reg2, "host-ns", managed("mvc"), {
      synced: () => false,
      labels: () => undefined,
    });
    assert.equal(!unsynced.found && unsynced.reason, "NotSynced");
  });

  it("cluster-scoped objects match vCluster's MarkerLabelCluster, and none when it is ambiguous", () => {
    const r = vclusterForObject(reg, "", managed("team-a-x-vc"));
    assert.ok(r.found && r.vcluster === a);
    const twin = discovered("team-a", "vc");
    const ambiguous = vclusterForObject(registry([a, twin]), "", managed("team-a-x-vc"));
    assert.equal(ambiguous.found, false);
  });
});
