// kubectl accesskey delete NAME…: deletes each key; with --wait, returns once each is gone, which
// is after its finalizers are removed.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import { parseRequestTimeout } from "../cli/flags.js";
import type { AccessKeyApi } from "../kube/api.js";

export const command: Command = {
  name: "delete",
  summary: "Delete access keys",
  usage: "delete NAME... [--wait] [flags]",
  description: `Delete OwnedAccessKeys. A deleted key stops working at once for new logins (the API
server may cache a successful login for up to 2 minutes). With --wait the command returns only when
each key is gone, which is after its finalizers are removed.`,
  examples: `# Revoke a key
kubectl accesskey delete ci

# Revoke two keys and wait until they are gone
kubectl accesskey delete ci deploy --wait --timeout 2m`,
  options: {
    wait: { type: "boolean" },
    timeout: { type: "string" },
    "ignore-not-found": { type: "boolean" },
  },
  flagHelp: [
    { flag: "--wait=false", text: "Wait until the keys are gone (finalizers done)" },
    { flag: "--timeout='60s'", text: "How long --wait waits (e.g. 30s, 5m)" },
    { flag: "--ignore-not-found=false", text: "Say nothing about names that do not exist" },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new CliError("delete needs at least one NAME");
  const timeoutMs =
    ctx.string("timeout") === undefined ? 60_000 : parseRequestTimeout(ctx.string("timeout"));
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

async function waitGone(api: AccessKeyApi, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + (timeoutMs || Infinity);
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    try {
      await api.get(name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return;
      throw err;
    }
    if (Date.now() >= deadline) {
      throw new CliError(
        `timed out waiting for ${api.kindGroup}/${name} to be deleted (it still has finalizers?)`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}
