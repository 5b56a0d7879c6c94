// Loaded by mocha before any test (.mocharc.json "require"), in every worker: puts the kubectl of
// the cluster's version first on PATH (test/support/kubectl.ts), and stops the run's shared cluster
// at the end. (If mocha is killed instead, the supervisor of each process stops it.) After each test
// it removes the temp dirs the test made with testTempDir (test/support/temp-dir.ts).

import { stopSharedCluster } from "./cluster.js";
import { putMatchingKubectlFirstOnPath } from "./kubectl.js";
import { removeTestTempDirs } from "./temp-dir.js";

putMatchingKubectlFirstOnPath();

export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedCluster();
}

export const mochaHooks = {
  afterEach(): void {
    removeTestTempDirs();
  },
};
