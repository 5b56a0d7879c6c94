// kubectl accesskey list: your own keys (a field selector on spec.user, filtered by the API server;
// the CRD declares it selectable), or everyone's with --all.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import { checkOutput, printKeys } from "../cli/print-keys.js";
import { WATCH_HELP, WATCH_OPTIONS, watchList } from "../cli/watch-keys.js";

export const command: Command = {
  name: "list",
  summary: "List your access keys (--all: everyone's)",
  usage: "list [--all] [-l SELECTOR] [flags]",
  description: `List OwnedAccessKeys as a table: NAME, DISPLAY NAME, OWNER, TYPE, SCOPE, STATUS
(Active/Weak/Disabled/Expired; Weak: a working key shorter than 32 characters), EXPIRES, LAST
ACTIVITY and AGE. Without --all it shows the keys whose spec.user is you (as the API server's
SelfSubjectReview names you), filtered on the server.`,
  examples: `# Your keys
kubectl accesskey list

# Everyone's keys, with more columns
kubectl accesskey list --all -o wide

# Keys with a label, names only
kubectl accesskey list --all -l team=ci -o name

# Your keys, then a row for each change (Ctrl-C to stop)
kubectl accesskey list -w`,
  options: {
    all: { type: "boolean", short: "A" },
    selector: { type: "string", short: "l" },
    "field-selector": { type: "string" },
    ...WATCH_OPTIONS,
  },
  flagHelp: [
    { flag: "-A, --all=false", text: "Everyone's keys, not only yours" },
    { flag: "-l, --selector=''", text: "Label selector, e.g. -l team=ci" },
    {
      flag: "--field-selector=''",
      text: "Field selector: spec.user, spec.team, spec.type, metadata.name",
    },
    ...WATCH_HELP,
  ],
  output: true,
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) {
    throw new CliError(`list takes no arguments (got ${ctx.positionals.join(" ")}); use get NAME`);
  }
  await checkOutput(ctx);
  const api = await ctx.api();
  const selectors = [ctx.string("field-selector")].filter((s): s is string => !!s);
  if (!ctx.flag("all")) {
    const { userInfo } = await api.whoAmI();
    if (!userInfo.username) throw new CliError("the API server did not say who you are; use --all");
    selectors.unshift(`spec.user=${fieldSelectorValue(userInfo.username)}`);
  }
  const selection = {
    labelSelector: ctx.string("selector"),
    fieldSelector: selectors.join(",") || undefined,
  };
  if (ctx.flag("watch") || ctx.flag("watch-only")) return watchList(ctx, selection);
  const items = await api.list(selection);
  if (items.length === 0 && isTable(ctx.string("output"))) {
    ctx.io.err("No resources found\n");
    return 0;
  }
  await printKeys(ctx, items, true);
  return 0;
}

/**
 * Only kubectl's human-readable printers (the table, -o wide) say "No resources found"; -o name
 * prints nothing and json/yaml an empty List.
 */
export function isTable(output: string | undefined): boolean {
  return output === undefined || output === "" || output === "wide";
}

/** fields.EscapeValue: `\`, `,` and `=` are escaped in field selector values. */
export function fieldSelectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}
