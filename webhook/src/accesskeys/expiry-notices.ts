// What `vgate serve` does about a key near or past its end (docs/decisions.md OAK-40): the Warning
// Event due at a threshold before expiry, the Event's fixed name, the bounded series of
// vgate_accesskey_expiry_seconds, and whether an expired key's retention is over. Pure functions
// of plain data and a clock; the loop that acts on them is cli/serve-lifecycle.ts. When a key
// expires is shared/key-expiry.ts's answer, the token webhook's and the plugin's.

import { createHash } from "node:crypto";

/** The Event reason of an expiry warning, as `kubectl get events` shows it. */
export const EXPIRING_REASON = "AccessKeyExpiring";

/** What is known of a key that expires: enough to warn about it and to delete it safely. */
export interface ExpiringKey {
  name: string;
  uid: string;
  resourceVersion: string;
  /** ms since the epoch. */
  expiresAt: number;
}

/**
 * The threshold (ms before expiry) whose warning is due at `now`: the smallest one already
 * crossed. A key first seen inside several thresholds (a server that started late, a key made with
 * a short TTL) gets only the tightest warning, not a burst of stale ones. Undefined before the
 * largest threshold and once the key has expired.
 */
export function dueThreshold(
  expiresAt: number,
  now: number,
  thresholdsMs: readonly number[],
): number | undefined {
  if (now >= expiresAt) return undefined;
  let due: number | undefined;
  for (const t of thresholdsMs) {
    if (now >= expiresAt - t && (due === undefined || t < due)) due = t;
  }
  return due;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The Event's name for one warning: the same for the same key (uid), threshold and expiry, so that
 * a second create, by this process after a restart or by another replica, is refused with 409
 * AlreadyExists instead of making a duplicate. A renewed key (a later expiry) is warned anew. Event
 * names are DNS subdomains of at most 253 characters.
 */
export function expiryEventName(key: ExpiringKey, thresholdMs: number): string {
  const digest = createHash("sha256")
    .update(`${key.uid}\0${thresholdMs}\0${key.expiresAt}`)
    .digest("hex")
    .slice(0, 16);
  const name = `${key.name}.expiring.${digest}`;
  return name.length <= 253 && DNS_SUBDOMAIN.test(name) ? name : `accesskey.expiring.${digest}`;
}

/** 93784000 → "1d2h3m", as kubectl shows spans; whole minutes, "0m" below one. */
export function humanSpan(ms: number): string {
  let minutes = Math.max(0, Math.floor(ms / 60_000));
  const days = Math.floor(minutes / 1440);
  minutes -= days * 1440;
  const hours = Math.floor(minutes / 60);
  minutes -= hours * 60;
  const parts = [days ? `${days}d` : "", hours ? `${hours}h` : "", minutes ? `${minutes}m` : ""];
  return parts.join("") || "0m";
}

/** metav1.Time's wire form: whole seconds, UTC. */
export const wireTime = (ms: number): string =>
  new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The Event's message: when the key stops working, and what to do. Names no secret. */
export function expiryMessage(key: ExpiringKey, now: number): string {
  return (
    `Access key expires in ${humanSpan(key.expiresAt - now)} (at ${wireTime(key.expiresAt)}); ` +
    `rotate it or raise spec.ttl before then`
  );
}

/** Whether an expired key's retention is over at `now`: it may be deleted. */
export function retentionOver(expiresAt: number, now: number, retentionMs: number): boolean {
  return now >= expiresAt + retentionMs;
}

/** The series of vgate_accesskey_expiry_seconds, and how many keys did not fit. */
export interface ExpirySeries {
  /** [name, seconds until expiry], soonest first. */
  series: [string, number][];
  dropped: number;
}

/**
 * The keys not yet expired that expire within `horizonMs`, soonest first, at most `max` of them:
 * the metric's label set stays bounded however many keys there are, and the keys an alert is about
 * are the ones kept. The rest are counted in `dropped`.
 */
export function expirySeries(
  expiries: Iterable<[string, number]>,
  now: number,
  horizonMs: number,
  max: number,
): ExpirySeries {
  const within: [string, number][] = [];
  for (const [name, at] of expiries) {
    if (at > now && at - now <= horizonMs) within.push([name, at]);
  }
  within.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const kept = within.slice(0, max);
  return {
    series: kept.map(([name, at]) => [name, Math.round((at - now) / 1000)]),
    dropped: within.length - kept.length,
  };
}
