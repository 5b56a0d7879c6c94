// An informer for one collection (OwnedAccessKeys, Namespaces, Endpoints): LIST once, then WATCH
// from the list's resourceVersion and apply every change to a local map, as client-go's reflector
// does. Admission then answers "does this name exist?", and the token webhook "whose key is this?",
// from memory instead of a request per call. When the server closes a watch at its
// timeoutSeconds (every 5-10 minutes), the cache watches again from the last resourceVersion it
// saw and stays synced. Any trouble (an ERROR event such as 410 Expired "too old resource
// version", a broken stream or one that ends early, a failed request) marks the cache unsynced and
// relists after a jittered exponential backoff; callers must not trust an unsynced cache.
//
// Objects are keyed as client-go's MetaNamespaceKeyFunc keys them: "namespace/name" for namespaced
// objects, "name" for cluster-scoped ones, so one cache may watch a namespace's collection or the
// same kind across all namespaces (`/api/v1/endpoints`).

import { describeAnswer, describeError } from "./answer-text.js";
import type { KubeResponse, OpenStream } from "../../shared/transport.js";
import { isObject } from "../../shared/json.js";

/** What the cache needs of KubeTransport. */
export interface CacheTransport {
  request(method: string, path: string): Promise<KubeResponse>;
  stream(path: string, onLine: (line: string) => void): OpenStream;
  redact(text: string): string;
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

export interface WatchCacheOptions {
  /** Items per LIST page (limit/continue). */
  pageSize?: number;
  /** First relist delay after a failure; doubles per failure up to backoffCapMs, with jitter. */
  backoffStartMs?: number;
  backoffCapMs?: number;
  /** The server ends each watch after this long (client-go: random 5-10 minutes). */
  watchTimeoutSeconds?: number;
  /**
   * Only objects matching this label selector (`a=b,c!=d`, `app in (x,y)`), sent on LIST and
   * WATCH as the API server's labelSelector parameter.
   */
  labelSelector?: string;
  /**
   * Told about every change the cache applies (after a relist: the difference to before), with the
   * object's key ("namespace/name", or "name" for cluster-scoped objects).
   */
  onChange?: (type: ChangeType, key: string) => void;
  /** Told why the cache went unsynced; the text carries no credentials and no object contents. */
  onError?: (message: string) => void;
}

/**
 * What the cache keeps of each object: the whole object, or only the part its readers need (the
 * namespace cache keeps labels), so memory follows what is used.
 */
export type Keep<T> = (object: Record<string, unknown>) => T;

/**
 * Where a cache holds what it keeps, with each object's resourceVersion: a Map (MapStore) unless
 * the collection is large enough for a compact store (packed-store.ts) to matter.
 */
export interface ObjectStore<T> {
  get(key: string): T | undefined;
  /** The resourceVersion the object was stored with. */
  version(key: string): string | undefined;
  set(key: string, object: T, version: string): void;
  delete(key: string): void;
  keys(): IterableIterator<string>;
  readonly size: number;
}

/** Objects in a Map, as they are kept. */
export class MapStore<T> implements ObjectStore<T> {
  private readonly objects = new Map<string, { object: T; version: string }>();

  get(key: string): T | undefined {
    return this.objects.get(key)?.object;
  }

  version(key: string): string | undefined {
    return this.objects.get(key)?.version;
  }

  set(key: string, object: T, version: string): void {
    this.objects.set(key, { object, version });
  }

  delete(key: string): void {
    this.objects.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.objects.keys();
  }

