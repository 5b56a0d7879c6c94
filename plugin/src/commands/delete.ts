// kubectl accesskey delete NAME… | -l SELECTOR | --field-selector SELECTOR | --all: deletes each key
// named, or each key the selection lists (the same as list's: your own keys, --all everyone's);
// with --wait, returns once each is gone, which is after its finalizers are removed.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import {
  SELECTION_HELP,
  SELECTION_OPTIONS,
  keySelection,
  refuseNamesWithSelection,
  selecting,
} from "../cli/key-selection.js";
import { WAIT_HELP, WAIT_OPTIONS, waitGone, waitTimeoutMs } from "../cli/wait-gone.js";

export const command: Command = {
  name: "delete",
  summary: "Delete access keys",
  usage: "delete (NAME... | -l SELECTOR | --field-selector SELECTOR | --all) [--wait] [flags]",
  description: `Delete OwnedAccessKeys: the NAMEs given, or the keys a selector lists. As with list and
prune, -l and --field-selector select among your own keys (spec.user is you, as the API server's
SelfSubjectReview names you), and --all among everyone's: alone, every key you may list (vgate
refuses to delete the keys that are not yours unless you are an admin), or narrowed by -l and
--field-selector. NAMEs and a selector do not mix, as in kubectl delete. As kubectl delete, it asks
no confirmation: see first with kubectl accesskey list and the same flags. A key the selection
listed but that is gone by its delete is skipped (--ignore-not-found=false reports it).
kube-apiserver refuses a deleted key within a second (it may keep vgate's answer to one request
for 500 ms). With --wait the command returns only when each key is gone, which is after its
finalizers are removed.`,
  examples: `# Revoke a key
kubectl accesskey delete ci

# Revoke two keys and wait until they are gone
kubectl accesskey delete ci deploy --wait --timeout 2m

# Revoke your keys labelled team=ci
kubectl accesskey delete -l team=ci

# Revoke alice's keys of type Other (an admin: --all looks at everyone's keys)
kubectl accesskey delete --all --field-selector spec.user=alice,spec.type=Other

# Revoke every key in the cluster (an admin; vgate refuses others the keys not theirs)
kubectl accesskey delete --all`,
  options: {
    ...SELECTION_OPTIONS,
    ...WAIT_OPTIONS,
    "ignore-not-found": { type: "boolean" },
  },
  flagHelp: [
    ...SELECTION_HELP,
    ...WAIT_HELP,
    {
      flag: "--ignore-not-found=false",
      text: "Say nothing about names that do not exist (default true with -l, --field-selector, --all)",
    },
  ],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  refuseNamesWithSelection(ctx);
  const bySelection = selecting(ctx);
  if (ctx.positionals.length === 0 && !bySelection) {
    // kubectl: "resource(s) were provided, but no name was specified"; the resource is implied.
    throw new CliError(
      "no name was specified: give NAME..., -l SELECTOR, --field-selector SELECTOR or --all",
    );
  }
  const timeoutMs = waitTimeoutMs(ctx.string("timeout"));
  const api = await ctx.api();
  let names = ctx.positionals;
  // kubectl delete: with --all, -l or --field-selector, --ignore-not-found defaults to true (a key
  // deleted since the list is no error).
  let ignoreNotFound = ctx.flag("ignore-not-found");
  if (bySelection) {
    const items = await api.list(await keySelection(ctx));
    if (items.length === 0) {
      // On standard output, as kubectl delete prints it (kubectl get and describe: standard error).
      ctx.io.out("No resources found\n");
      return 0;
    }
    names = items.map((o) => o.metadata?.name ?? "");
    ignoreNotFound = ctx.values["ignore-not-found"] !== false;
  }
  const deleted: string[] = [];
  let failed = false;
  for (const name of names) {
    try {
      await api.delete(name);
      ctx.io.out(`${api.kindGroup} "${name}" deleted\n`);
      deleted.push(name);
    } catch (err) {
      // As kubectl delete: a refused delete is reported, and the others go on.
      if (!(err instanceof KubeError)) throw err;
      if (err.code === 404 && ignoreNotFound) continue;
      ctx.io.err(`${errorLine(err)}\n`);
      failed = true;
    }
  }
  if (ctx.flag("wait")) {
    for (const name of deleted) await waitGone(api, name, timeoutMs);
  }
  return failed ? 1 : 0;
}
