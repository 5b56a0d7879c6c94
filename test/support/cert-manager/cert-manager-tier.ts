// Whether the cert-manager test of the cluster tier can run here: the node rig and its images, and
// cert-manager's controller, cainjector and module from make kube.

import { HAVE_NODE, NODE_SKIP_REASON } from "../node/cluster-tier.js";
import { findCertManager, type CertManagerParts } from "./cert-manager-parts.js";

const lookup = findCertManager();
const why = !HAVE_NODE ? undefined : "missing" in lookup ? lookup.missing : undefined;

// CI sets VGATE_REQUIRE_NODE=1: there a tier that skips is a failure, not a pass.
if (why && process.env["VGATE_REQUIRE_NODE"] === "1") {
  throw new Error(`VGATE_REQUIRE_NODE=1, but cert-manager cannot run: ${why}`);
}

export const HAVE_CERT_MANAGER = HAVE_NODE && why === undefined;

/** Test-name suffix saying why the cert-manager tests are skipped, and what to do. */
export const CERT_MANAGER_SKIP_REASON = !HAVE_NODE
  ? NODE_SKIP_REASON
  : why
    ? ` (skipped: ${why})`
    : "";

export function certManagerParts(): CertManagerParts {
  if ("missing" in lookup) throw new Error(lookup.missing);
  return lookup.found;
}