  get size(): number {
    return this.objects.size;
  }
}

const DEFAULTS = {
  pageSize: 500,
  backoffStartMs: 200,
  backoffCapMs: 10_000,
};
const MIN_WATCH_SECONDS = 300;
/** A watch that ran this long was healthy: the next failure starts the backoff afresh. */
const HEALTHY_WATCH_MS = 5_000;

export class WatchCache<T> {
  private objects: ObjectStore<T>;
  private readonly options: typeof DEFAULTS & WatchCacheOptions;
  private running = false;
  private isSynced = false;
  /** Bumped by stop() and every restart: callbacks of an older run are ignored. */
  private run = 0;
  private resourceVersion = "";
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private watch: OpenStream | undefined;
  private watchError: string | undefined;
  /** waitForSync() callers, told when the cache next becomes synced. */
  private readonly syncWaiters = new Set<() => void>();
  /** Why the cache last went unsynced (redacted); undefined while it never failed. */
  lastError: string | undefined;

  constructor(
    private readonly transport: CacheTransport,
    /** The collection, e.g. `/apis/management.loft.sh/v1/ownedaccesskeys` or `/api/v1/namespaces`. */
    private readonly collectionPath: string,
    private readonly keep: Keep<T>,
    options: WatchCacheOptions = {},
    /**
     * Makes an empty store; each LIST fills a new one. A store also holds each resourceVersion, to
     * tell a relist's changes from what is already known.
     */
    private readonly newStore: () => ObjectStore<T> = () => new MapStore<T>(),
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.objects = newStore();
  }

  /** Starts listing and watching; calling it again while running does nothing. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.relist(++this.run);
  }

  /** Stops watching and retrying; the cache is unsynced until started again. */
  stop(): void {
    this.running = false;
    this.isSynced = false;
    this.run += 1;
    clearTimeout(this.timer);
    this.watch?.abort();
    this.watch = undefined;
  }

  /** True after a LIST succeeded and while its watch has not failed. */
  synced(): boolean {
    return this.isSynced;
  }

  /**
   * The cached object with this key ("namespace/name", or "name" when cluster-scoped). Only trust
   * it while synced().
   */
  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  get size(): number {
    return this.objects.size;
  }

  /** The keys of every cached object. Only trust them while synced(). */
  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Every cached object with its key. Only trust them while synced(). */
  entries(): [string, T][] {
    return this.keys().map((key): [string, T] => [key, this.objects.get(key)!]);
  }

  /**
   * Resolves once the cache is synced (at once when it is); rejects with the signal's reason when
   * `signal` aborts first. Waits across failures and relists, and across stop() and start().
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.syncWaiters.delete(done);
        reject(abortReason(signal!));
      };
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.syncWaiters.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private markSynced(): void {
    this.isSynced = true;
    const waiters = [...this.syncWaiters];
    this.syncWaiters.clear();
    for (const done of waiters) done();
  }

  /** `?a=b&...` with the label selector, when there is one. */
  private query(params: Record<string, string>): string {
    const all = new URLSearchParams(params);
    if (this.options.labelSelector) all.set("labelSelector", this.options.labelSelector);
    return `?${all}`;
  }

  private async relist(run: number): Promise<void> {
    let listed: { items: ObjectStore<T>; resourceVersion: string };
    try {
      listed = await this.list(run);
    } catch (err) {
      return this.fail(run, err instanceof ListError ? err.message : describeError(err));
    }
    if (run !== this.run) return;
    this.replaceAll(listed.items);
    this.resourceVersion = listed.resourceVersion;
    this.markSynced();
    this.startWatch(run);
  }

  /**
   * Every page of the collection, each item kept in a new store as its page arrives, so a large
   * list never holds every whole object at once (100,000 OwnedAccessKeys as the API server sends
   * them are ~100 MB of heap, what vgate keeps of them a fraction). Throws ListError for an answer
   * that is not a usable list.
   */
  private async list(run: number): Promise<{ items: ObjectStore<T>; resourceVersion: string }> {
    const items = this.newStore();
    let next = "";
    let resourceVersion: string;
    do {
      const params: Record<string, string> = { limit: String(this.options.pageSize) };
      if (next) params["continue"] = next;
      const res = await this.transport.request("GET", this.collectionPath + this.query(params));
      if (run !== this.run) throw new ListError("stopped");
      const page = parseList(res);
      if (typeof page === "string") throw new ListError(page);
      for (const item of page.items)
        items.set(keyOf(item)!, this.keep(item), resourceVersionOf(item));
      resourceVersion = page.resourceVersion;
      next = page.continue;
    } while (next);
    return { items, resourceVersion };
  }

