// Leader election on a coordination.k8s.io/v1 Lease, with the semantics of client-go's
// tools/leaderelection (leaderelection.go, resourcelock/leaselock.go), so several replicas of
// `vgate sync` can run and exactly one of them syncs:
// - a candidate takes the Lease when it does not exist, when its holderIdentity is empty (released),
//   or when it expired: the holder's leaseDurationSeconds have passed on OUR clock since we last saw
//   the record change. Clocks of different machines are never compared (renewTime is only
//   informational), as in client-go;
// - the leader renews every retryPeriod; when no renew succeeded within renewDeadline it stops
//   leading (renewDeadline < leaseDuration, so it stops before anyone else may take over);
// - every write is a PUT with the resourceVersion last read, so of two candidates only one wins;
//   409 Conflict means "someone else wrote it" and is simply another failed attempt;
// - leaseTransitions counts changes of holder; acquireTime is when the current holder took it;
// - stop() releases a held Lease as client-go's ReleaseOnCancel does (holderIdentity "",
//   leaseDurationSeconds 1), so a standby takes over at its next retry instead of after expiry.
// Unlike client-go's Run(), an elector that lost the Lease goes back to being a candidate until
// stop(); onStoppedLeading is called only after an onStartedLeading.

import { performance } from "node:perf_hooks";
import type { KubeResponse } from "../../shared/transport.js";
import { isObject } from "../../shared/json.js";

/** What the elector needs of KubeTransport. */
export interface LeaseTransport {
  request(method: string, path: string, body?: unknown): Promise<KubeResponse>;
}

export interface LeaderElectorOptions {
  transport: LeaseTransport;
  /** Where the Lease lives (on the host cluster). */
  namespace: string;
  name: string;
  /** This replica, e.g. `<pod name>_<uuid>`; unique among the candidates. */
  identity: string;
  /** How long a standby waits before taking over a Lease that is no longer renewed. 15000. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failing renew before it stops leading. 10000. */
  renewDeadlineMs?: number;
  /** How often the leader renews and a standby retries. 2000. */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  /** Told the identity of each new holder this elector observes (itself included). */
  onNewLeader?: (identity: string) => void;
  log?: (msg: string, fields?: object) => void;
}

/** The Lease's spec fields leader election uses. Times are RFC 3339 with microseconds. */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

type LeaseObject = Record<string, unknown> & { spec?: Record<string, unknown> };

