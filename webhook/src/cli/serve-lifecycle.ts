// A key's end of life in `vgate serve` (docs/decisions.md OAK-40): Warning Events before a key
// expires (--expiry-warnings), vgate_accesskey_expiry_seconds, and the deletion of keys expired
// longer than --expired-key-retention. Driven by the OwnedAccessKey watch cache the webhooks
// already keep: each change of a key updates its expiry in a map of name → instant (keys without
// TTL are not in it), and a check every 30 s walks that map; no LIST of its own. Only the leader of
// the replicas (a Lease, kube/controller/leader-election.ts, as `vgate sync` elects) writes; every
// replica exports the metric.
//
// A warning is recorded once per key, threshold and expiry: its Event has a fixed name
// (accesskeys/expiry-notices.ts), so the create of a repeat, after a restart or by a new leader, is
// refused with 409 and nothing else is kept anywhere a tenant could edit. A deletion carries the
// uid and resourceVersion the decision was made on as preconditions: a key renewed (or replaced)
// meanwhile answers 409 and stays. Log lines name keys, never their contents.

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  dueThreshold,
  expiryEventName,
  expiryMessage,
  expirySeries,
  EXPIRING_REASON,
  retentionOver,
  type ExpiringKey,
  type ExpirySeries,
} from "../accesskeys/expiry-notices.js";
import type { KeysByName } from "../auth/contracts.js";
import { leaderElectionMetric } from "../kube/controller/controller-metrics.js";
import { EventRecorder, type EventTransport } from "../kube/controller/event-recorder.js";
import { LeaderElector } from "../kube/controller/leader-election.js";
import type { ChangeType } from "../kube/controller/watch-cache.js";
import type { Logger } from "../server/logger.js";
import type { Metrics } from "../server/metrics.js";
import { expiresAt } from "../shared/key-expiry.js";
import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import type { LifecycleOptions } from "./serve-options.js";

/** How often the keys are checked when the caller does not say (ServeOptions.lifecycleIntervalMs). */
export const DEFAULT_LIFECYCLE_INTERVAL_MS = 30_000;

export interface LifecycleDeps {
  opts: LifecycleOptions;
  identity: ResourceIdentity;
  /** Events, the Lease and deletions; null without an API server (--dev): the metric only. */
  transport: EventTransport | null;
  logger: Logger;
  metrics: Pick<Metrics, "registry" | "expiryWarnings" | "expiredKeyDeletions" | "watchKeyExpiry">;
  now?: (() => number) | undefined;
  intervalMs?: number | undefined;
  /** The Lease holder identity (default: hostname_uuid, as controller-runtime). */
  holder?: string;
}

export class KeyLifecycle {
  /** name → when it expires (ms), for keys with a TTL. */
  private readonly expiries = new Map<string, number>();
  /** name → the name of the last warning Event recorded for it (not to ask again each check). */
  private readonly warned = new Map<string, string>();
  private keys: KeysByName | undefined;
  private readonly now: () => number;
  private readonly events: EventRecorder | undefined;
  private readonly elector: LeaderElector | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private campaigning = false;
  /** The user this vgate runs as (a SelfSubjectReview), with --expired-key-retention. */
  private self: string | undefined;
  private asking = false;

  constructor(private readonly deps: LifecycleDeps) {
    this.now = deps.now ?? Date.now;
    const { opts, transport, logger } = deps;
    const acts = opts.warnings || opts.retentionMs !== undefined;
    deps.metrics.watchKeyExpiry(() => this.series());
    if (!transport || !acts) return;
    if (opts.warnings) {
      this.events = new EventRecorder(transport, {
        component: "vgate",
        log: (msg, fields) => logger.warn(fields ?? {}, msg),
      });
    }
    const le = opts.leaderElection;
    if (!le.enabled) return;
    const leading = leaderElectionMetric([deps.metrics.registry], le.id);
    const lease = `${le.namespace}/${le.id}`;
    this.elector = new LeaderElector({
      transport,
      namespace: le.namespace,
      name: le.id,
      identity: deps.holder ?? `${hostname()}_${randomUUID()}`,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      onStartedLeading: () => {
        leading(true);
        logger.info({ lease }, "leading the key lifecycle (expiry warnings, retention)");
        this.kick();
      },
      onStoppedLeading: () => {
        leading(false);
        logger.info({ lease }, "no longer leading the key lifecycle");
      },
      log: (msg, fields) => logger.debug(fields ?? {}, msg),
    });
  }

  /** Starts checking, reading keys from the watch cache `keys`. */
  start(keys: KeysByName): void {
    this.keys = keys;
    const { opts } = this.deps;
    if (!this.deps.transport || !(opts.warnings || opts.retentionMs !== undefined)) return;
    const every = this.deps.intervalMs ?? DEFAULT_LIFECYCLE_INTERVAL_MS;
    this.timer = setInterval(() => this.kick(), every);
    this.timer.unref();
    this.kick();
  }

  /** Feeds the expiry map; give it every change of the OwnedAccessKey cache. */
  onChange(type: ChangeType, name: string): void {
    const key = type === "DELETED" ? undefined : this.keys?.get(name);
    const at = key === undefined ? undefined : expiresAt(key);
    if (at === undefined) {
      this.expiries.delete(name);
      this.warned.delete(name);
    } else {
      this.expiries.set(name, at);
    }
  }

  /** Whether this replica may write now: it leads, or there is no election. */
  leading(): boolean {
    return this.elector ? this.elector.isLeader() : true;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.elector?.stop();
  }

