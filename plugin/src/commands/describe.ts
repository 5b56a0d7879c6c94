// kubectl accesskey describe NAME…: kubectl-describe style, with the computed expiry; never the key.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";

export const command: Command = {
  name: "describe",
  summary: "Show the details of an access key",
  usage: "describe NAME... [flags]",
  description: `Show an OwnedAccessKey in detail: owner, scope, status, when it expires (computed from
ttl, ttlAfterLastActivity and the last activity) and its metadata. The key is never shown.`,
  examples: `# Details of one key
kubectl accesskey describe ci`,
  options: {},
  flagHelp: [],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new CliError("describe needs a NAME");
  const api = await ctx.api();
  const { describeAccessKey } = await import("../output/print.js");
  const texts: string[] = [];
  for (const name of ctx.positionals) texts.push(describeAccessKey(await api.get(name)));
  const text = texts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join("\n");
  ctx.io.out(text);
  return 0;
}
