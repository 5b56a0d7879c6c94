// kubectl accesskey kubeconfig NAME --key-file F|-: a kubeconfig for CI that logs in with the key,
// with the server and CA of the current context. The key comes from the user (a file, or stdin with
// -): in hashed storage mode the server cannot give it back.

import { readFile } from "node:fs/promises";
import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import { keyKubeconfig } from "../keys/kubeconfig-file.js";
import { fileProblem } from "../keys/secret-file.js";

export const command: Command = {
  name: "kubeconfig",
  summary: "Print a kubeconfig that logs in with an access key",
  usage: "kubeconfig NAME --key-file FILE|- [flags]",
  description: `Print a kubeconfig that uses an access key as bearer token, for the API server and CA of
the current context. The key is read from --key-file (- reads standard input): the server does not
give keys back. NAME must be an existing key; it names the context.`,
  examples: `# A kubeconfig for the key just created
KEY=$(kubectl accesskey create ci)
echo "$KEY" | kubectl accesskey kubeconfig ci --key-file - > ci.kubeconfig
kubectl --kubeconfig ci.kubeconfig auth whoami`,
  options: { "key-file": { type: "string" } },
  flagHelp: [{ flag: "--key-file=''", text: "File holding the key; - reads standard input" }],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length !== 1) throw new CliError("kubeconfig needs exactly one NAME");
  const name = ctx.positionals[0]!;
  const from = ctx.string("key-file");
  if (!from)
    throw new CliError("kubeconfig needs --key-file FILE (or --key-file - for standard input)");
  let text: string;
  try {
    text = from === "-" ? await ctx.io.readStdin("the key") : await readFile(from, "utf8");
  } catch (err) {
    throw new CliError(
      `cannot read --key-file ${JSON.stringify(from)}: ${fileProblem(err)}; give the file that holds the key, or - to read it from standard input`,
    );
  }
  const key = text.trim();
  if (!key) throw new CliError(`--key-file ${JSON.stringify(from)} is empty`);
  if (/\s/.test(key))
    throw new CliError(`--key-file ${JSON.stringify(from)} must hold only the key (one line)`);
  const api = await ctx.api();
  await api.get(name);
  ctx.io.out(await keyKubeconfig(await ctx.connection(), name, key));
  return 0;
}
