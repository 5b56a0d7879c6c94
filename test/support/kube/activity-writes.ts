// The writes of one OwnedAccessKey's status.lastActivity, as the API server stores them: a watch on
// the object that starts at the resourceVersion of a GET (so no write is missed), where each change
// of the value is one write. A PATCH that changes nothing is not a write: kube-apiserver stores
// nothing and sends no event. For tests of "at most one write per interval per key, all replicas
// together" (docs/decisions.md OAK-35) on any cluster: the node-less rig's or a real node's.

import type { KubeTestClient } from "./kube-client.js";

export interface ActivityWrite {
  /** status.lastActivity after the write (RFC 3339, whole seconds); "" when it was removed. */
  lastActivity: string;
  /** The object's resourceVersion after it. */
  resourceVersion: string;
  /** When the watch delivered it (ms since the epoch). */
  seenAt: number;
}

export interface ActivityWrites {
  /** status.lastActivity when the watch began ("" when unset). */
  readonly initial: string;
  /** Every change of status.lastActivity since, oldest first. */
  readonly writes: readonly ActivityWrite[];
  /** Why the count cannot be trusted (the watch failed, the key was deleted); undefined while it can. */
  readonly failure: string | undefined;
  stop(): void;
}

interface Key {
  metadata?: { resourceVersion?: string };
  status?: { lastActivity?: string };
}

/**
 * Starts counting the writes of status.lastActivity of the OwnedAccessKey `name` of `group`
 * (management.<domain>). The watch is opened again from the last resourceVersion when the server
 * ends it, as an informer does.
 */
export async function watchActivityWrites(
  client: KubeTestClient,
  group: string,
  name: string,
): Promise<ActivityWrites> {
  const collection = `/apis/${group}/v1/ownedaccesskeys`;
  const got = await client.request<Key>("GET", `${collection}/${encodeURIComponent(name)}`);
  if (got.status !== 200) throw new Error(`GET ownedaccesskey ${name}: ${got.status}`);
  let resourceVersion = got.body.metadata?.resourceVersion ?? "";
  const initial = got.body.status?.lastActivity ?? "";
  let last = initial;
  const writes: ActivityWrite[] = [];
  let failure: string | undefined;
  let stopped = false;
  let open: { stop(): void } | undefined;

  const watchFrom = (): void => {
    const query = new URLSearchParams({
      watch: "true",
      fieldSelector: `metadata.name=${name}`,
      resourceVersion,
      allowWatchBookmarks: "true",
    });
    const watch = client.watch(`${collection}?${query}`, (event) => {
      const object = event.object as Key & { code?: number; message?: string };
      if (event.type === "ERROR") {
        failure ??= `the watch failed: ${object.code ?? ""} ${object.message ?? ""}`;
        return;
      }
      resourceVersion = object.metadata?.resourceVersion ?? resourceVersion;
      if (event.type === "BOOKMARK") return;
      if (event.type === "DELETED") {
        failure ??= `ownedaccesskey ${name} was deleted`;
        return;
      }
      const value = object.status?.lastActivity ?? "";
      if (value === last) return;
      last = value;
      writes.push({ lastActivity: value, resourceVersion, seenAt: Date.now() });
    });
    open = watch;
    watch.done.then(
      () => {
        if (!stopped && failure === undefined) watchFrom();
      },
      (err: unknown) => {
        if (!stopped) failure ??= `the watch failed: ${String(err)}`;
      },
    );
  };
  watchFrom();
  return {
    initial,
    writes,
    get failure() {
      return failure;
    },
    stop: () => {
      stopped = true;
      open?.stop();
    },
  };
}

/**
 * Where `writes` break "at most one write of status.lastActivity per `intervalMs`": two
 * consecutive values (the first one and `initial` included) less than the interval apart, a value
 * that goes back, or one removed. Empty when there is none. The values are whole seconds, and a
 * write is made only when the new value is at least the interval after the stored one, so no
 * tolerance is needed.
 */
export function activityWriteViolations(
  initial: string,
  writes: readonly Pick<ActivityWrite, "lastActivity">[],
  intervalMs: number,
): string[] {
  const out: string[] = [];
  let previous = initial === "" ? undefined : Date.parse(initial);
  for (const [i, w] of writes.entries()) {
    const at = Date.parse(w.lastActivity);
    if (Number.isNaN(at)) {
      out.push(`write ${i}: lastActivity ${JSON.stringify(w.lastActivity)} is not a time`);
    } else if (previous !== undefined && at - previous < intervalMs) {
      out.push(
        `write ${i}: lastActivity ${w.lastActivity} is ${at - previous} ms after the one before ` +
          `(at least ${intervalMs} ms)`,
      );
    }
    if (!Number.isNaN(at)) previous = at;
  }
  return out;
}
