// status.lastActivity, written in the background: at most once per minIntervalMs per key by all
// replicas together (docs/decisions.md OAK-35), in batches every flushIntervalMs, never on the
// request path. record() only notes the use; flush() decides again from the watch cache, which
// shows every replica's writes, and writes through the status subresource with the cached
// resourceVersion as a precondition, so of two replicas that decide at the same moment from the
// same object only one write lands and the other is a conflict, dropped. The writer and the cache
// are supplied by the shell. A login with the previous key of a rotation (spec.previousKey) is
// written the same way, and by the same rule, to status.previousKey {until, lastActivity}, where
// `until` names the window the login was in (docs/decisions.md OAK-38).

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { parseRfc3339 } from "../shared/rfc3339.js";
import { expiresAt } from "../shared/key-expiry.js";
import { ownPath } from "../shared/own-path.js";
import {
  previousKeyOf,
  storedPreviousKeyActivity,
  type PreviousKeyActivity,
} from "../shared/previous-key.js";

/** What a write sets in status: the last activity, the weakKey flag, the previous key's use. */
export interface ActivityStatus {
  lastActivity?: string;
  weakKey?: boolean;
  /** The last login with the previous key, and the deadline of its window (RFC 3339 both). */
  previousKey?: { until: string; lastActivity: string };
}

/**
 * Writes `status` to the key `name`, only while the object's resourceVersion is still
 * `resourceVersion` (kube's optimistic concurrency): "conflict" when it changed, "gone" when the
 * key no longer exists; throws when the API server cannot be asked or refuses.
 */
export type ActivityWriter = (
  name: string,
  status: ActivityStatus,
  resourceVersion: string | undefined,
) => Promise<"written" | "gone" | "conflict">;

/** The keys as the watch cache holds them now: what every replica's writes show up in. */
export interface CurrentKeys {
  get(name: string): OwnedAccessKey | undefined;
}

/**
 * What became of one queued key at a flush: written; a conflict (another writer changed the key
 * since the cache showed it: decided again at the next flush); covered (the cache already shows a
 * last activity recent enough, written by another replica, so nothing is written); failed (kept
 * for the next flush); gone (the key was deleted).
 */
export type ActivityOutcome = "written" | "conflict" | "covered" | "failed" | "gone";

/** status.lastActivity is written at most this often per key (--activity-write-interval). */
export const DEFAULT_ACTIVITY_WRITE_INTERVAL_MS = 60_000;

/**
 * How often queued activity is flushed: a sixth of the write interval, at most 10 s, so a login
 * reaches status within a sixth of the interval and the writes of many keys are batched.
 */
export function flushIntervalFor(minIntervalMs: number): number {
  return Math.min(10_000, Math.round(minIntervalMs / 6));
}

export interface ActivityOptions {
  /** Writes per flush at most (200 every 10 s: 20 a second); the rest wait for the next flush. */
  maxWritesPerFlush?: number;
  minIntervalMs?: number;
  flushIntervalMs?: number;
  concurrency?: number;
  now?: () => number;
  onError?: (name: string, err: unknown) => void;
  /** Told what became of each key a flush looked at (a metric). */
  onOutcome?: (outcome: ActivityOutcome) => void;
}

