// Hands OwnedAccessKeys to the printers of plugin/src/output/ with the output flags of the command.

import type { CommandContext } from "./command.js";
import type { KubeObject } from "../kube/api.js";

export async function printKeys(
  ctx: CommandContext,
  objects: readonly KubeObject[],
  asList: boolean,
): Promise<void> {
  const { parseOutput } = await import("../output/format.js");
  const { printObjects } = await import("../output/print.js");
  const api = await ctx.api();
  const text = printObjects(
    objects,
    {
      format: parseOutput(ctx.string("output")),
      noHeaders: ctx.flag("no-headers"),
      ...(ctx.string("sort-by") !== undefined ? { sortBy: ctx.string("sort-by")! } : {}),
      showKey: ctx.flag("show-key"),
      generated: ctx.generatedKeys,
      kindGroup: api.kindGroup,
    },
    asList,
  );
  ctx.io.out(text);
}

/** Checks -o before any request, so a typo costs no round trip. */
export async function checkOutput(ctx: CommandContext): Promise<void> {
  const { parseOutput } = await import("../output/format.js");
  parseOutput(ctx.string("output"));
}
