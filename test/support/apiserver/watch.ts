// Watch (`GET <collection>?watch=true`), as kube-apiserver serves it: a chunked JSON stream of
// `{"type":...,"object":...}` lines. From resourceVersion "" or "0" the stream starts with synthetic
// ADDED events for the current objects; from a later one it replays the changes after it, and a
// resourceVersion older than the kept history gets one ERROR event with a 410 Expired Status
// ("too old resource version"), as the watch cache answers.

import type { ServerResponse } from "node:http";
import { newBadRequest } from "../../../webhook/src/api/status.js";
import type { RequestInfo } from "./request-info.js";
import { parseSelectors, selects, type FieldScope, type Selectors } from "./selectors.js";
import type { RequestRecord } from "./server.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import { resourceKey, type KubeObject, type ObjectStore, type StoreEvent } from "./store.js";

export interface WatchOptions {
  /** How often a watch that allows bookmarks gets a BOOKMARK event. */
  bookmarkIntervalMs: number;
}

interface WatchParams {
  /** null: start with the current objects ("" or "0"). */
  from: number | null;
  bookmarks: boolean;
  timeoutMs: number | null;
  /** labelSelector and fieldSelector: objects moving in or out of them are ADDED or DELETED. */
  selectors: Selectors;
}

/** Whether the query asks for a watch (`watch=true` or `watch=1`, as kube parses booleans). */
export function isWatch(query: URLSearchParams): boolean {
  const value = query.get("watch");
  return value === "true" || value === "1";
}

/** Throws 400 BadRequest for a malformed resourceVersion, timeoutSeconds or selector. */
export function parseWatchParams(query: URLSearchParams, scope?: FieldScope): WatchParams {
  const selectors = parseSelectors(query, scope);
  const rv = query.get("resourceVersion") ?? "";
  if (rv !== "" && !/^\d+$/.test(rv)) {
    throw newBadRequest(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: invalid syntax`);
  }
  const timeout = query.get("timeoutSeconds");
  if (timeout !== null && !/^\d+$/.test(timeout)) {
    throw newBadRequest(`timeoutSeconds: Invalid value: ${JSON.stringify(timeout)}`);
  }
  const bookmarks = query.get("allowWatchBookmarks");
  return {
    from: rv === "" || rv === "0" ? null : Number(rv),
    bookmarks: bookmarks === "true" || bookmarks === "1",
    timeoutMs: timeout === null || timeout === "0" ? null : Number(timeout) * 1000,
    selectors,
  };
}

/** One open watch stream; end() closes it cleanly (the last chunk is sent). */
export class Watch {
  readonly status = 200;
  /** The request that opened it, once started. */
  record: RequestRecord | undefined;
  private res: ServerResponse | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly type: ResourceType,
    private readonly info: RequestInfo,
    private readonly params: WatchParams,
    private readonly options: WatchOptions,
    private readonly onEnd: (w: Watch) => void,
  ) {}

  /** Sends the headers, the initial events, then every matching change until end(). */
  start(res: ServerResponse, record: RequestRecord): void {
    this.res = res;
    this.record = record;
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
    res.flushHeaders();
    res.on("close", () => this.end());
    const initial = this.initialEvents();
    if (initial === null) {
      this.send({ type: "ERROR", object: this.expired() });
      this.end();
      return;
    }
    for (const e of initial) this.send(e);
    // Subscribing in the same tick as reading the history: no change can fall in between.
    this.unsubscribe = this.store.subscribe((e) => {
      const wire = this.matches(e) ? this.filtered(e) : null;
      if (wire) this.send(wire);
    });
    this.startTimers();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const t of this.timers) clearTimeout(t);
    this.unsubscribe?.();
    if (this.res && !this.res.writableEnded) this.res.end();
    this.onEnd(this);
  }

  private initialEvents(): { type: string; object: KubeObject }[] | null {
    if (this.params.from === null) {
      const objects = this.store.list(this.type, this.info.namespace);
      return objects
        .filter((o) => this.named(o) && selects(this.params.selectors, o))
        .map((object) => ({ type: "ADDED", object }));
    }
    const events = this.store.eventsSince(this.params.from);
    if (!events) return null;
    return events.flatMap((e) => {
      const wire = this.matches(e) ? this.filtered(e) : null;
      return wire ? [wire] : [];
    });
  }

  private startTimers(): void {
    if (this.params.bookmarks) {
      const tick = () => {
        this.send({ type: "BOOKMARK", object: this.bookmark() });
        this.timers.push(setTimeout(tick, this.options.bookmarkIntervalMs));
      };
      this.timers.push(setTimeout(tick, this.options.bookmarkIntervalMs));
    }
    if (this.params.timeoutMs !== null) {
      this.timers.push(setTimeout(() => this.end(), this.params.timeoutMs));
    }
  }

  private matches(e: StoreEvent): boolean {
    if (e.resourceKey !== resourceKey(this.type)) return false;
    if (this.type.namespaced && this.info.namespace && e.namespace !== this.info.namespace)
      return false;
    return this.named(e.object);
  }

  /**
   * The event as a watch with selectors sees it (kube's cacher): a change that moves an object into
   * the selection is ADDED, one that moves it out is DELETED; null when it stays outside.
   */
  private filtered(e: StoreEvent): { type: string; object: KubeObject } | null {
    const s = this.params.selectors;
    const now = selects(s, e.object);
    if (e.type !== "MODIFIED") return now ? toWire(e) : null;
    const before = e.previous ? selects(s, e.previous) : false;
    if (now) return { type: before ? "MODIFIED" : "ADDED", object: e.object };
    return before ? { type: "DELETED", object: e.object } : null;
  }

  /** A watch on `<collection>/<name>` only sees that object (kube turns it into a name selector). */
  private named(obj: KubeObject): boolean {
    return this.info.name === "" || obj.metadata.name === this.info.name;
  }

  private send(event: { type: string; object: unknown }): void {
    if (this.ended || !this.res || this.res.writableEnded) return;
    this.res.write(`${JSON.stringify(event)}\n`);
  }

  private bookmark(): object {
    return {
      kind: this.type.kind,
      apiVersion: apiVersionOf(this.type.group, this.type.version),
      metadata: { resourceVersion: this.store.currentRevision() },
    };
  }

  /** The Status kube's watch cache sends for a resourceVersion it no longer has. */
  private expired(): object {
    const message = `too old resource version: ${this.params.from} (${this.store.oldestRevision()})`;
    // "Expired" is not among the webhook's own StatusReasons: written out here.
    const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure" };
    return { ...status, message, reason: "Expired", code: 410 };
  }
}

function toWire(e: StoreEvent): { type: string; object: KubeObject } {
  return { type: e.type, object: e.object };
}
