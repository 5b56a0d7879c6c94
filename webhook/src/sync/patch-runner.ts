// Starts the sandbox for a loaded vcluster.yaml: the one place the serve, sync and dry-run commands
// make a SandboxPool and load patches into it. The patches then run only through
// sync/guarded-patch.ts's applyGuardedPatches.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { PatchKind } from "../config/patch-kinds.js";
import type { PatchRunner } from "./guarded-patch.js";

export interface StartedPatchRunner {
  /** sync.toHost.endpoints' patches. */
  run: PatchRunner;
  /** The patches of `kind` (one of loaded.patchSets' kinds), or undefined when it has none. */
  runFor(kind: PatchKind): PatchRunner | undefined;
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
  const keys = new Map<string, string>();
  try {
    await pool.loadConfig(CONFIG_KEY, { patches: loaded.patches, vcluster: loaded.vcluster });
    for (const set of loaded.patchSets) {
      const key = `${CONFIG_KEY}/${set.kind.section}.${set.kind.key}`;
      // The kind's keywords ride with its patches, so the engine runs the one vCluster runs for
      // each direction (docs/decisions.md KND-2) at no cost per object.
      const keywords = { toHost: set.kind.toHost, toVirtual: set.kind.toVirtual };
      await pool.loadConfig(key, { patches: set.patches, vcluster: loaded.vcluster, keywords });
      keys.set(`${set.kind.section}.${set.kind.key}`, key);
    }
  } catch (err) {
    await pool.close();
    throw err;
  }
  return {
    run: (job) => pool.apply(CONFIG_KEY, job),
    runFor(kind) {
      const key = keys.get(`${kind.section}.${kind.key}`);
      return key === undefined ? undefined : (job) => pool.apply(key, job);
    },
    close: () => pool.close(),
  };
}