  /** vgate_accesskey_expiry_seconds now. */
  series(): ExpirySeries {
    const { thresholdsMs, metricMaxSeries } = this.deps.opts;
    return expirySeries(this.expiries, this.now(), thresholdsMs[0] ?? 0, metricMaxSeries);
  }

  /**
   * The user this vgate runs as, once known: the validating webhook lets it delete keys whose
   * retention is over (every replica answers admission, so every replica asks).
   */
  username(): string | undefined {
    return this.self;
  }

  /** Asks the API server who this vgate is (SelfSubjectReview, allowed to every user). */
  private async whoAmI(transport: EventTransport): Promise<void> {
    this.asking = true;
    try {
      const res = await transport.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      );
      const body = res.body as { status?: { userInfo?: { username?: unknown } } } | undefined;
      const username = body?.status?.userInfo?.username;
      if ((res.status === 201 || res.status === 200) && typeof username === "string") {
        this.self = username;
        this.deps.logger.info(
          { user: username },
          "the user this vgate deletes keys past --expired-key-retention as",
        );
      } else {
        this.deps.logger.warn(
          { status: res.status },
          "cannot learn this vgate's user; asking again",
        );
      }
    } catch {
      this.deps.logger.warn("cannot learn this vgate's user; asking again");
    } finally {
      this.asking = false;
    }
  }

  /** Runs a check unless one is running. */
  private kick(): void {
    const transport = this.deps.transport;
    if (transport && this.deps.opts.retentionMs !== undefined && !this.self && !this.asking) {
      void this.whoAmI(transport);
    }
    if (this.running || !this.keys?.synced()) return;
    // As `vgate sync`, campaign only with a synced cache: a replica that cannot see the keys never
    // holds the Lease.
    if (this.elector && !this.campaigning) {
      this.campaigning = true;
      this.elector.start();
    }
    if (!this.leading()) return;
    this.running = this.check().finally(() => (this.running = undefined));
  }

  /** One pass over the keys that expire: warnings due, retentions over. */
  async check(): Promise<void> {
    const { opts } = this.deps;
    for (const [name, at] of [...this.expiries]) {
      if (!this.leading()) return;
      const now = this.now();
      if (opts.retentionMs !== undefined && retentionOver(at, now, opts.retentionMs)) {
        await this.deleteExpired(name);
      } else if (opts.warnings) {
        const threshold = dueThreshold(at, now, opts.thresholdsMs);
        if (threshold !== undefined) await this.warn(name, threshold, now);
      }
    }
  }

  /** The key as the cache holds it now, when it still expires and is not being deleted. */
  private current(name: string): { key: OwnedAccessKey; expiring: ExpiringKey } | undefined {
    const key = this.keys?.get(name);
    const at = key === undefined ? undefined : expiresAt(key);
    const meta = key?.metadata;
    if (!key || at === undefined || !meta?.uid || !meta.resourceVersion) return undefined;
    if (meta.deletionTimestamp) return undefined;
    return {
      key,
      expiring: { name, uid: meta.uid, resourceVersion: meta.resourceVersion, expiresAt: at },
    };
  }

  private async warn(name: string, threshold: number, now: number): Promise<void> {
    const found = this.current(name);
    if (!found || !this.events) return;
    const eventName = expiryEventName(found.expiring, threshold);
    if (this.warned.get(name) === eventName) return;
    const { group, version, kind } = this.deps.identity;
    const result = await this.events.recordOnce(
      { ...found.key, apiVersion: `${group}/${version}`, kind },
      eventName,
      {
        type: "Warning",
        reason: EXPIRING_REASON,
        action: "Expiring",
        message: expiryMessage(found.expiring, now),
      },
    );
    this.deps.metrics.expiryWarnings.inc({ result });
    if (result === "created" || result === "exists") this.warned.set(name, eventName);
    if (result === "created") {
      this.deps.logger.info(
        { accessKey: name, expiresAt: new Date(found.expiring.expiresAt).toISOString() },
        "warned that an access key expires soon",
      );
    }
  }

  private async deleteExpired(name: string): Promise<void> {
    const found = this.current(name);
    if (!found || !this.deps.transport) return;
    const { uid, resourceVersion, expiresAt: at } = found.expiring;
    const { group, version, resource } = this.deps.identity;
    const path = `/apis/${group}/${version}/${resource}/${encodeURIComponent(name)}`;
    let result: "deleted" | "conflict" | "gone" | "failed";
    try {
      const res = await this.deps.transport.request("DELETE", path, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid, resourceVersion },
      });
      result =
        res.status === 200 || res.status === 202
          ? "deleted"
          : res.status === 409
            ? "conflict"
            : res.status === 404
              ? "gone"
              : "failed";
      if (result === "failed") {
        this.deps.logger.warn(
          { accessKey: name, status: res.status },
          "cannot delete an expired access key; retrying at the next check",
        );
      }
    } catch (err) {
      result = "failed";
      this.deps.logger.warn(
        { accessKey: name, err: err instanceof Error ? err.message : String(err) },
        "cannot delete an expired access key; retrying at the next check",
      );
    }
    this.deps.metrics.expiredKeyDeletions.inc({ result });
    if (result === "deleted") {
      this.deps.logger.info(
        { accessKey: name, expiredAt: new Date(at).toISOString() },
        "deleted an access key expired longer than --expired-key-retention",
      );
    }
  }
}
