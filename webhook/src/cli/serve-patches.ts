// /mutate/patches for `vgate serve --config`: the sync.toHost kinds of the loaded config, each with
// its own patches in the sandbox, and their failures counted in vgate_sync_patch_failures_total.
// Kept apart from serve-runtime.ts so that tests assemble the same admission from a LoadedVCluster
// they build themselves.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { Metrics } from "../server/metrics.js";
import { kindLabel, type PatchesAdmission, type ServedKind } from "../sync/admit-patches.js";
import type { StartedPatchRunner } from "../sync/patch-runner.js";

/** The kinds /mutate/patches serves: sync.fromHost kinds' objects are written in the virtual cluster. */
export function servedKinds(loaded: LoadedVCluster, runner: StartedPatchRunner): ServedKind[] {
  const kinds: ServedKind[] = [];
  for (const set of loaded.patchSets) {
    const run = runner.runFor(set.kind);
    if (set.kind.section === "toHost" && run) {
      kinds.push({ kind: set.kind, enabled: set.enabled, run });
    }
  }
  return kinds;
}

export function patchesAdmission(
  loaded: LoadedVCluster,
  runner: StartedPatchRunner,
  metrics: Pick<Metrics, "patchFailures">,
  opts: Pick<PatchesAdmission, "side" | "onPatchError" | "owner" | "endpoints">,
): PatchesAdmission {
  return {
    ...opts,
    kinds: servedKinds(loaded, runner),
    onPatchFailure: (kind, index) =>
      metrics.patchFailures.inc({
        kind: kindLabel(kind),
        patch: index === undefined ? "none" : String(index),
      }),
  };
}
