// kubectl accesskey get NAME…: the keys named (all keys without names), as kubectl get prints them.
// A missing name is reported after the keys that were found, and the exit code is then 1.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, errorLine, KubeError } from "../cli/errors.js";
import { checkOutput, printKeys } from "../cli/print-keys.js";
import { WATCH_HELP, WATCH_OPTIONS, watchKeys, watching, watchList } from "../cli/watch-keys.js";
import type { KubeObject } from "../kube/api.js";
import { fieldSelectorValue } from "../cli/key-selection.js";
import { isTable } from "./list.js";

export const command: Command = {
  name: "get",
  summary: "Show one or more access keys",
  usage: "get [NAME...] [flags]",
  description: `Show the named OwnedAccessKeys (every key, when no name is given) as a table or in
the format of -o. The key is never printed, wherever it appears (an annotation too), unless
--show-key.`,
  examples: `# One key as a table
kubectl accesskey get ci

# Two keys as YAML
kubectl accesskey get ci deploy -o yaml

# Names and expiry, kubectl's jsonpath templates
kubectl accesskey get -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.spec.ttl}{"\\n"}{end}'

# The keys of a team, selected by the server
kubectl accesskey get --field-selector spec.team=platform

# One key, then a row each time it changes (Ctrl-C to stop)
kubectl accesskey get ci -w

# Every change as a JSON watch event ({"type":"MODIFIED","object":…}), as kubectl get prints it
kubectl accesskey get -w --watch-only --output-watch-events -o json`,
  options: {
    selector: { type: "string", short: "l" },
    "field-selector": { type: "string" },
    "ignore-not-found": { type: "boolean" },
    ...WATCH_OPTIONS,
  },
  flagHelp: [
    { flag: "-l, --selector=''", text: "Label selector (without NAME)" },
    {
      flag: "--field-selector=''",
      text: "Field selector (without NAME): spec.user, spec.team, spec.type",
    },
    { flag: "--ignore-not-found=false", text: "Say nothing about names that do not exist" },
    ...WATCH_HELP,
  ],
  output: true,
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0 && (ctx.string("selector") || ctx.string("field-selector"))) {
    // kubectl's resource builder refuses names with a selector rather than ignore one of them.
    throw new CliError("name cannot be provided when a selector is specified");
  }
  await checkOutput(ctx);
  const api = await ctx.api();
  if (watching(ctx)) return watch(ctx);
  if (ctx.positionals.length === 0) {
    const items = await api.list({
      labelSelector: ctx.string("selector"),
      fieldSelector: ctx.string("field-selector"),
    });
    if (items.length === 0 && isTable(ctx.string("output"))) {
      ctx.io.err("No resources found\n");
      return 0;
    }
    await printKeys(ctx, items, true);
    return 0;
  }
  const found: KubeObject[] = [];
  const errors: string[] = [];
  for (const name of ctx.positionals) {
    try {
      found.push(await api.get(name));
    } catch (err) {
      const notFound = err instanceof KubeError && err.code === 404;
      if (!(notFound && ctx.flag("ignore-not-found"))) {
        if (!notFound) throw err;
        errors.push(errorLine(err));
      }
    }
  }
  if (found.length > 0) await printKeys(ctx, found, ctx.positionals.length > 1);
  for (const line of errors) ctx.io.err(`${line}\n`);
  return errors.length > 0 ? 1 : 0;
}

/** get -w: every key (with the selectors), or one named key; kubectl watches no more than one name. */
async function watch(ctx: CommandContext): Promise<number> {
  const api = await ctx.api();
  const names = ctx.positionals;
  if (names.length > 1) {
    throw new CliError(
      `watch is only supported on individual resources and resource collections, but ${names.length} resources were found`,
    );
  }
  const name = names[0];
  if (name === undefined) {
    return watchList(ctx, {
      labelSelector: ctx.string("selector"),
      fieldSelector: ctx.string("field-selector"),
    });
  }
  const current = await api.get(name);
  return watchKeys(ctx, {
    current: [current],
    resourceVersion: "0",
    skipFirst: true,
    selection: { fieldSelector: `metadata.name=${fieldSelectorValue(name)}` },
  });
}