/** As metav1.Time serialises: RFC 3339 in UTC with whole seconds, e.g. 2026-01-02T03:04:05Z. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function storedLastActivity(key: OwnedAccessKey): number | undefined {
  const value = ownPath(key, ["status", "lastActivity"]);
  return typeof value === "string" ? (parseRfc3339(value) ?? undefined) : undefined;
}

function later(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

export class ActivityRecorder {
  private readonly minIntervalMs: number;
  private readonly flushIntervalMs: number;
  private readonly concurrency: number;
  private readonly maxWritesPerFlush: number;
  private readonly now: () => number;
  private readonly onError: ((name: string, err: unknown) => void) | undefined;
  private readonly onOutcome: ((outcome: ActivityOutcome) => void) | undefined;
  /**
   * The newest login this replica saw, per key (ms), while status does not show it and it can
   * still move the key's expiry: ttlAfterLastActivity counts from it (latest()).
   */
  private readonly seen = new Map<string, number>();
  /** The last activity this recorder wrote (whole seconds, ms), until the cache shows it. */
  private readonly written = new Map<string, number>();
  /** Keys a flush must look at, oldest first (a Set keeps insertion order). */
  private readonly queue = new Set<string>();
  /** status.weakKey the last login showed, where the stored one differs. */
  private readonly weak = new Map<string, boolean>();
  /** The newest login with the previous key this replica saw, per key, with its window. */
  private readonly seenPrevious = new Map<string, PreviousKeyActivity>();
  /** The status.previousKey this recorder wrote, until the cache shows it. */
  private readonly writtenPrevious = new Map<string, PreviousKeyActivity>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Flushes started and not yet finished; the timer adds none while one is running. */
  private flushes = 0;
  private stopped = false;

  constructor(
    private readonly writer: ActivityWriter,
    private readonly keys: CurrentKeys,
    options: ActivityOptions = {},
  ) {
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_ACTIVITY_WRITE_INTERVAL_MS;
    this.flushIntervalMs = options.flushIntervalMs ?? flushIntervalFor(this.minIntervalMs);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.maxWritesPerFlush = Math.max(1, options.maxWritesPerFlush ?? 200);
    this.now = options.now ?? Date.now;
    this.onError = options.onError;
    this.onOutcome = options.onOutcome;
  }

  /**
   * Notes a successful login at `at` (ms), with a key that is `weak` (shorter than the minimum
   * length) or not, made with the key's `previous` key (in its grace window) or its own. O(1);
   * writes nothing itself. The key is queued when its stored last activity (or the one this
   * recorder wrote) is at least minIntervalMs older, when its stored weakKey differs, or when the
   * same holds of the previous key's last login in this window.
   */
  record(key: OwnedAccessKey, at: number, weak = false, previous = false): void {
    const name = key.metadata?.name;
    if (this.stopped || typeof name !== "string" || name === "" || !Number.isFinite(at)) return;
    this.seen.set(name, Math.max(this.seen.get(name) ?? at, at));
    const window = previous ? previousKeyOf(key) : undefined;
    if (window) {
      const before = this.seenPrevious.get(name);
      const last = before?.until === window.until ? Math.max(before.lastActivity, at) : at;
      this.seenPrevious.set(name, { until: window.until, lastActivity: last });
    }
    if (weak !== (ownPath(key, ["status", "weakKey"]) === true)) this.weak.set(name, weak);
    else this.weak.delete(name);
    if (this.due(name, key) !== undefined) this.queue.add(name);
  }

  /** The newest login this replica knows of for a key and status may not show yet, for expiry. */
  latest(name: string): number | undefined {
    return this.seen.get(name);
  }

  /** How many keys wait to be looked at by a flush. */
  get pending(): number {
    return this.queue.size;
  }

  /** Forgets a deleted key. */
  forget(name: string): void {
    this.seen.delete(name);
    this.written.delete(name);
    this.queue.delete(name);
    this.weak.delete(name);
    this.seenPrevious.delete(name);
    this.writtenPrevious.delete(name);
  }

  /**
   * Writes every queued key that is still due by the cache, at most `concurrency` at a time. A
   * failed write stays queued for the next flush, behind the others; a conflict is decided again
   * at the next flush; flushes never overlap.
   */
  flush(): Promise<void> {
    this.flushes++;
    this.chain = this.chain.then(() => this.flushOnce()).finally(() => this.flushes--);
    return this.chain;
  }

  /** Flushes every flushIntervalMs, without keeping the process alive. */
  start(): void {
    if (this.timer || this.stopped) return;
    // A slow API server must not pile up flushes: a tick while one runs does nothing.
    this.timer = setInterval(() => {
      if (this.flushes === 0) void this.flush();
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer, refuses further records and flushes once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /**
   * What a write of `key` (as the cache or a login shows it) must set now, or undefined when
   * nothing: the newest login, when it is at least minIntervalMs after the stored last activity and
   * after the one this recorder wrote (both whole seconds, so written values are at least the
   * interval apart); weakKey, when the last login disagrees with the stored one; previousKey, by
   * the lastActivity rule within the window (previousKeyDue).
   */
  private due(name: string, key: OwnedAccessKey): ActivityStatus | undefined {
    const status: ActivityStatus = {};
    const stored = later(storedLastActivity(key), this.written.get(name));
    const seen = this.seen.get(name);
    if (seen !== undefined && (stored === undefined || seen - stored >= this.minIntervalMs)) {
      status.lastActivity = rfc3339Seconds(seen);
    }
    const weak = this.weak.get(name);
    if (weak !== undefined && weak !== (ownPath(key, ["status", "weakKey"]) === true)) {
      status.weakKey = weak;
    }
    const previous = this.previousKeyDue(name, key);
    if (previous) status.previousKey = previous;
    return Object.keys(status).length > 0 ? status : undefined;
  }

  /**
   * The previous key's newest login, when it is at least minIntervalMs after the one status shows
   * for the same window (or this recorder wrote), or when status shows none or another window's.
   * Nothing once the key's window is no longer the login's (a rotation since replaced or dropped
   * it): that login belongs to a key that no longer logs in.
   */
  private previousKeyDue(
    name: string,
    key: OwnedAccessKey,
  ): ActivityStatus["previousKey"] | undefined {
    const seen = this.seenPrevious.get(name);
    if (!seen || previousKeyOf(key)?.until !== seen.until) return undefined;
    let stored: number | undefined;
    for (const known of [storedPreviousKeyActivity(key), this.writtenPrevious.get(name)]) {
      if (known?.until === seen.until) stored = later(stored, known.lastActivity);
    }
    if (stored !== undefined && seen.lastActivity - stored < this.minIntervalMs) return undefined;
    return { until: rfc3339Seconds(seen.until), lastActivity: rfc3339Seconds(seen.lastActivity) };
  }

  private async flushOnce(): Promise<void> {
    // Oldest first; the rest wait for the next flush, so thousands of keys used at once cannot
    // flood the API server with PATCHes. Nothing is lost: a key stays queued until it is written,
    // or until the cache shows that it needs no write.
    const batch = [...this.queue].slice(0, this.maxWritesPerFlush);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length) await this.writeOne(batch[next++]!);
    };
    const workers = Math.min(this.concurrency, batch.length);
    await Promise.all(Array.from({ length: workers }, worker));
    this.prune();
  }

  private async writeOne(name: string): Promise<void> {
    // forget() may have dropped it since the batch was taken.
    if (!this.queue.has(name)) return;
    // Decided from the cache as it is now: another replica's write since the login shows here.
    const key = this.keys.get(name);
    if (!key) return this.done(name, "gone");
    const status = this.due(name, key);
    if (!status) {
      this.queue.delete(name);
      return this.outcome("covered");
    }
    let result: "written" | "gone" | "conflict";
    try {
      result = await Promise.resolve().then(() =>
        this.writer(name, status, key.metadata?.resourceVersion),
      );
    } catch (err) {
      // Behind the others, so a key whose write keeps failing cannot hold up the rest.
      if (this.queue.delete(name)) this.queue.add(name);
      this.outcome("failed");
      return this.report(name, err);
    }
    if (result === "gone") return this.done(name, "gone");
    if (result === "conflict") return this.outcome("conflict");
    if (status.lastActivity !== undefined) {
      this.written.set(name, parseRfc3339(status.lastActivity)!);
    }
    if (status.weakKey !== undefined && this.weak.get(name) === status.weakKey) {
      this.weak.delete(name);
    }
    if (status.previousKey !== undefined) {
      this.writtenPrevious.set(name, {
        until: parseRfc3339(status.previousKey.until)!,
        lastActivity: parseRfc3339(status.previousKey.lastActivity)!,
      });
    }
    // A login during the write may need one more (more than the interval later, or weakKey).
    if (this.queue.has(name) && !this.due(name, key)) this.queue.delete(name);
    this.outcome("written");
  }

  private done(name: string, outcome: ActivityOutcome): void {
    this.forget(name);
    this.outcome(outcome);
  }

  private outcome(outcome: ActivityOutcome): void {
    try {
      this.onOutcome?.(outcome);
    } catch {
      // A metric that fails must not stop the flush.
    }
  }

  /** Tells onError; an onError that throws must not break later flushes. */
  private report(name: string, err: unknown): void {
    try {
      this.onError?.(name, err);
    } catch {
      // Nothing more to do: the write stays queued.
    }
  }

  /**
   * Drops what no longer matters: a written value once the cache shows it (or a later one) or once
   * it is an interval old, and a login that no longer moves the key's expiry (the key has no
   * ttlAfterLastActivity, status shows it, or the key has expired anyway). The same for the
   * previous key's, which moves no expiry: its login is dropped once no flush needs it.
   */
  private prune(): void {
    const now = this.now();
    for (const [name, at] of this.written) {
      const key = this.keys.get(name);
      const stored = key && storedLastActivity(key);
      if (!key || now - at >= this.minIntervalMs || (stored !== undefined && stored >= at)) {
        this.written.delete(name);
      }
    }
    for (const [name, wrote] of this.writtenPrevious) {
      const key = this.keys.get(name);
      const stored = key && storedPreviousKeyActivity(key);
      const shown = stored?.until === wrote.until && stored.lastActivity >= wrote.lastActivity;
      if (!key || now - wrote.lastActivity >= this.minIntervalMs || shown) {
        this.writtenPrevious.delete(name);
      }
    }
    for (const name of this.seenPrevious.keys()) {
      if (!this.queue.has(name)) this.seenPrevious.delete(name);
    }
    for (const [name, at] of this.seen) {
      if (this.queue.has(name)) continue;
      const key = this.keys.get(name);
      const until = key && expiresAt(key, { localLastActivity: at });
      if (!key || until === undefined || until <= now || until === expiresAt(key)) {
        this.seen.delete(name);
      }
    }
  }
}
