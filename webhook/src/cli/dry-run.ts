// Runs the patches once, as `vgate patch` and `vgate translate` do, through the same guarded
// pipeline as the webhook (sync/guarded-patch.ts), and prints the result (JSON on standard output;
// warnings and --explain on standard error).

import type { JsonObject } from "../patches/types.js";
import { applyGuardedPatches, type PatchJob } from "../sync/guarded-patch.js";
import { CliError, EXIT } from "./errors.js";
import { formatExplain } from "./explain.js";
import { startPatchRunner } from "../sync/patch-runner.js";
import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { PatchKind } from "../config/patch-kinds.js";

/** Runs `kind`'s patches (patch-set-for.ts chose it) on `object`; sync.toHost.endpoints' if none. */
export async function dryRun(
  loaded: LoadedVCluster,
  object: JsonObject,
  job: PatchJob,
  deadlineMs: number,
  kind?: PatchKind,
): Promise<number> {
  // Only the kind's own patches are loaded: a dry run compiles nothing it does not run.
  const sets = kind === undefined ? [] : loaded.patchSets.filter((s) => s.kind === kind);
  const runner = await startPatchRunner({ ...loaded, patchSets: sets }, { workers: 1, deadlineMs });
  try {
    const run = (kind && runner.runFor(kind)) ?? runner.run;
    const result = await applyGuardedPatches(run, object, job);
    process.stdout.write(`${JSON.stringify(result.object, null, 2)}\n`);
    for (const w of result.warnings) process.stderr.write(`Warning: ${w}\n`);
    if (job.explain) process.stderr.write(`${formatExplain(result.explain)}\n`);
    return EXIT.OK;
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  } finally {
    await runner.close();
  }
}
