// What every test of the cluster tier (make test-cluster) shares: whether the node rig can run
// here, and why not.

import { rigImages } from "./images.js";
import { nodeRigPrerequisites } from "./prerequisites.js";

function reason(): string | undefined {
  const missing = nodeRigPrerequisites();
  if (missing) return missing;
  const images = rigImages();
  return "missing" in images ? images.missing : undefined;
}

const why = reason();

// CI sets VGATE_REQUIRE_NODE=1: there a tier that skips is a failure, not a pass.
if (why && process.env["VGATE_REQUIRE_NODE"] === "1") {
  throw new Error(`VGATE_REQUIRE_NODE=1, but the cluster tier cannot run: ${why}`);
}

/** Whether the node rig and its images are here. */
export const HAVE_NODE = why === undefined;

/** Test-name suffix saying why the cluster tier is skipped, and what to do. */
export const NODE_SKIP_REASON = why ? ` (skipped: ${why})` : "";

/** The images; throws with the reason when they are missing. */
export function nodeImages() {
  const images = rigImages();
  if ("missing" in images) throw new Error(images.missing);
  return images.found;
}
