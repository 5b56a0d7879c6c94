// Prometheus metrics (prom-client). One registry per server, so tests can run several servers.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ExpirySeries } from "../accesskeys/expiry-notices.js";
import { MAX_BODY_BYTES_IN_FLIGHT } from "./body.js";

export interface Metrics {
  registry: Registry;
  requests: Counter<"route" | "operation" | "allowed">;
  latency: Histogram<"route" | "operation" | "allowed">;
  inFlight: Gauge<"route">;
  /** Bodies refused before their request was handled, by why (see body.ts BodyRefusal). */
  bodiesRefused: Counter<"route" | "reason">;
  /** TokenReviews by result (auth/contracts.ts LoginResult, or "unavailable" before the key cache syncs). */
  logins: Counter<"result">;
  /**
   * Logins with a key's previous key in a rotation's grace window, by key name (at most
   * MAX_PREVIOUS_KEY_NAMES names a process; later ones count under PREVIOUS_KEY_OTHER).
   */
  previousKeyLogins: Counter<"name">;
  /** What became of each key a status.lastActivity flush looked at (auth/activity.ts ActivityOutcome). */
  activityWrites: Counter<"result">;
  /** Writes refused because another key already has their key (the duplicate-key check). */
  duplicateKeys: Counter;
  /** Requests refused for their client certificate, by route and why (client-auth.ts). */
  clientCertRefused: Counter<"route" | "reason">;
  /**
   * Sync patches that failed in /mutate/patches, by kind (`toHost.pods`) and patch index (`3`, or
   * `none` when no one patch is to blame, as at a deadline): both bounded by the config.
   */
  patchFailures: Counter<"kind" | "patch">;
  /** Reports the bytes of request bodies held now (set by the app that owns the budget). */
  watchBodyBytes(read: () => number): void;
  /** Reports the discovered vClusters (--discover-vclusters): loaded and refused configs. */
  watchVClusters(read: () => { loaded: number; refused: number }): void;
  /** Expiry warning Events, by result (cli/serve-lifecycle.ts). */
  expiryWarnings: Counter<"result">;
  /** Deletions of keys whose --expired-key-retention is over, by result. */
  expiredKeyDeletions: Counter<"result">;
  /** Reports vgate_accesskey_expiry_seconds (accesskeys/expiry-notices.ts expirySeries). */
  watchKeyExpiry(read: () => ExpirySeries): void;
}

/**
 * Records one answered admission request. prom-client hashes the label set on every call; the
 * handful of label combinations are looked up once and their children kept.
 */
export function recordRequest(
  metrics: Metrics,
  labels: { route: string; operation: string; allowed: string },
  seconds: number,
): void {
  const key = `${labels.route}\0${labels.operation}\0${labels.allowed}`;
  let children = childCache.get(metrics)?.get(key);
  if (!children) {
    children = { count: metrics.requests.labels(labels), latency: metrics.latency.labels(labels) };
    let byKey = childCache.get(metrics);
    if (!byKey) childCache.set(metrics, (byKey = new Map()));
    byKey.set(key, children);
  }
  children.count.inc();
  children.latency.observe(seconds);
}

type Children = {
  count: ReturnType<Metrics["requests"]["labels"]>;
  latency: ReturnType<Metrics["latency"]["labels"]>;
};
const childCache = new WeakMap<Metrics, Map<string, Children>>();

/** The bound on the `name` label of vgate_access_key_previous_key_logins_total. */
export const MAX_PREVIOUS_KEY_NAMES = 1000;
export const PREVIOUS_KEY_OTHER = "_other";

/**
 * The `name` label for a previous-key login of key `name`: the name itself for the first
 * MAX_PREVIOUS_KEY_NAMES names `seen` (which it updates), PREVIOUS_KEY_OTHER after that.
 */
export function previousKeyLabel(seen: Set<string>, name: string): string {
  if (!seen.has(name) && seen.size < MAX_PREVIOUS_KEY_NAMES) seen.add(name);
  return seen.has(name) ? name : PREVIOUS_KEY_OTHER;
}

