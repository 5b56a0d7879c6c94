// status.lastActivity, written in the background: at most once per minIntervalMs per key, in
// batches every flushIntervalMs, never on the request path. record() only notes the use; flush()
// writes through the status subresource (the writer, supplied by the shell).

import type { OwnedAccessKey } from "../api/ownedaccesskey.js";
import { parseRfc3339 } from "../accesskeys/deletion.js";
import { ownPath } from "../accesskeys/json-fields.js";

/**
 * Writes status.lastActivity, and status.weakKey when it must change; "gone" when the key no
 * longer exists.
 */
export type ActivityWriter = (
  name: string,
  lastActivity: string,
  weakKey?: boolean,
) => Promise<"written" | "gone">;

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
}

/** As metav1.Time serialises: RFC 3339 in UTC with whole seconds, e.g. 2026-01-02T03:04:05Z. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function storedLastActivity(key: OwnedAccessKey): number | undefined {
  const value = ownPath(key, ["status", "lastActivity"]);
  return typeof value === "string" ? (parseRfc3339(value) ?? undefined) : undefined;
}

export class ActivityRecorder {
  private readonly minIntervalMs: number;
  private readonly flushIntervalMs: number;
  private readonly concurrency: number;
  private readonly maxWritesPerFlush: number;
  private readonly now: () => number;
  private readonly onError: ((name: string, err: unknown) => void) | undefined;
  /** The newest activity this recorder queued or wrote, per key (ms; written in whole seconds). */
  private readonly known = new Map<string, number>();
  /** Activity waiting to be written, per key. */
  private readonly queue = new Map<string, number>();
  /** status.weakKey to write with the key's next activity, where the stored one is wrong. */
  private readonly weak = new Map<string, boolean>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Flushes started and not yet finished; the timer adds none while one is running. */
  private flushes = 0;
  private stopped = false;

  constructor(
    private readonly writer: ActivityWriter,
    options: ActivityOptions = {},
  ) {
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_ACTIVITY_WRITE_INTERVAL_MS;
    this.flushIntervalMs = options.flushIntervalMs ?? flushIntervalFor(this.minIntervalMs);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.maxWritesPerFlush = Math.max(1, options.maxWritesPerFlush ?? 200);
    this.now = options.now ?? Date.now;
    this.onError = options.onError;
  }

  /**
   * Notes a successful login at `at` (ms), with a key that is `weak` (shorter than the minimum
   * length) or not. O(1); writes nothing itself. A weakKey that differs from the stored status is
   * written with the next flush, whatever the last activity.
   */
  record(key: OwnedAccessKey, at: number, weak = false): void {
    const name = key.metadata?.name;
    if (this.stopped || typeof name !== "string" || name === "" || !Number.isFinite(at)) return;
    const storedWeak = ownPath(key, ["status", "weakKey"]) === true;
    const fixWeak = weak !== storedWeak && this.weak.get(name) !== weak;
    if (fixWeak) this.weak.set(name, weak);
    const stored = storedLastActivity(key);
    const mine = this.known.get(name);
    const last = stored === undefined || (mine !== undefined && mine > stored) ? mine : stored;
    if (!fixWeak && last !== undefined && at - last < this.minIntervalMs) return;
    this.known.set(name, at);
    this.queue.set(name, at);
  }

  /** The newest activity this recorder knows of for a key (queued or written), for expiry. */
  latest(name: string): number | undefined {
    return this.known.get(name);
  }

  /** How many keys wait to be written. */
  get pending(): number {
    return this.queue.size;
  }

  /** Forgets a deleted key. */
  forget(name: string): void {
    this.known.delete(name);
    this.queue.delete(name);
    this.weak.delete(name);
  }

  /**
   * Writes every queued key, at most `concurrency` at a time. A failed write stays queued for the
   * next flush unless a newer activity replaced it; flushes never overlap.
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

  private async flushOnce(): Promise<void> {
    // Oldest first (a Map keeps insertion order, and a newer use of a queued key keeps its place);
    // the rest wait for the next flush, so thousands of keys used at once cannot flood the API
    // server with PATCHes. Nothing is lost: a key stays queued until it is written.
    const batch = [...this.queue.entries()].slice(0, this.maxWritesPerFlush);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length) {
        const [name, at] = batch[next++]!;
        await this.writeOne(name, at);
      }
    };
    const workers = Math.min(this.concurrency, batch.length);
    await Promise.all(Array.from({ length: workers }, worker));
    this.prune();
  }

  private async writeOne(name: string, at: number): Promise<void> {
    // forget() may have dropped it, or a newer record replaced it, since the batch was taken.
    if (this.queue.get(name) !== at) return;
    const weak = this.weak.get(name);
    try {
      const result = await Promise.resolve().then(() =>
        this.writer(name, rfc3339Seconds(at), weak),
      );
      if (result === "gone") this.forget(name);
      else {
        if (this.queue.get(name) === at) this.queue.delete(name);
        if (this.weak.get(name) === weak) this.weak.delete(name);
      }
    } catch (err) {
      this.report(name, err);
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

  /** Drops what can no longer throttle a record: written entries older than minIntervalMs. */
  private prune(): void {
    const now = this.now();
    for (const [name, at] of this.known) {
      if (now - at >= this.minIntervalMs && !this.queue.has(name)) this.known.delete(name);
    }
  }
}
