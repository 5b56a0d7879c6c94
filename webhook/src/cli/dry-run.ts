// Runs the patches once through the sandbox, as `vgate patch` and `vgate translate` do, and prints
// the result (JSON on standard output; warnings and --explain on standard error).

import type { SandboxJob } from "../patches/sandbox/protocol.js";
import type { JsonObject } from "../patches/types.js";
import { protectBookkeeping } from "../sync/bookkeeping.js";
import { CliError, EXIT } from "./errors.js";
import { formatExplain } from "./explain.js";
import type { LoadedVCluster } from "./vcluster-flags.js";

export async function dryRun(
  loaded: LoadedVCluster,
  object: JsonObject,
  job: Omit<SandboxJob, "objectJson">,
  deadlineMs: number,
): Promise<number> {
  const { SandboxPool } = await import("../patches/sandbox/pool.js");
  const pool = new SandboxPool({ size: 1, deadlineMs });
  // vCluster's bookkeeping keys are never patched (see sync/bookkeeping.ts).
  const guarded = protectBookkeeping(object);
  try {
    await pool.loadConfig("cli", { patches: loaded.patches, vcluster: loaded.vcluster });
    const result = await pool.apply("cli", { ...job, objectJson: JSON.stringify(guarded.object) });
    const out = guarded.restore(JSON.parse(result.objectJson) as JsonObject);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    for (const w of result.warnings) process.stderr.write(`Warning: ${w}\n`);
    if (job.explain) process.stderr.write(`${formatExplain(result.explain)}\n`);
    return EXIT.OK;
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  } finally {
    await pool.close();
  }
}
