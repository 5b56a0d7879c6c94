// `vgate check-config FILE`: every problem in a vcluster.yaml, from reading it to validating it. The
// same loader as every other command, so check-config says OK exactly when they accept the file.
import { readVClusterConfig, VClusterConfigError, type VClusterConfig } from "./load-config.js";
import { patchesPath } from "./patch-kinds.js";
import type { ValidateOptions } from "./validate-config.js";

/**
 * One line per kind with patches (docs/decisions.md KND-6): where they are, how many, which
 * keyword runs which way, and whether vCluster syncs the kind at all with this config.
 */
export function patchSummary(sets: VClusterConfig["patchSets"]): string[] {
  return sets.map(({ kind, enabled, patches }) => {
    const ways = [
      kind.toHost === null ? null : `${kind.toHost} virtual → host`,
      kind.toVirtual === null ? null : `${kind.toVirtual} host → virtual`,
    ].filter((w) => w !== null);
    const count = `${patches.length} ${patches.length === 1 ? "patch" : "patches"}`;
    return `${patchesPath(kind)}: ${count} (${ways.join(", ")})${enabled ? "" : ", not enabled"}`;
  });
}

export async function checkConfigFile(
  path: string,
  options: ValidateOptions = {},
): Promise<{ ok: true; summary: string[] } | { ok: false; problems: string[] }> {
  try {
    const config = await readVClusterConfig(path, options);
    return { ok: true, summary: patchSummary(config.patchSets) };
  } catch (err) {
    if (err instanceof VClusterConfigError) return { ok: false, problems: err.problems };
    throw err;
  }
}
