// /mutate/patches for `vgate serve --config` (and, per discovered vCluster, --discover-vclusters):
// the sync.toHost kinds of the loaded config (and sync.fromHost ones on the virtual side), each with its own patches in the sandbox, and their
// failures counted in vgate_sync_patch_failures_total.
// Kept apart from serve-runtime.ts so that tests assemble the same admission from a LoadedVCluster
// they build themselves.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { Metrics } from "../server/metrics.js";
import { kindLabel, type PatchesAdmission, type ServedKind } from "../sync/admit-patches.js";
import type { VClusterRunner } from "../sync/patch-runner.js";
import type { EndpointsAdmission } from "../sync/admit-endpoints.js";
import type { Json } from "../patches/types.js";
import { isObject } from "../shared/json.js";

/** sync.fromHost.nodes.syncBackChanges: vCluster copies virtual Node labels and taints to the host. */
function syncsNodesBack(loaded: LoadedVCluster): boolean {
  let here: Json | undefined = loaded.vcluster.config;
  for (const key of ["sync", "fromHost", "nodes", "syncBackChanges"]) {
    if (!isObject(here) || !Object.hasOwn(here, key)) return false;
    here = here[key];
  }
  return here === true;
}

/**
 * The kinds /mutate/patches and /mutate/patches/virtual serve: the host side takes the sync.toHost
 * ones, the virtual side the sync.fromHost ones too, whose objects vCluster writes in the virtual
 * cluster (KND-50).
 */
export function servedKinds(loaded: LoadedVCluster, runner: VClusterRunner): ServedKind[] {
  const kinds: ServedKind[] = [];
  for (const set of loaded.patchSets) {
    const run = runner.runFor(set.kind);
    if (!run) continue;
    const served: ServedKind = { kind: set.kind, enabled: set.enabled, run };
    if (set.mappings !== undefined) served.mappings = set.mappings;
    if (set.kind.section === "fromHost" && set.kind.key === "nodes" && syncsNodesBack(loaded)) {
      served.notPatched =
        "sync.fromHost.nodes.syncBackChanges is on: vCluster writes a virtual Node's labels and taints back to the host node, which a patch must not reach";
    }
    kinds.push(served);
  }
  return kinds;
}

/**
 * The metric's `patch` label: the patch index, `none` when no one patch is to blame, and `<max>+`
 * for every index from `maxIndex` on, so that a config vgate does not control (a tenant's, with
 * --discover-vclusters) cannot make a series per patch (docs/decisions.md KND-33).
 */
export function patchLabel(index: number | undefined, maxIndex = Infinity): string {
  if (index === undefined) return "none";
  return index < maxIndex ? String(index) : `${maxIndex}+`;
}

export function patchesAdmission(
  loaded: LoadedVCluster,
  runner: VClusterRunner,
  metrics: Pick<Metrics, "patchFailures">,
  opts: Pick<PatchesAdmission, "side" | "onPatchError" | "owner" | "endpoints"> & {
    /** Indexes from this one on share one `patch` label (patchLabel). */
    maxPatchLabel?: number;
  },
): PatchesAdmission {
  const { maxPatchLabel, ...admission } = opts;
  return {
    ...admission,
    kinds: servedKinds(loaded, runner),
    onPatchFailure: (kind, index) =>
      metrics.patchFailures.inc({ kind: kindLabel(kind), patch: patchLabel(index, maxPatchLabel) }),
  };
}

/**
 * sync.toHost.endpointSlices' own patches for the Endpoints admission, which patches every write to
 * a host slice (docs/decisions.md KND-70), and their failures counted as /mutate/patches counts
 * them. Empty when the config has none or turns the kind off.
 */
export function slicePatches(
  loaded: LoadedVCluster,
  runner: VClusterRunner,
  metrics: Pick<Metrics, "patchFailures">,
  maxPatchLabel?: number,
): Pick<EndpointsAdmission, "slices" | "onSlicePatchFailure"> {
  const set = loaded.patchSets.find(
    (s) => s.kind.section === "toHost" && s.kind.key === "endpointSlices",
  );
  const run = set?.enabled ? runner.runFor(set.kind) : undefined;
  if (set === undefined || run === undefined) return {};
  return {
    slices: run,
    onSlicePatchFailure: (index) =>
      metrics.patchFailures.inc({
        kind: kindLabel(set.kind),
        patch: patchLabel(index, maxPatchLabel),
      }),
  };
}