  private startWatch(run: number): void {
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? randomWatchSeconds();
    const query = this.query({
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion: this.resourceVersion,
      timeoutSeconds: String(timeoutSeconds),
    });
    const openedAt = Date.now();
    this.watchError = undefined;
    const watch = this.transport.stream(this.collectionPath + query, (line) =>
      this.onLine(run, line),
    );
    this.watch = watch;
    // The server's own timeout ends the watch at timeoutSeconds; an end long before that is not it.
    const timedOutAfter = openedAt + (timeoutSeconds * 1000) / 2;
    watch.done.then(
      (res) => this.watchEnded(run, openedAt, timedOutAfter, res),
      (err: unknown) => this.watchEnded(run, openedAt, timedOutAfter, err),
    );
  }

  private watchEnded(run: number, openedAt: number, timedOutAfter: number, outcome: unknown): void {
    if (run !== this.run) return;
    if (Date.now() - openedAt >= HEALTHY_WATCH_MS) this.failures = 0;
    if (this.watchError) return this.fail(run, this.watchError);
    if (isResponse(outcome) && outcome.status === 200 && Date.now() >= timedOutAfter) {
      // What client-go's reflector does: every event up to resourceVersion is applied, so watching
      // on from there loses nothing and needs no relist. A 410 on the new watch still relists.
      this.watch = undefined;
      return this.startWatch(run);
    }
    if (isResponse(outcome)) {
      const why = outcome.status === 200 ? "the watch ended" : describeAnswer(outcome);
      return this.fail(run, why);
    }
    this.fail(run, describeError(outcome));
  }

  /** Applies one watch event; a malformed one or an ERROR ends the watch (then: relist). */
  private onLine(run: number, line: string): void {
    if (run !== this.run || this.watchError) return;
    const event = parseEvent(line);
    if (typeof event === "string") return this.endWatch(event);
    const { type, object } = event;
    if (type === "ERROR") return this.endWatch(`the watch failed: ${statusText(object)}`);
    const rv = resourceVersionOf(object);
    if (type === "BOOKMARK") {
      if (rv) this.resourceVersion = rv;
      return;
    }
    const key = keyOf(object);
    if (key === null) return this.endWatch(`malformed ${type} event: no metadata.name`);
    if (type === "DELETED") {
      this.objects.delete(key);
    } else {
      this.objects.set(key, this.keep(object), rv);
    }
    if (rv) this.resourceVersion = rv;
    this.options.onChange?.(type, key);
  }

  private endWatch(why: string): void {
    this.watchError ??= why;
    this.isSynced = false;
    this.watch?.abort();
  }

  private fail(run: number, why: string): void {
    if (run !== this.run || !this.running) return;
    this.isSynced = false;
    this.watch = undefined;
    this.lastError = this.transport.redact(why);
    this.options.onError?.(this.lastError);
    const delay = backoff(this.failures++, this.options.backoffStartMs, this.options.backoffCapMs);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.relist(run), delay);
    this.timer.unref();
  }

  /** Installs a fresh LIST, telling onChange what differs from before. */
  private replaceAll(items: ObjectStore<T>): void {
    const onChange = this.options.onChange;
    const before = this.objects;
    this.objects = items;
    if (!onChange || before.size === 0) {
      if (onChange) for (const name of items.keys()) onChange("ADDED", name);
      return;
    }
    for (const name of before.keys())
      if (items.version(name) === undefined) onChange("DELETED", name);
    for (const name of items.keys()) {
      const old = before.version(name);
      if (old === undefined) onChange("ADDED", name);
      else if (old !== items.version(name)) onChange("MODIFIED", name);
    }
  }
}

class ListError extends Error {
  override readonly name = "ListError";
}

interface ListPage {
  items: Record<string, unknown>[];
  resourceVersion: string;
  continue: string;
}

