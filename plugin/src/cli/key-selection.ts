// Which keys a listing command is about (list, prune, and delete and describe without NAMEs): the
// caller's own, by a field selector on spec.user (the CRD declares it selectable, so the API server
// filters) naming the user a SelfSubjectReview names, or everyone's with --all; narrowed by -l and
// --field-selector.

import type { CommandContext } from "./command.js";
import { CliError } from "./errors.js";
import type { FlagHelp } from "./flags.js";
import type { ListOptions } from "../kube/api.js";

export const SELECTION_OPTIONS = {
  all: { type: "boolean", short: "A" },
  selector: { type: "string", short: "l" },
  "field-selector": { type: "string" },
} as const;

export const SELECTION_HELP: FlagHelp[] = [
  { flag: "-A, --all=false", text: "Everyone's keys, not only yours" },
  { flag: "-l, --selector=''", text: "Label selector, e.g. -l team=ci" },
  {
    flag: "--field-selector=''",
    text: "Field selector: spec.user, spec.team, spec.type, metadata.name",
  },
];

/** Whether -l, --field-selector or --all pick the keys, rather than NAMEs. */
export function selecting(ctx: CommandContext): boolean {
  return !!ctx.string("selector") || !!ctx.string("field-selector") || ctx.flag("all");
}

/**
 * NAMEs and a selector (--all is one, as kubectl delete's) do not mix: kubectl's resource builder
 * refuses them, in these words, rather than ignore either.
 */
export function refuseNamesWithSelection(ctx: CommandContext): void {
  if (ctx.positionals.length > 0 && selecting(ctx)) {
    throw new CliError("name cannot be provided when a selector is specified");
  }
}

/** The list query for the keys the flags select (one SelfSubjectReview without --all). */
export async function keySelection(ctx: CommandContext): Promise<ListOptions> {
  const selectors = [ctx.string("field-selector")].filter((s): s is string => !!s);
  if (!ctx.flag("all")) {
    const { userInfo } = await (await ctx.api()).whoAmI();
    if (!userInfo.username) throw new CliError("the API server did not say who you are; use --all");
    selectors.unshift(`spec.user=${fieldSelectorValue(userInfo.username)}`);
  }
  return {
    labelSelector: ctx.string("selector") || undefined,
    fieldSelector: selectors.join(",") || undefined,
  };
}

/** fields.EscapeValue: `\`, `,` and `=` are escaped in field selector values. */
export function fieldSelectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}
