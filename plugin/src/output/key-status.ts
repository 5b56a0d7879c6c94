// Whether a key works at a given moment, by decision 10 of the spec (docs/decisions.md): the TTL
// counts from status.lastActivity when spec.ttlAfterLastActivity is set and the key has been used,
// else from metadata.creationTimestamp; a key is expired when ttl > 0 and now >= base + ttl.

import { parseRfc3339 } from "../../../webhook/src/accesskeys/deletion.js";
import { ownPath } from "../../../webhook/src/accesskeys/json-fields.js";

export type KeyStatus = "Active" | "Disabled" | "Expired";

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

/** The moment the TTL counts from, and which field it is. */
export function ttlBase(
  object: unknown,
): { at: number; from: "lastActivity" | "creation" } | undefined {
  const lastActivity = timestamp(object, ["status", "lastActivity"]);
  if (ownPath(object, ["spec", "ttlAfterLastActivity"]) === true && lastActivity !== undefined) {
    return { at: lastActivity, from: "lastActivity" };
  }
  const created = timestamp(object, ["metadata", "creationTimestamp"]);
  return created === undefined ? undefined : { at: created, from: "creation" };
}

/**
 * The status of a key at `now` and when it expires (ms since the epoch; undefined: never, or not
 * known because the object has no creation time). An expired key shows as Expired even when it is
 * also disabled: enabling it would not make it work again.
 */
export function keyStatus(
  object: unknown,
  now: number = Date.now(),
): { status: KeyStatus; expiresAt: number | undefined } {
  const ttl = ttlSeconds(object);
  const base = ttlBase(object);
  const expiresAt = ttl !== undefined && base !== undefined ? base.at + ttl * 1000 : undefined;
  if (expiresAt !== undefined && now >= expiresAt) return { status: "Expired", expiresAt };
  const disabled = ownPath(object, ["spec", "disabled"]) === true;
  return { status: disabled ? "Disabled" : "Active", expiresAt };
}
