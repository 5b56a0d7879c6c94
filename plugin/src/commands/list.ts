// kubectl accesskey list: your own keys (a field selector on spec.user, filtered by the API server;
// the CRD declares it selectable), or everyone's with --all; --expiring D keeps the keys that stop
// working within D, those already expired included.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import { SELECTION_HELP, SELECTION_OPTIONS, keySelection } from "../cli/key-selection.js";
import { checkOutput, printKeys } from "../cli/print-keys.js";
import { WATCH_HELP, WATCH_OPTIONS, watching, watchList } from "../cli/watch-keys.js";
import { expiresAt } from "../../../webhook/src/shared/key-expiry.js";
import { parseTtl } from "../keys/ttl.js";
import type { KubeObject } from "../kube/api.js";

export const command: Command = {
  name: "list",
  summary: "List your access keys (--all: everyone's)",
  usage: "list [--all] [-l SELECTOR] [--expiring DURATION] [flags]",
  description: `List OwnedAccessKeys as a table: NAME, DISPLAY NAME, OWNER, TYPE, SCOPE, STATUS
(Active/Weak/Disabled/Expired; Weak: a working key shorter than 32 characters), EXPIRES, LAST
ACTIVITY and AGE. Without --all it shows the keys whose spec.user is you (as the API server's
SelfSubjectReview names you), filtered on the server. --expiring DURATION shows only the keys that
stop working within DURATION (spec.ttl, counted from the last activity with
spec.ttlAfterLastActivity), those already expired too: their STATUS says Expired.`,
  examples: `# Your keys
kubectl accesskey list

# Everyone's keys, with more columns
kubectl accesskey list --all -o wide

# Keys with a label, names only
kubectl accesskey list --all -l team=ci -o name

# Your keys that expire within a week (or have expired)
kubectl accesskey list --expiring 7d

# Your keys, then a row for each change (Ctrl-C to stop)
kubectl accesskey list -w`,
  options: {
    ...SELECTION_OPTIONS,
    expiring: { type: "string" },
    ...WATCH_OPTIONS,
  },
  flagHelp: [
    ...SELECTION_HELP,
    {
      flag: "--expiring=''",
      text: "Only keys that expire within this long, or have expired (e.g. 7d, 12h, 2w)",
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
  const expiring = ctx.string("expiring");
  const withinMs = expiring === undefined ? undefined : parseTtl(expiring, "--expiring") * 1000;
  const watch = watching(ctx);
  if (withinMs !== undefined && watch) {
    // A watch prints each change of the selected keys; expiry is not a change the server sends.
    throw new CliError("--expiring cannot be used with --watch or --watch-only");
  }
  await checkOutput(ctx);
  const api = await ctx.api();
  const selection = await keySelection(ctx);
  if (watch) return watchList(ctx, selection);
  let items = await api.list(selection);
  if (withinMs !== undefined) items = expiringWithin(items, withinMs, Date.now());
  if (items.length === 0 && isTable(ctx.string("output"))) {
    ctx.io.err("No resources found\n");
    return 0;
  }
  await printKeys(ctx, items, true);
  return 0;
}

/** The keys that stop working by now + withinMs (those expired already included). */
export function expiringWithin(
  items: readonly KubeObject[],
  withinMs: number,
  now: number,
): KubeObject[] {
  return items.filter((o) => {
    const at = expiresAt(o);
    return at !== undefined && at <= now + withinMs;
  });
}

/**
 * Only kubectl's human-readable printers (the table, -o wide) say "No resources found"; -o name
 * prints nothing and json/yaml an empty List.
 */
export function isTable(output: string | undefined): boolean {
  return output === undefined || output === "" || output === "wide";
}