export function createMetrics(withProcessMetrics = true): Metrics {
  const registry = new Registry();
  if (withProcessMetrics) collectDefaultMetrics({ register: registry, prefix: "vgate_" });
  const labelNames = ["route", "operation", "allowed"] as const;
  let bodyBytes = () => 0;
  new Gauge({
    name: "vgate_request_body_bytes_in_flight",
    help: `Bytes of request bodies held now, across all connections (at most ${MAX_BODY_BYTES_IN_FLIGHT}).`,
    registers: [registry],
    collect() {
      this.set(bodyBytes());
    },
  });
  let vclusters: (() => { loaded: number; refused: number }) | undefined;
  new Gauge({
    name: "vgate_vclusters",
    help: "vClusters found by --discover-vclusters, by state: loaded (its patches in use) and refused (its config Secret's current config refused, with a Warning Event on the Secret; it may still run on its last good config). Absent without --discover-vclusters.",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      if (vclusters === undefined) return;
      const { loaded, refused } = vclusters();
      this.set({ state: "loaded" }, loaded);
      this.set({ state: "refused" }, refused);
    },
  });
  const expiry = keyExpiryGauges(registry);
  return {
    registry,
    requests: new Counter({
      name: "vgate_admission_requests_total",
      help: "Admission requests answered, by route, operation and outcome (allowed true|false|error).",
      labelNames,
      registers: [registry],
    }),
    latency: new Histogram({
      name: "vgate_admission_request_duration_seconds",
      help: "Time to answer an admission request, from body received to response written.",
      labelNames,
      // Around kube-apiserver's own webhook buckets, with more resolution below 25 ms.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: "vgate_admission_requests_in_flight",
      help: "Admission requests being handled now.",
      labelNames: ["route"],
      registers: [registry],
    }),
    bodiesRefused: new Counter({
      name: "vgate_request_bodies_refused_total",
      help: "Request bodies refused unread or cut off: too-large, encoding, shed (too many bytes in flight; 429), idle or deadline (408).",
      labelNames: ["route", "reason"],
      registers: [registry],
    }),
    logins: new Counter({
      name: "vgate_access_key_logins_total",
      help: "Access key logins (TokenReviews) by result: authenticated, invalid (no such key, or a malformed token), disabled, expired, deleting, no-owner, audience, unavailable (keys not loaded yet).",
      labelNames: ["result"],
      registers: [registry],
    }),
    previousKeyLogins: new Counter({
      name: "vgate_access_key_previous_key_logins_total",
      help: `Logins with the previous key of a rotated access key, within its grace window (kubectl accesskey rotate --grace), by key name: who still uses the old key. At most ${MAX_PREVIOUS_KEY_NAMES} names a process; later ones are counted as name="${PREVIOUS_KEY_OTHER}".`,
      labelNames: ["name"],
      registers: [registry],
    }),
    activityWrites: new Counter({
      name: "vgate_access_key_activity_writes_total",
      help: "Keys a status.lastActivity flush looked at, by result: written; conflict (another replica wrote the key first; decided again at the next flush); covered (another replica's write already shows a recent enough activity: nothing written); failed (kept for the next flush); gone (the key was deleted).",
      labelNames: ["result"],
      registers: [registry],
    }),
    duplicateKeys: new Counter({
      name: "vgate_duplicate_key_refusals_total",
      help: "OwnedAccessKey writes refused because another key already has the key they set. A caller who can reach the admission routes directly learns from this answer whether a key exists: a rise means someone tries keys.",
      registers: [registry],
    }),
    clientCertRefused: new Counter({
      name: "vgate_client_certificate_refusals_total",
      help: "Requests refused with 401 for their client certificate: not-configured (no --client-ca-file), no-certificate, untrusted, name (not in --client-allowed-names).",
      labelNames: ["route", "reason"],
      registers: [registry],
    }),
    patchFailures: new Counter({
      name: "vgate_sync_patch_failures_total",
      help: "Sync patches that failed while admitting an object (denied, or admitted unchanged with --on-patch-error=allow), by kind (the config section, toHost.<key>) and patch index in that kind's patches (none: no one patch to blame, as when the deadline passed).",
      labelNames: ["kind", "patch"],
      registers: [registry],
    }),
    watchBodyBytes: (read) => {
      bodyBytes = read;
    },
    watchVClusters: (read) => {
      vclusters = read;
    },
    expiryWarnings: new Counter({
      name: "vgate_accesskey_expiry_warnings_total",
      help: "AccessKeyExpiring Warning Events the leader decided to record, by result: created; exists (recorded before, by this replica before a restart or by another); dropped (the key's Event rate limit); failed.",
      labelNames: ["result"],
      registers: [registry],
    }),
    expiredKeyDeletions: new Counter({
      name: "vgate_accesskey_expired_deletions_total",
      help: "Keys the leader deleted because their --expired-key-retention was over, by result: deleted; conflict (the key changed since it was read, e.g. renewed: kept); gone; failed (retried at the next check).",
      labelNames: ["result"],
      registers: [registry],
    }),
    watchKeyExpiry: (read) => {
      expiry.read = read;
    },
  };
}

/**
 * vgate_accesskey_expiry_seconds{name} and the count of keys left out of it: read when scraped, so
 * the values are current and a deleted key's series goes with it.
 */
function keyExpiryGauges(registry: Registry): { read: (() => ExpirySeries) | undefined } {
  const source: { read: (() => ExpirySeries) | undefined } = { read: undefined };
  let last: ExpirySeries = { series: [], dropped: 0 };
  new Gauge({
    name: "vgate_accesskey_expiry_seconds",
    help: "Seconds until an access key expires, for the keys that expire within the largest --expiry-warning-thresholds (soonest first, at most --expiry-metric-max-series). A key without TTL, one further off, and an expired one have no series.",
    labelNames: ["name"],
    registers: [registry],
    collect() {
      this.reset();
      if (source.read === undefined) return;
      last = source.read();
      for (const [name, seconds] of last.series) this.set({ name }, seconds);
    },
  });
  new Gauge({
    name: "vgate_accesskey_expiry_series_dropped",
    help: "Keys within the horizon of vgate_accesskey_expiry_seconds left out of it by --expiry-metric-max-series (those expiring latest).",
    registers: [registry],
    collect() {
      this.set(source.read === undefined ? 0 : last.dropped);
    },
  });
  return source;
}
