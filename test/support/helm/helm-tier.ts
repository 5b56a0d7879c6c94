// Whether the chart's tests of the cluster tier can run here: the node rig and its images, and
// Helm from make kube (or make helm).

import { HAVE_NODE, NODE_SKIP_REASON } from "../node/cluster-tier.js";
import { HELM_MISSING } from "./helm-binary.js";

const why = HAVE_NODE ? HELM_MISSING : undefined;

// CI sets VGATE_REQUIRE_NODE=1: there a tier that skips is a failure, not a pass.
if (why && process.env["VGATE_REQUIRE_NODE"] === "1") {
  throw new Error(`VGATE_REQUIRE_NODE=1, but Helm cannot run: ${why}`);
}

export const HAVE_HELM_NODE = HAVE_NODE && why === undefined;

/** Test-name suffix saying why the chart's cluster tests are skipped, and what to do. */
export const HELM_NODE_SKIP_REASON = !HAVE_NODE
  ? NODE_SKIP_REASON
  : why
    ? ` (skipped: ${why})`
    : "";
