// The one patch pipeline. Every Endpoint-sync patch vgate applies goes through applyGuardedPatches:
// the /mutate/endpoints webhook (admit-endpoints.ts) and the dry runs `vgate patch` and
// `vgate translate` (cli/dry-run.ts), so what a dry run shows is what the webhook does. It sets
// vCluster's bookkeeping keys aside (bookkeeping.ts), runs the patches in the sandbox, and puts the
// keys back, so no patch can rewrite them (docs/reference.md#patch-gotchas item 4).
// `make lint` keeps it the only way in: nothing else may import bookkeeping.ts, and only the
// patch runner (sync/patch-runner.ts) and the engine benchmark may drive the sandbox pool.

import type { ResolvedReference } from "../patches/reference.js";
import type { Direction, ExplainEntry, JsonObject } from "../patches/types.js";
import { protectBookkeeping } from "./bookkeeping.js";

/** One run, but the object: direction and context, as JSON text for the sandbox. */
export interface PatchJob {
  direction: Direction;
  /** The object is an update change set: null leaves are deletions and pass through. */
  changeSet?: boolean;
  hostObjectJson?: string;
  virtualObjectJson?: string;
  /** Objects from the other side (a JSON array), to resolve references host → virtual. */
  referenceObjectsJson?: string;
  explain?: boolean;
}

/** What the sandbox gives back for one object. */
export interface PatchRunResult {
  objectJson: string;
  warnings: string[];
  explain: ExplainEntry[];
  /**
   * The references the patches rewrote (the sandbox pool always reports them; optional so that a
   * runner which cannot rewrite references need not say so).
   */
  references?: ResolvedReference[];
}

/** Runs a loaded config's patches on one object (the sandbox pool, bound to that config). */
export type PatchRunner = (job: PatchJob & { objectJson: string }) => Promise<PatchRunResult>;

export interface GuardedResult {
  object: JsonObject;
  warnings: string[];
  /** Which patch matched which paths, when `job.explain` is set. */
  explain: ExplainEntry[];
  /** The references the patches rewrote: the sync controller copies or imports their objects. */
  references: ResolvedReference[];
}

/** Applies the patches to `object` with vCluster's bookkeeping keys out of their reach. */
export async function applyGuardedPatches(
  run: PatchRunner,
  object: JsonObject,
  job: PatchJob,
): Promise<GuardedResult> {
  const guarded = protectBookkeeping(object);
  const result = await run({ ...job, objectJson: JSON.stringify(guarded.object) });
  return {
    object: guarded.restore(JSON.parse(result.objectJson) as JsonObject),
    warnings: result.warnings,
    explain: result.explain,
    references: result.references ?? [],
  };
}