/** A page of the list, or why the answer is not one. Items without a name are skipped. */
export function parseList(res: KubeResponse): ListPage | string {
  if (res.status !== 200) return `cannot list: ${describeAnswer(res)}`;
  const body = res.body;
  if (!isObject(body) || !Object.hasOwn(body, "items") || !Array.isArray(body["items"]))
    return "cannot list: the answer is not a list";
  const meta = Object.hasOwn(body, "metadata") ? body["metadata"] : undefined;
  const resourceVersion = isObject(meta) ? stringField(meta, "resourceVersion") : "";
  if (!resourceVersion) return "cannot list: the answer has no metadata.resourceVersion";
  const items = (body["items"] as unknown[]).filter((i) => nameOf(i) !== null);
  return {
    items: items as Record<string, unknown>[],
    resourceVersion,
    continue: isObject(meta) ? stringField(meta, "continue") : "",
  };
}

type WatchEventType = ChangeType | "BOOKMARK" | "ERROR";
const EVENT_TYPES: readonly string[] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];

/** One watch line, or why it is not a watch event (never quoting it: it may hold a key). */
export function parseEvent(
  line: string,
): { type: WatchEventType; object: Record<string, unknown> } | string {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return "malformed watch event: not JSON";
  }
  if (!isObject(event)) return "malformed watch event: not an object";
  const type = stringField(event, "type");
  if (!EVENT_TYPES.includes(type)) return `unknown watch event type ${JSON.stringify(type)}`;
  const object = Object.hasOwn(event, "object") ? event["object"] : undefined;
  if (!isObject(object)) return `malformed ${type} event: no object`;
  return { type: type as WatchEventType, object };
}

/** The delay before retry number `failures` (0-based): start * 2^failures, capped, jittered. */
export function backoff(failures: number, startMs: number, capMs: number): number {
  const base = Math.min(capMs, startMs * 2 ** Math.min(failures, 30));
  // Up to 20% jitter spreads the relists of many replicas after a shared outage.
  return Math.min(capMs, base * (1 + 0.2 * Math.random()));
}

function randomWatchSeconds(): number {
  return Math.floor(MIN_WATCH_SECONDS * (1 + Math.random()));
}

/** "namespace/name", or "name" for a cluster-scoped object (client-go's MetaNamespaceKeyFunc). */
export function keyOf(obj: unknown): string | null {
  const name = nameOf(obj);
  if (name === null) return null;
  const meta = (obj as Record<string, unknown>)["metadata"] as Record<string, unknown>;
  const namespace = stringField(meta, "namespace");
  return namespace ? `${namespace}/${name}` : name;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error("aborted");
}

function nameOf(obj: unknown): string | null {
  if (!isObject(obj) || !Object.hasOwn(obj, "metadata")) return null;
  const meta = obj["metadata"];
  const name = isObject(meta) ? stringField(meta, "name") : "";
  return name || null;
}

function resourceVersionOf(obj: unknown): string {
  if (!isObject(obj) || !Object.hasOwn(obj, "metadata")) return "";
  const meta = obj["metadata"];
  return isObject(meta) ? stringField(meta, "resourceVersion") : "";
}

/** `410 Expired: too old resource version: ...` from a metav1.Status. */
function statusText(obj: unknown): string {
  if (!isObject(obj)) return "unknown error";
  const code = Object.hasOwn(obj, "code") ? obj["code"] : undefined;
  const parts = [typeof code === "number" ? String(code) : "", stringField(obj, "reason")];
  const head = parts.filter(Boolean).join(" ") || "error";
  const message = stringField(obj, "message");
  return message ? `${head}: ${message}` : head;
}

function isResponse(value: unknown): value is KubeResponse {
  return isObject(value) && typeof value["status"] === "number" && !(value instanceof Error);
}

function stringField(obj: Record<string, unknown>, field: string): string {
  const value = Object.hasOwn(obj, field) ? obj[field] : undefined;
  return typeof value === "string" ? value : "";
}