/** client-go's JitterFactor: a candidate waits retryPeriod * (1 + up to 1.2). */
const JITTER_FACTOR = 1.2;

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly path: string;
  private running = false;
  private leading = false;
  private loop: Promise<void> | undefined;
  private wake = new AbortController();
  /** The Lease as last read or written (its resourceVersion guards the next write). */
  private lease: LeaseObject | undefined;
  private observed: LeaseRecord | undefined;
  private observedRaw = "";
  /** performance.now() when the observed record last changed. */
  private observedAt = 0;
  private reportedLeader = "";

  constructor(private readonly opts: LeaderElectorOptions) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    validate(opts, this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.path =
      `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}` +
      `/leases/${encodeURIComponent(opts.name)}`;
  }

  /** Starts campaigning; calling it again while running does nothing. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake = new AbortController();
    this.loop = this.campaign();
  }

  /** True from onStartedLeading until onStoppedLeading. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder this elector last observed ("" when none or released). */
  leader(): string {
    return this.observed?.holderIdentity ?? "";
  }

  /** Stops campaigning and renewing; when leading, stops leading and releases the Lease. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake.abort();
    await this.loop;
    if (this.leading) this.stopLeading("stopped");
    // Also when an attempt still in flight at stop() made us the holder after all.
    if (this.observedIsMine()) await this.release();
  }

  private async campaign(): Promise<void> {
    while (this.running) {
      if (!(await this.acquire())) return;
      this.leading = true;
      this.log("started leading");
      this.call("onStartedLeading", this.opts.onStartedLeading);
      await this.renew();
      if (this.running) this.stopLeading(`no renew succeeded within ${this.renewDeadlineMs} ms`);
    }
  }

  /** Retries until this elector holds the Lease (true) or is stopped (false). */
  private async acquire(): Promise<boolean> {
    this.log("attempting to acquire the lease");
    while (this.running) {
      if (await this.attempt(this.renewDeadlineMs)) return this.running;
      await this.sleep(this.retryPeriodMs * (1 + JITTER_FACTOR * Math.random()));
    }
    return false;
  }

  /** Renews every retryPeriod; returns when stopped or when renewDeadline passed without one. */
  private async renew(): Promise<void> {
    let deadline = performance.now() + this.renewDeadlineMs;
    while (this.running) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      const ok = await this.attempt(left);
      if (!this.running) return;
      if (!ok) {
        await this.sleep(Math.min(this.retryPeriodMs, deadline - performance.now()));
        continue;
      }
      await this.sleep(this.retryPeriodMs);
      deadline = performance.now() + this.renewDeadlineMs;
    }
  }

  private stopLeading(why: string): void {
    this.leading = false;
    this.log("stopped leading", { why });
    this.call("onStoppedLeading", this.opts.onStoppedLeading);
  }

  /** Runs a callback; one that throws is logged and does not stop the election. */
  private call(name: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log(`${name} failed`, { error: String(err) });
    }
  }

  /** One tryAcquireOrRenew, given up (false) after `ms`. */
  private async attempt(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
    try {
      return await Promise.race([this.tryAcquireOrRenew().catch(() => false), late]);
    } finally {
      clearTimeout(timer);
      this.reportTransition();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = microTime(new Date());
    const mine: LeaseRecord = {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: Math.floor(this.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    // The leader's fast path: write over the Lease it wrote last, assuming nobody else did.
    if (this.observedIsMine() && this.observedValid() && this.lease) {
      if (await this.write("PUT", this.keepingTenure(mine))) return true;
    }
    const got = await this.read();
    if (got === undefined) return false;
    if (got === null) return this.write("POST", mine);
    this.observe(got);
    if (this.observed!.holderIdentity && this.observedValid() && !this.observedIsMine()) {
      return false;
    }
    const next = this.observedIsMine()
      ? this.keepingTenure(mine)
      : { ...mine, leaseTransitions: this.observed!.leaseTransitions + 1 };
    return this.write("PUT", next);
  }

  /** `record` with the current tenure's acquireTime and transitions. */
  private keepingTenure(record: LeaseRecord): LeaseRecord {
    const { acquireTime, leaseTransitions } = this.observed!;
    return { ...record, acquireTime, leaseTransitions };
  }

  /** The Lease; null when it does not exist; undefined when it could not be read. */
  private async read(): Promise<LeaseObject | null | undefined> {
    const res = await this.opts.transport.request("GET", this.path);
    if (res.status === 404) return null;
    if (res.status === 200 && isObject(res.body)) return res.body as LeaseObject;
    this.log("cannot read the lease", { status: res.status });
    return undefined;
  }

  /** Creates (POST) or replaces (PUT, guarded by resourceVersion) the Lease with `record`. */
  private async write(method: "POST" | "PUT", record: LeaseRecord): Promise<boolean> {
    const body = this.leaseWith(record, method === "PUT");
    const path = method === "POST" ? this.path.replace(/\/[^/]+$/, "") : this.path;
    const res = await this.opts.transport.request(method, path, body);
    if (res.status === 200 || res.status === 201) {
      this.lease = res.body as LeaseObject;
      this.setObserved(recordOf(this.lease));
      return true;
    }
    // 409: another candidate wrote the Lease since we read it (or created it first).
    if (res.status !== 409) this.log("cannot write the lease", { status: res.status });
    return false;
  }

  private leaseWith(record: LeaseRecord, update: boolean): LeaseObject {
    const metadata: Record<string, unknown> = update
      ? { ...(this.lease?.["metadata"] as object) }
      : { name: this.opts.name, namespace: this.opts.namespace };
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata,
      spec: { ...(update ? this.lease?.spec : {}), ...record },
    };
  }

  /** client-go's release(): hands a Lease we hold to nobody, expiring at once. */
  private async release(): Promise<void> {
    try {
      const got = await this.read();
      if (!got || recordOf(got).holderIdentity !== this.opts.identity) return;
      this.lease = got;
      const now = microTime(new Date());
      const released: LeaseRecord = {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: recordOf(got).leaseTransitions,
      };
      if (await this.write("PUT", released)) this.log("released the lease");
    } catch (err) {
      this.log("cannot release the lease", { error: String(err) });
    }
  }

  /** Notes a read record; the expiry clock restarts only when it changed. */
  private observe(lease: LeaseObject): void {
    this.lease = lease;
    const record = recordOf(lease);
    if (JSON.stringify(record) !== this.observedRaw) this.setObserved(record);
  }

  private setObserved(record: LeaseRecord): void {
    this.observed = record;
    this.observedRaw = JSON.stringify(record);
    this.observedAt = performance.now();
  }

  private observedIsMine(): boolean {
    return this.observed?.holderIdentity === this.opts.identity;
  }

  private observedValid(): boolean {
    const seconds = this.observed?.leaseDurationSeconds ?? 0;
    return this.observedAt + seconds * 1000 > performance.now();
  }

  private reportTransition(): void {
    const holder = this.observed?.holderIdentity ?? "";
    if (!holder || holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.log("new leader", { leader: holder });
    const told = this.opts.onNewLeader;
    if (told) this.call("onNewLeader", () => told(holder));
  }

  /** Waits `ms`, or less when stop() is called. */
  private sleep(ms: number): Promise<void> {
    const signal = this.wake.signal;
    if (signal.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private log(msg: string, fields: object = {}): void {
    this.opts.log?.(msg, { lease: `${this.opts.namespace}/${this.opts.name}`, ...fields });
  }
}

/** The leader-election fields of a Lease's spec (missing ones as client-go reads them: zero). */
export function recordOf(lease: LeaseObject): LeaseRecord {
  const spec = isObject(lease.spec) ? lease.spec : {};
  const str = (k: string) => (typeof spec[k] === "string" ? (spec[k] as string) : "");
  const num = (k: string) => (typeof spec[k] === "number" ? (spec[k] as number) : 0);
  return {
    holderIdentity: str("holderIdentity"),
    leaseDurationSeconds: num("leaseDurationSeconds"),
    acquireTime: str("acquireTime"),
    renewTime: str("renewTime"),
    leaseTransitions: num("leaseTransitions"),
  };
}

/** metav1.MicroTime's wire form: RFC 3339 in UTC with six fractional digits. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** client-go's NewLeaderElector checks, as errors a person can act on. */
function validate(opts: LeaderElectorOptions, lease: number, renew: number, retry: number): void {
  const problems: string[] = [];
  if (!opts.identity) problems.push("identity must not be empty");
  if (!opts.namespace || !opts.name) problems.push("the Lease needs a namespace and a name");
  if (lease < 1000) problems.push("leaseDurationMs must be at least 1000 (1 second)");
  if (lease <= renew) problems.push("leaseDurationMs must be greater than renewDeadlineMs");
  if (renew <= JITTER_FACTOR * retry) {
    problems.push(`renewDeadlineMs must be greater than retryPeriodMs*${JITTER_FACTOR}`);
  }
  if (retry < 1) problems.push("retryPeriodMs must be positive");
  if (problems.length > 0) throw new Error(`invalid leader election: ${problems.join("; ")}`);
}
