// Whether the vCluster tests of the cluster tier can run here: the node rig and its images, and
// vCluster's syncer and module from make kube.

import { HAVE_NODE, NODE_SKIP_REASON } from "../node/cluster-tier.js";
import { findVCluster, type VClusterParts } from "./vcluster-binary.js";

const lookup = findVCluster();
const why = !HAVE_NODE ? undefined : "missing" in lookup ? lookup.missing : undefined;

// CI sets VGATE_REQUIRE_NODE=1: there a tier that skips is a failure, not a pass.
if (why && process.env["VGATE_REQUIRE_NODE"] === "1") {
  throw new Error(`VGATE_REQUIRE_NODE=1, but vCluster's syncer cannot run: ${why}`);
}

export const HAVE_VCLUSTER = HAVE_NODE && why === undefined;

/** Test-name suffix saying why the vCluster tests are skipped, and what to do. */
export const VCLUSTER_SKIP_REASON = !HAVE_NODE ? NODE_SKIP_REASON : why ? ` (skipped: ${why})` : "";

export function vclusterParts(): VClusterParts {
  if ("missing" in lookup) throw new Error(lookup.missing);
  return lookup.found;
}
