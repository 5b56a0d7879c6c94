// `vgate sync --alongside-vcluster` (docs/decisions.md EPS-25, EPS-26): vCluster's own syncer runs
// for the same virtual cluster from the same vcluster.yaml, and vgate sync writes the host
// Endpoints of selector-less Services in place of vCluster's Endpoints syncer. Exactly one of them
// may write those objects, so the config must turn vCluster's Endpoints syncer off
// (`sync.toHost.endpoints.enabled: false`; vCluster v0.34.0 registers the syncer only when it is
// true: pkg/controllers/resources/register.go), and its EndpointSlice syncer too: that one copies
// the virtual EndpointSlices of selector-less Services, with the unpatched addresses, to host
// slices that the host's EndpointSlice mirroring controller claims (they carry its managed-by
// label) and rewrites from vgate's patched Endpoints, the two writing the same slice in a loop.
// Both switches default to true in vCluster's chart, so only an explicit `false` will do.

import type { Json } from "../patches/types.js";
import { isObject } from "../shared/json.js";

/** `config` at `path`, undefined where a step is missing or not a map. */
function at(config: Json, path: readonly string[]): Json | undefined {
  let node: Json | undefined = config;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

const SWITCHES = [
  {
    path: ["sync", "toHost", "endpoints", "enabled"],
    why: "vCluster's Endpoints syncer would write the same host Endpoints as vgate sync",
  },
  {
    path: ["sync", "toHost", "endpointSlices", "enabled"],
    why: "vCluster's EndpointSlice syncer would copy the unpatched virtual EndpointSlices to the host, where the EndpointSlice mirroring controller rewrites them from vgate's patched Endpoints, in a loop",
  },
] as const;

/**
 * What keeps `config` (a vcluster.yaml shared with vCluster's syncer) from running with
 * --alongside-vcluster: one line per vCluster switch that is not explicitly false.
 */
export function alongsideVClusterProblems(config: Json): string[] {
  return SWITCHES.filter((s) => at(config, s.path) !== false).map(
    (s) =>
      `${s.path.join(".")} must be false with --alongside-vcluster (vCluster's default is true): ${s.why}`,
  );
}
