// Every write to a collection, as a watch sees it: one entry per event, with the object's name, its
// resourceVersion and when it arrived. A write is an event whose resourceVersion the log has not
// seen for that object, so a relist or a bookmark is never counted; the first sight of an object
// that existed before the watch opened is not a write either.

import type { KubeTestClient } from "../kube/kube-client.js";

export interface Write {
  type: "ADDED" | "MODIFIED" | "DELETED";
  name: string;
  resourceVersion: string;
  at: number;
  object: Record<string, unknown>;
}

export interface WriteLog {
  writes: Write[];
  /** The writes to objects whose name `match` accepts, after `since` (ms, Date.now()). */
  since(since: number, match?: (name: string) => boolean): Write[];
  stop(): void;
}

interface Meta {
  name?: string;
  resourceVersion?: string;
}

/** Opens a watch on `collection` (a list path) from its current state. */
export async function writeLog(client: KubeTestClient, collection: string): Promise<WriteLog> {
  const list = await client.request<{ metadata: { resourceVersion: string } }>("GET", collection);
  if (list.status !== 200) throw new Error(`list ${collection}: ${list.status}`);
  const writes: Write[] = [];
  const seen = new Map<string, string>();
  const open = client.watch(
    `${collection}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}&allowWatchBookmarks=false`,
    (event) => {
      if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED") return;
      const object = event.object as Record<string, unknown> & { metadata: Meta };
      const name = object.metadata.name ?? "";
      const rv = object.metadata.resourceVersion ?? "";
      if (seen.get(name) === rv && event.type !== "DELETED") return;
      seen.set(name, rv);
      writes.push({ type: event.type, name, resourceVersion: rv, at: Date.now(), object });
    },
  );
  open.done.catch(() => undefined);
  return {
    writes,
    since: (since, match = () => true) => writes.filter((w) => w.at > since && match(w.name)),
    stop: () => open.stop(),
  };
}
