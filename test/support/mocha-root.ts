// Loaded by mocha before any test (.mocharc.json "require"): stops the run's shared cluster at the
// end. (If mocha is killed instead, the supervisor of each process stops it.)

import { stopSharedCluster } from "./cluster.js";

export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedCluster();
}
