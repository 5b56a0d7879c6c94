// kubectl accesskey delete NAME…: deletes each key; with --wait, returns once each is gone, which
// is after its finalizers are removed.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import { parseDurationFlag } from "../cli/durations.js";
import { goDuration } from "../kube/go-duration.js";
import type { AccessKeyApi } from "../kube/api.js";

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
    wait: { type: "boolean" },
    timeout: { type: "string" },
    "ignore-not-found": { type: "boolean" },
  },
  flagHelp: [
    { flag: "--wait=false", text: "Wait until the keys are gone (finalizers done)" },
    {
      flag: "--timeout=0s",
      text: "How long --wait waits (e.g. 30s, 5m); 0: a week, as kubectl delete",
    },
    { flag: "--ignore-not-found=false", text: "Say nothing about names that do not exist" },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new CliError("delete needs at least one NAME");
  // kubectl delete: "if we requested to wait forever, set it to a week" (--timeout 0, its default).
  const timeoutMs = parseDurationFlag("--timeout", ctx.string("timeout")) || WEEK_MS;
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

const WEEK_MS = 168 * 3_600_000;

async function waitGone(api: AccessKeyApi, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    let current;
    try {
      current = await api.get(name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return;
      throw err;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      // kubectl's words ("timed out waiting for the condition on ownedaccesskeys/NAME"), and why.
      const finalizers = current.metadata?.["finalizers"];
      const held = Array.isArray(finalizers) && finalizers.length > 0;
      throw new CliError(
        `timed out waiting for the condition on ${api.identity.resource}/${name}: ` +
          `still there after ${goDuration(timeoutMs)}` +
          (held ? `, waiting for its finalizers (${finalizers.join(", ")})` : ""),
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(delay, left)));
  }
}
