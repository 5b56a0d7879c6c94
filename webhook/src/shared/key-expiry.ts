// When a key stops working (decision 10, docs/decisions.md). One copy, used by the token webhook
// and by the plugin's printers: the TTL counts from status.lastActivity when
// spec.ttlAfterLastActivity is set and the key has been used, else from
// metadata.creationTimestamp; a key is expired when ttl > 0 and now >= base + ttl seconds.
//
// The token webhook also knows of uses it has not yet written to status (the activity recorder
// batches those writes), so it may pass a later lastActivity of its own.

import { parseRfc3339 } from "./rfc3339.js";
import { ownPath } from "./own-path.js";

export type KeyStatus = "Active" | "Disabled" | "Expired";

/** What is known locally about a key, beyond the object itself. */
export interface ExpiryOptions {
  /** A use (ms since the epoch) not yet written to status.lastActivity. */
  localLastActivity?: number | undefined;
}

function timestamp(object: unknown, path: readonly string[]): number | undefined {
  const value = ownPath(object, path);
  if (typeof value !== "string") return undefined;
  return parseRfc3339(value) ?? undefined;
}

/** spec.ttl in seconds when it is a positive number, else undefined (no TTL). */
export function ttlSeconds(object: unknown): number | undefined {
  const ttl = ownPath(object, ["spec", "ttl"]);
  return typeof ttl === "number" && Number.isFinite(ttl) && ttl > 0 ? ttl : undefined;
}

/** The later of two optional instants. */
function later(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/**
 * The moment the TTL counts from, and which field it is. With ttlAfterLastActivity, the last
 * activity is the later of status.lastActivity and `options.localLastActivity`.
 */
export function ttlBase(
  object: unknown,
  options: ExpiryOptions = {},
): { at: number; from: "lastActivity" | "creation" } | undefined {
  if (ownPath(object, ["spec", "ttlAfterLastActivity"]) === true) {
    const local = Number.isFinite(options.localLastActivity)
      ? options.localLastActivity
      : undefined;
    const lastActivity = later(timestamp(object, ["status", "lastActivity"]), local);
    if (lastActivity !== undefined) return { at: lastActivity, from: "lastActivity" };
  }
  const created = timestamp(object, ["metadata", "creationTimestamp"]);
  return created === undefined ? undefined : { at: created, from: "creation" };
}

/** When the key expires (ms since the epoch); undefined: never, or no creation time is known. */
export function expiresAt(object: unknown, options: ExpiryOptions = {}): number | undefined {
  const ttl = ttlSeconds(object);
  const base = ttlBase(object, options);
  return ttl !== undefined && base !== undefined ? base.at + ttl * 1000 : undefined;
}

/** Whether the key is expired at `now`. */
export function isExpired(object: unknown, now: number, options: ExpiryOptions = {}): boolean {
  const at = expiresAt(object, options);
  return at !== undefined && now >= at;
}

/**
 * The status of a key at `now` and when it expires (ms since the epoch; undefined: never, or not
 * known because the object has no creation time). An expired key shows as Expired even when it is
 * also disabled: enabling it would not make it work again.
 */
export function keyStatus(
  object: unknown,
  now: number = Date.now(),
  options: ExpiryOptions = {},
): { status: KeyStatus; expiresAt: number | undefined } {
  const at = expiresAt(object, options);
  if (at !== undefined && now >= at) return { status: "Expired", expiresAt: at };
  const disabled = ownPath(object, ["spec", "disabled"]) === true;
  return { status: disabled ? "Disabled" : "Active", expiresAt: at };
}
