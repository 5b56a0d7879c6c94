// kubectl accesskey delete NAME…: deletes each key; with --wait, returns once each is gone, which
// is after its finalizers are removed.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import { WAIT_HELP, WAIT_OPTIONS, waitGone, waitTimeoutMs } from "../cli/wait-gone.js";

export const command: Command = {
  name: "delete",
  summary: "Delete access keys",
  usage: "delete NAME... [--wait] [flags]",
  description: `Delete OwnedAccessKeys. kube-apiserver refuses a deleted key within a second (it may keep
vgate's answer to one request for 500 ms). With --wait the command returns only when
each key is gone, which is after its finalizers are removed.`,
  examples: `# Revoke a key
kubectl accesskey delete ci

# Revoke two keys and wait until they are gone
kubectl accesskey delete ci deploy --wait --timeout 2m`,
  options: {
    ...WAIT_OPTIONS,
    "ignore-not-found": { type: "boolean" },
  },
  flagHelp: [
    ...WAIT_HELP,
    { flag: "--ignore-not-found=false", text: "Say nothing about names that do not exist" },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new CliError("delete needs at least one NAME");
  const timeoutMs = waitTimeoutMs(ctx.string("timeout"));
  const api = await ctx.api();
  const deleted: string[] = [];
  let failed = false;
  for (const name of ctx.positionals) {
    try {
      await api.delete(name);
      ctx.io.out(`${api.kindGroup} "${name}" deleted\n`);
      deleted.push(name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404 && ctx.flag("ignore-not-found")) continue;
      if (!(err instanceof KubeError && err.code === 404)) throw err;
      ctx.io.err(`${errorLine(err)}\n`);
      failed = true;
    }
  }
  if (ctx.flag("wait")) {
    for (const name of deleted) await waitGone(api, name, timeoutMs);
  }
  return failed ? 1 : 0;
}
