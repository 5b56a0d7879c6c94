// Loaded by mocha before any test (.mocharc.json "require"), in every worker: puts the kubectl of
// the cluster's version first on PATH (test/support/kubectl.ts), and stops the run's shared cluster
// at the end. (If mocha is killed instead, the supervisor of each process stops it.)

import { stopSharedCluster } from "./cluster.js";
import { putMatchingKubectlFirstOnPath } from "./kubectl.js";

putMatchingKubectlFirstOnPath();

export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedCluster();
}
