// An informer for one cluster-scoped collection (OwnedAccessKeys, Namespaces): LIST once, then WATCH
// from the list's resourceVersion and apply every change to a local map, as client-go's reflector
// does. Admission then answers "does this name exist?", and the token webhook "whose key is this?",
// from memory instead of a request per call. When the server closes a watch at its
// timeoutSeconds (every 5-10 minutes), the cache watches again from the last resourceVersion it
// saw and stays synced. Any trouble (an ERROR event such as 410 Expired "too old resource
// version", a broken stream or one that ends early, a failed request) marks the cache unsynced and
// relists after a jittered exponential backoff; callers must not trust an unsynced cache.

import { describeAnswer, describeError } from "./fail-closed.js";
import type { KubeResponse, OpenStream } from "./transport.js";

/** What the cache needs of KubeTransport. */
export interface CacheTransport {
  request(method: string, path: string): Promise<KubeResponse>;
  stream(path: string, onLine: (line: string) => void): OpenStream;
  redact(text: string): string;
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

export interface AccessKeyCacheOptions {
  /** Items per LIST page (limit/continue). */
  pageSize?: number;
  /** First relist delay after a failure; doubles per failure up to backoffCapMs, with jitter. */
  backoffStartMs?: number;
  backoffCapMs?: number;
  /** The server ends each watch after this long (client-go: random 5-10 minutes). */
  watchTimeoutSeconds?: number;
  /** Told about every change the cache applies (after a relist: the difference to before). */
  onChange?: (type: ChangeType, name: string) => void;
  /** Told why the cache went unsynced; the text carries no credentials and no object contents. */
  onError?: (message: string) => void;
}

/**
 * What the cache keeps of each object: the whole object, or only the part its readers need (the
 * namespace cache keeps labels), so memory follows what is used.
 */
export type Keep<T> = (object: Record<string, unknown>) => T;

const DEFAULTS = {
  pageSize: 500,
  backoffStartMs: 200,
  backoffCapMs: 10_000,
};
const MIN_WATCH_SECONDS = 300;
/** A watch that ran this long was healthy: the next failure starts the backoff afresh. */
const HEALTHY_WATCH_MS = 5_000;

export class WatchCache<T> {
  private readonly keys = new Map<string, T>();
  /** resourceVersion per name, to tell a relist's changes from what is already known. */
  private readonly versions = new Map<string, string>();
  private readonly options: typeof DEFAULTS & AccessKeyCacheOptions;
  private running = false;
  private isSynced = false;
  /** Bumped by stop() and every restart: callbacks of an older run are ignored. */
  private run = 0;
  private resourceVersion = "";
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private watch: OpenStream | undefined;
  private watchError: string | undefined;
  /** Why the cache last went unsynced (redacted); undefined while it never failed. */
  lastError: string | undefined;

  constructor(
    private readonly transport: CacheTransport,
    /** The collection, e.g. `/apis/management.loft.sh/v1/ownedaccesskeys` or `/api/v1/namespaces`. */
    private readonly collectionPath: string,
    private readonly keep: Keep<T>,
    options: AccessKeyCacheOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
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

  /** The cached object called `name`. Only trust it while synced(). */
  get(name: string): T | undefined {
    return this.keys.get(name);
  }

  get size(): number {
    return this.keys.size;
  }

  private async relist(run: number): Promise<void> {
    let listed: { items: Map<string, Record<string, unknown>>; resourceVersion: string };
    try {
      listed = await this.list(run);
    } catch (err) {
      return this.fail(run, err instanceof ListError ? err.message : describeError(err));
    }
    if (run !== this.run) return;
    this.replaceAll(listed.items);
    this.resourceVersion = listed.resourceVersion;
    this.isSynced = true;
    this.startWatch(run);
  }

  /** Every page of the collection; throws ListError for an answer that is not a usable list. */
  private async list(
    run: number,
  ): Promise<{ items: Map<string, Record<string, unknown>>; resourceVersion: string }> {
    const items = new Map<string, Record<string, unknown>>();
    let next = "";
    let resourceVersion: string;
    do {
      const query = `?limit=${this.options.pageSize}${next ? `&continue=${encodeURIComponent(next)}` : ""}`;
      const res = await this.transport.request("GET", this.collectionPath + query);
      if (run !== this.run) throw new ListError("stopped");
      const page = parseList(res);
      if (typeof page === "string") throw new ListError(page);
      for (const item of page.items) items.set(nameOf(item)!, item);
      resourceVersion = page.resourceVersion;
      next = page.continue;
    } while (next);
    return { items, resourceVersion };
  }

  private startWatch(run: number): void {
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? randomWatchSeconds();
    const query = new URLSearchParams({
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion: this.resourceVersion,
      timeoutSeconds: String(timeoutSeconds),
    });
    const openedAt = Date.now();
    this.watchError = undefined;
    const watch = this.transport.stream(`${this.collectionPath}?${query}`, (line) =>
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
    const name = nameOf(object);
    if (name === null) return this.endWatch(`malformed ${type} event: no metadata.name`);
    if (type === "DELETED") {
      this.keys.delete(name);
      this.versions.delete(name);
    } else {
      this.keys.set(name, this.keep(object));
      this.versions.set(name, rv);
    }
    if (rv) this.resourceVersion = rv;
    this.options.onChange?.(type, name);
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
  private replaceAll(items: Map<string, Record<string, unknown>>): void {
    const onChange = this.options.onChange;
    const before = new Map(this.versions);
    this.keys.clear();
    this.versions.clear();
    for (const [name, object] of items) {
      this.keys.set(name, this.keep(object));
      this.versions.set(name, resourceVersionOf(object));
    }
    if (!onChange) return;
    for (const name of before.keys()) if (!items.has(name)) onChange("DELETED", name);
    for (const [name, object] of items) {
      const old = before.get(name);
      if (old === undefined) onChange("ADDED", name);
      else if (old !== resourceVersionOf(object)) onChange("MODIFIED", name);
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
