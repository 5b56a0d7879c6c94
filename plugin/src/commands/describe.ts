// kubectl accesskey describe [NAME…]: kubectl-describe style, with the computed expiry and the
// key's Events; never the key. Without NAMEs, the keys list would show (-l, --field-selector, --all).

import type { Command, CommandContext } from "../cli/command.js";
import {
  SELECTION_HELP,
  SELECTION_OPTIONS,
  keySelection,
  refuseNamesWithSelection,
} from "../cli/key-selection.js";
import type { AccessKeyApi, KubeObject } from "../kube/api.js";
import { KubeError } from "../../../webhook/src/shared/status.js";

/** Where Kubernetes (and vgate serve) records the Events of a cluster-scoped object. */
const CLUSTER_EVENTS_NAMESPACE = "default";

export const command: Command = {
  name: "describe",
  summary: "Show the details of an access key",
  usage: "describe [NAME... | -l SELECTOR | --field-selector SELECTOR] [--all] [flags]",
  description: `Show an OwnedAccessKey in detail: owner, scope, status, when it expires (computed from
ttl, ttlAfterLastActivity and the last activity), its metadata and, as kubectl describe does, the
Events about it (such as vgate's AccessKeyExpiring warnings). The key is never shown. Without a
NAME, every key list shows: your own (spec.user is you), or everyone's with --all, narrowed by -l
and --field-selector; NAMEs and a selector do not mix, as in kubectl describe. Keys are separated
by two blank lines, as kubectl describe separates objects.`,
  examples: `# Details of one key
kubectl accesskey describe ci

# Without its Events
kubectl accesskey describe ci --show-events=false

# Each of your keys labelled team=ci
kubectl accesskey describe -l team=ci

# Each of alice's keys (an admin: --all looks at everyone's keys)
kubectl accesskey describe --all --field-selector spec.user=alice`,
  options: { ...SELECTION_OPTIONS, "show-events": { type: "boolean" } },
  flagHelp: [
    ...SELECTION_HELP,
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
  refuseNamesWithSelection(ctx);
  const showEvents = ctx.values["show-events"] !== false;
  const api = await ctx.api();
  const { describeAccessKey } = await import("../output/print.js");
  let keys: KubeObject[] | undefined;
  if (ctx.positionals.length === 0) {
    keys = await api.list(await keySelection(ctx));
    if (keys.length === 0) {
      // kubectl describe says "No resources found in default namespace." even of a cluster-scoped
      // type; kubectl get's words for one, as list says it.
      ctx.io.err("No resources found\n");
      return 0;
    }
  }
  const texts: string[] = [];
  const describeKey = async (key: KubeObject) => {
    const events = showEvents ? await keyEvents(api, key) : undefined;
    texts.push(describeAccessKey(key, Date.now(), [], events));
  };
  if (keys) for (const key of keys) await describeKey(key);
  else for (const name of ctx.positionals) await describeKey(await api.get(name));
  // kubectl describe prints "\n\n" before each object after the first.
  const text = texts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join("\n\n");
  ctx.io.out(text);
  return 0;
}
