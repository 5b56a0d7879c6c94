// Starts the sandbox for a loaded vcluster.yaml: the one place the serve, sync and dry-run commands
// make a SandboxPool and load patches into it. The patches then run only through
// sync/guarded-patch.ts's applyGuardedPatches.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { PatchRunner } from "./guarded-patch.js";

export interface StartedPatchRunner {
  run: PatchRunner;
  close(): Promise<void>;
}

const CONFIG_KEY = "vcluster";

export async function startPatchRunner(
  loaded: LoadedVCluster,
  opts: { workers?: number; deadlineMs: number },
): Promise<StartedPatchRunner> {
  // Loaded on demand: `vgate --help` and check-config never pay for the sandbox.
  const { SandboxPool } = await import("../patches/sandbox/pool.js");
  const pool = new SandboxPool({ size: opts.workers, deadlineMs: opts.deadlineMs });
  try {
    await pool.loadConfig(CONFIG_KEY, { patches: loaded.patches, vcluster: loaded.vcluster });
  } catch (err) {
    await pool.close();
    throw err;
  }
  return { run: (job) => pool.apply(CONFIG_KEY, job), close: () => pool.close() };
}
