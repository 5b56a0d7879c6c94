// kubectl accesskey prune: deletes the expired keys among your own (--all: everyone's), as
// `kubectl delete -l …` deletes what a selector lists. Expired is the token webhook's rule
// (webhook/src/shared/key-expiry.ts) on the API server's clock (the list answer's Date). Each
// delete carries the uid and resourceVersion the key was judged by as preconditions, so a key
// renewed or replaced meanwhile is not deleted: the server refuses (409), and the key is judged
// again as it is now.

import type { Command, CommandContext } from "../cli/command.js";
import { CliError, KubeError, errorLine } from "../cli/errors.js";
import { dryRunSuffix, parseDryRun, type DryRun } from "../cli/dry-run.js";
import { SELECTION_HELP, SELECTION_OPTIONS, keySelection } from "../cli/key-selection.js";
import { WAIT_HELP, WAIT_OPTIONS, waitGone, waitTimeoutMs } from "../cli/wait-gone.js";
import { isExpired } from "../../../webhook/src/shared/key-expiry.js";
import type { AccessKeyApi, KubeObject } from "../kube/api.js";

export const command: Command = {
  name: "prune",
  summary: "Delete your expired access keys (--all: everyone's)",
  usage: "prune [--all] [-l SELECTOR] [--dry-run=client|server] [flags]",
  description: `Delete the expired OwnedAccessKeys among your own (spec.user is you, as the API
server's SelfSubjectReview names you), or among everyone's with --all. A key is expired when its
spec.ttl has passed since it was created (since its last activity with spec.ttlAfterLastActivity),
on the API server's clock; a key with spec.ttlAfterLastActivity is left alone for 5 more
minutes, since vgate writes status.lastActivity only once a minute. -l and --field-selector
narrow the keys looked at. A key that changed
after it was listed is deleted only if it is still expired (the delete carries its uid and
resourceVersion as preconditions). As kubectl delete, it asks no confirmation: see first with
--dry-run, or with kubectl accesskey list --expiring 1s.`,
  examples: `# See which of your keys would be deleted
kubectl accesskey prune --dry-run=client

# Delete your expired keys
kubectl accesskey prune

# Delete everyone's expired keys with a label, and wait until they are gone
kubectl accesskey prune --all -l team=ci --wait --timeout 1m`,
  options: {
    ...SELECTION_OPTIONS,
    "dry-run": { type: "string" },
    output: { type: "string", short: "o" },
    ...WAIT_OPTIONS,
  },
  flagHelp: [
    ...SELECTION_HELP,
    {
      flag: "--dry-run='none'",
      text: "client: only print what would be deleted; server: the API server checks each delete too",
    },
    {
      flag: "-o, --output=''",
      text: "name: print NAMEs only (kind/name), as kubectl delete -o name",
    },
    ...WAIT_HELP,
  ],
  run,
};

/** Times a key that keeps changing under us is judged again before it is left alone. */
const MAX_ATTEMPTS = 3;

/**
 * How long after its expiry on paper a key with ttlAfterLastActivity is still left alone: vgate
 * writes status.lastActivity at most once per --activity-write-interval (1m by default) plus a
 * flush (at most 10s), and counts a use it has not written yet (OAK-35), so such a key may still
 * log in for that long after status says it expired.
 */
export const ACTIVITY_MARGIN_MS = 5 * 60_000;

/** Whether prune deletes `key` at `now`: expired, and past the margin when it counts activity. */
export function prunable(key: KubeObject, now: number): boolean {
  const activity = (key["spec"] as { ttlAfterLastActivity?: unknown } | undefined)
    ?.ttlAfterLastActivity;
  return isExpired(key, activity === true ? now - ACTIVITY_MARGIN_MS : now);
}

async function run(ctx: CommandContext): Promise<number> {
  if (ctx.positionals.length > 0) {
    throw new CliError(
      `prune takes no arguments (got ${ctx.positionals.join(" ")}); use delete NAME`,
    );
  }
  const dryRun = parseDryRun(ctx.string("dry-run"), (line) => ctx.io.err(`Warning: ${line}\n`));
  const output = ctx.string("output") ?? "";
  if (output !== "" && output !== "name") {
    // kubectl delete's words.
    throw new CliError(`unexpected -o output mode: ${output}. We only support '-o name'`);
  }
  const timeoutMs = waitTimeoutMs(ctx.string("timeout"));
  const api = await ctx.api();
  const { items, serverTime } = await api.listWithVersion(await keySelection(ctx));
  // The server's clock from here on: its time at the list, plus what has passed since.
  const offset = (serverTime ?? Date.now()) - Date.now();
  const now = () => Date.now() + offset;
  // A key already being deleted is left to its finalizers.
  const expired = items.filter((o) => prunable(o, now()) && !o.metadata?.["deletionTimestamp"]);
  if (expired.length === 0) {
    // On standard output, as kubectl delete prints it (and delete -l here).
    ctx.io.out("No resources found\n");
    return 0;
  }
  const deleted: string[] = [];
  let failed = false;
  for (const key of expired) {
    const name = key.metadata?.name ?? "";
    let outcome: Outcome;
    try {
      outcome = await pruneKey(api, key, dryRun, now);
    } catch (err) {
      // As kubectl delete: a refused delete is reported, and the others go on.
      if (!(err instanceof KubeError)) throw err;
      ctx.io.err(`${errorLine(err)}\n`);
      failed = true;
      continue;
    }
    if (outcome === "deleted") {
      ctx.io.out(
        output === "name"
          ? `${api.kindGroup}/${name}\n`
          : `${api.kindGroup} "${name}" deleted${dryRunSuffix(dryRun)}\n`,
      );
      deleted.push(name);
    } else if (outcome !== "gone") {
      ctx.io.err(`${api.kindGroup} "${name}" kept: ${outcome}\n`);
    }
  }
  if (ctx.flag("wait") && dryRun === "none") {
    for (const name of deleted) await waitGone(api, name, timeoutMs);
  }
  return failed ? 1 : 0;
}

export type Outcome =
  "deleted" | "gone" | "it is no longer expired" | "it was replaced by a new key";

/** Deletes `key` if it is still the expired key it was; on a precondition failure, looks again. */
export async function pruneKey(
  api: AccessKeyApi,
  key: KubeObject,
  dryRun: DryRun,
  now: () => number,
): Promise<Outcome> {
  const name = key.metadata?.name ?? "";
  const uid = key.metadata?.["uid"];
  if (dryRun === "client") return "deleted";
  let current = key;
  for (let attempt = 1; ; attempt++) {
    const preconditions = {
      uid: typeof uid === "string" ? uid : undefined,
      resourceVersion: current.metadata?.resourceVersion,
    };
    try {
      await api.delete(name, { preconditions, dryRun: dryRun === "server" });
      return "deleted";
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return "gone";
      if (!(err instanceof KubeError && err.code === 409) || attempt >= MAX_ATTEMPTS) throw err;
    }
    try {
      current = await api.get(name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return "gone";
      throw err;
    }
    if (current.metadata?.["uid"] !== uid) return "it was replaced by a new key";
    if (!prunable(current, now())) return "it is no longer expired";
  }
}
