// A vcluster.yaml loaded once, with the vCluster it runs for: everything the patches need. The
// serve and dry-run commands load it once; vgate sync loads it at start and on every reload.

import type { PatchSpec, VClusterInfo } from "../patches/types.js";
import { readVClusterConfig, type VClusterConfig } from "./load-config.js";
import type { PatchKind } from "./patch-kinds.js";

/** One kind's patches from the config (config/patch-kinds.ts says which keyword runs where). */
export interface PatchSet {
  kind: PatchKind;
  /** sync.<section>.<key>.enabled as written, or vCluster's default. */
  enabled: boolean;
  patches: PatchSpec[];
  /**
   * sync.fromHost.configMaps, .secrets and namespaced custom resources: mappings.byName (host
   * `namespace/name` or `namespace/*` → virtual), the only objects vCluster syncs from the host
   * for them.
   */
  mappings?: Readonly<Record<string, string>>;
}

export interface LoadedVCluster {
  vcluster: VClusterInfo;
  /** sync.toHost.endpoints: `enabled` and `patches`, as before. */
  enabled: boolean;
  patches: PatchSpec[];
  /** Every kind the config has patches for, Endpoints included when it has any. */
  patchSets: PatchSet[];
}

/**
 * Reads, parses and validates the config `file` (`-`: standard input) once; a VClusterConfigError
 * lists every problem at once. `selfNamespace` is vgate's own, which no mapping may target.
 */
export async function loadVClusterFile(
  file: string,
  vcluster: { name: string; namespace: string },
  selfNamespace: string | undefined,
): Promise<LoadedVCluster> {
  const config = await readVClusterConfig(file, { selfNamespace });
  return loadedVCluster(config, vcluster);
}

/** A validated config as the patches need it, for the vCluster `vcluster` names. */
export function loadedVCluster(
  config: VClusterConfig,
  vcluster: { name: string; namespace: string },
): LoadedVCluster {
  return {
    vcluster: {
      name: vcluster.name,
      namespace: vcluster.namespace,
      config: config.raw,
      namespaceMappings: config.namespaces.enabled ? config.namespaces.mappings : undefined,
    },
    enabled: config.endpoints.enabled,
    patches: config.endpoints.patches,
    patchSets: config.patchSets,
  };
}
