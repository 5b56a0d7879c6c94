// The controller's work queue, with the semantics of client-go's workqueue (queue.go,
// delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go), which every
// controller-runtime controller uses:
// - a key is queued at most once however often it is added (the "dirty" set);
// - a key being processed is never handed to a second worker: added meanwhile, it is queued again
//   when the first worker calls done() (the "processing" set), so no change is lost;
// - addAfter() queues a key later (the earliest of several requested times wins);
// - addRateLimited() queues it after the larger of a per-key exponential backoff (base * 2^retries,
//   capped) and an overall token bucket (qps, burst), until forget() resets the key's retries;
// - after shutDown() adds are ignored, get() still hands out what is queued and then answers
//   undefined; shutDownWithDrain() also waits for the keys being processed.
// client-go caps the backoff at 1000 s; we cap it at 300 s by default, so a key that failed for a
// long time is retried at least every 5 minutes.

export interface RateLimiterOptions {
  /** The first retry's delay; doubles per retry. 5 ms. */
  baseDelayMs?: number;
  /** The per-key backoff's cap. 300000 ms (5 minutes). */
  maxDelayMs?: number;
  /** The token bucket's refill rate, per second, shared by all keys. 10. */
  qps?: number;
  /** The token bucket's size: this many retries in a burst are not slowed. 100. */
  burst?: number;
}

export interface WorkQueueOptions extends RateLimiterOptions {
  /** Replaces the rate limiter built from the options above (tests). */
  rateLimiter?: RateLimiter;
}

/** The token bucket of golang.org/x/time/rate: reserve() takes a token and says how long to wait. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes one token, possibly one not yet refilled: the wait (ms) until it exists. */
  reserve(): number {
    const now = Math.max(this.now(), this.last);
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /** Gives back the token of the last reserve() (rate.Reservation.Cancel, simplified). */
  cancel(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }
}

/**
 * client-go's DefaultControllerRateLimiter: the larger of a per-key exponential backoff and an
 * overall token bucket (each call takes a token, as MaxOfRateLimiter asks every limiter).
 */
export class RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly bucket: TokenBucket;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(opts: RateLimiterOptions = {}, now: () => number = Date.now) {
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 300_000;
    this.bucket = new TokenBucket(opts.qps ?? 10, opts.burst ?? 100, now);
  }

  /** The delay before the key's next retry; counts the retry. */
  when(key: string): number {
    const retries = this.failures.get(key) ?? 0;
    this.failures.set(key, retries + 1);
    const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(retries, 62));
    return Math.max(backoff, this.bucket.reserve());
  }

  /** Retries since the last forget(). */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The key succeeded (or was given up): its backoff starts afresh. */
  forget(key: string): void {
    this.failures.delete(key);
  }
}

interface Waiting {
  readyAt: number;
  timer: NodeJS.Timeout;
}

export class WorkQueue {
  /** Keys ready to be handed out, in order. Each is also in `dirty`. */
  private readonly queue: string[] = [];
  /** Keys that need processing: queued, or added again while being processed. */
  private readonly dirty = new Set<string>();
  /** Keys handed out by get() and not yet done(). */
  private readonly processing = new Set<string>();
  /** addAfter() keys not yet due. */
  private readonly waiting = new Map<string, Waiting>();
  /** get() callers waiting for a key, oldest first. */
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private readonly drainWaiters = new Set<() => void>();
  private readonly limiter: RateLimiter;
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.limiter = opts.rateLimiter ?? new RateLimiter(opts);
  }

  /** Queues the key unless it is already queued; ignored after shutDown(). */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.dispatch();
  }

  /** Queues the key after `ms` (at once when ms <= 0); the earliest pending time wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) return this.add(key);
    const readyAt = Date.now() + ms;
    const pending = this.waiting.get(key);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.waiting.set(key, { readyAt, timer });
  }

  /** Queues the key after its backoff: the larger of its exponential delay and the token bucket. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.addAfter(key, this.limiter.when(key));
  }

  /** Resets the key's backoff (after a success, or when giving up on it). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** How often the key was added rate-limited since its last forget(). */
  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /**
   * The next key to process, once there is one; the caller must call done(key) when finished.
   * undefined once shut down and nothing is queued.
   */
  get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined || this.shuttingDown) return Promise.resolve(key);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks the key processed; queues it again when it was added meanwhile. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.dispatch();
    }
    if (this.processing.size === 0) for (const wake of [...this.drainWaiters]) wake();
  }

  /** Keys queued and ready (not those waiting for addAfter/addRateLimited, nor in processing). */
  get depth(): number {
    return this.queue.length;
  }

  /** Keys handed out and not yet done. */
  get inProgress(): number {
    return this.processing.size;
  }

  /** Keys waiting for their addAfter()/addRateLimited() time. */
  get delayed(): number {
    return this.waiting.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Ignores adds from now on and drops keys not yet due; get() hands out what is queued, then
   * answers undefined. Stops any shutDownWithDrain() from waiting.
   */
  shutDown(): void {
    this.stopAdding();
    for (const wake of [...this.drainWaiters]) wake();
  }

  /**
   * shutDown(), then waits until no key is being processed, or `timeoutMs` passed. True when
   * drained, false on the timeout (or when shutDown() was called meanwhile with keys in progress).
   */
  async shutDownWithDrain(timeoutMs: number): Promise<boolean> {
    this.stopAdding();
    if (this.processing.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let wake: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      wake = resolve;
      this.drainWaiters.add(resolve);
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
    this.drainWaiters.delete(wake!);
    return this.processing.size === 0;
  }

  private stopAdding(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.dispatch();
  }

  /** Moves the next queued key to processing. */
  private take(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  /** Hands queued keys to waiting getters; after shutdown an empty queue answers undefined. */
  private dispatch(): void {
    while (this.getters.length > 0) {
      const key = this.take();
      if (key === undefined && !this.shuttingDown) return;
      this.getters.shift()!(key);
    }
  }
}
