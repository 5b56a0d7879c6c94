// kubectl accesskey describe NAME…: kubectl-describe style, with the computed expiry and the key's
// Events; never the key.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError } from "../cli/errors.js";
import type { AccessKeyApi, KubeObject } from "../kube/api.js";
import { KubeError } from "../../../webhook/src/shared/status.js";

/** Where Kubernetes (and vgate serve) records the Events of a cluster-scoped object. */
const CLUSTER_EVENTS_NAMESPACE = "default";

export const command: Command = {
  name: "describe",
  summary: "Show the details of an access key",
  usage: "describe NAME... [flags]",
  description: `Show an OwnedAccessKey in detail: owner, scope, status, when it expires (computed from
ttl, ttlAfterLastActivity and the last activity), its metadata and, as kubectl describe does, the
Events about it (such as vgate's AccessKeyExpiring warnings). The key is never shown.`,
  examples: `# Details of one key
kubectl accesskey describe ci

# Without its Events
kubectl accesskey describe ci --show-events=false`,
  options: { "show-events": { type: "boolean" } },
  flagHelp: [
    {
      flag: "--show-events=true",
      text: "Show the Events about the key (<none> when you may not list them)",
    },
  ],
  run,
};

/**
 * The Events about `key`, searched as kubectl describe searches them: in all namespaces. kubectl
 * shows `<none>` when that list is refused; a user who may list Events only in `default`, where
 * they are recorded for a key, is shown those instead. Any other refusal: none, as kubectl.
 */
async function keyEvents(api: AccessKeyApi, key: KubeObject): Promise<KubeObject[]> {
  try {
    return await api.events(key);
  } catch (err) {
    if (!(err instanceof KubeError)) throw err;
    if (err.code !== 403) return [];
  }
  try {
    return await api.events(key, CLUSTER_EVENTS_NAMESPACE);
  } catch (err) {
    if (err instanceof KubeError) return [];
    throw err;
  }
}

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length === 0) throw new CliError("describe needs a NAME");
  const showEvents = ctx.values["show-events"] !== false;
  const api = await ctx.api();
  const { describeAccessKey } = await import("../output/print.js");
  const texts: string[] = [];
  for (const name of ctx.positionals) {
    const key = await api.get(name);
    const events = showEvents ? await keyEvents(api, key) : undefined;
    texts.push(describeAccessKey(key, Date.now(), [], events));
  }
  const text = texts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join("\n");
  ctx.io.out(text);
  return 0;
}
