// A vcluster.yaml loaded once, with the vCluster it runs for: everything the patches need. The
// serve and dry-run commands load it once; vgate sync loads it at start and on every reload.

import type { PatchSpec, VClusterInfo } from "../patches/types.js";
import { readVClusterConfig } from "./load-config.js";

export interface LoadedVCluster {
  vcluster: VClusterInfo;
  enabled: boolean;
  patches: PatchSpec[];
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
  return {
    vcluster: {
      name: vcluster.name,
      namespace: vcluster.namespace,
      config: config.raw,
      namespaceMappings: config.namespaces.enabled ? config.namespaces.mappings : undefined,
    },
    enabled: config.endpoints.enabled,
    patches: config.endpoints.patches,
  };
}
