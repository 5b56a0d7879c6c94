// A rotated key's previous value, still valid for a grace window (docs/decisions.md OAK-38):
// spec.previousKey = {key: "sha256:<hex>", until: RFC 3339}. Only the digest is kept, in plain and
// hashed storage alike, and only vgate's mutating webhook writes it (accesskeys/previous-key.ts),
// on a rotation whose request carries the rotation-grace annotation. Shared by the webhook (token
// and authorization reviews) and the plugin (describe, rotate).

import type { OwnedAccessKey } from "./ownedaccesskey.js";
import { isStoredHash, storedDigest } from "./key-hash.js";
import { ownPath } from "./own-path.js";
import { parseRfc3339 } from "./rfc3339.js";

/** The annotation a rotation asks for a grace window with: whole seconds, e.g. "3600". */
export function rotationGraceAnnotation(groupDomain: string): string {
  return `accesskey.${groupDomain}/rotation-grace-seconds`;
}

/** The grace `vgate serve --max-rotation-grace` allows when not given: 24 hours. */
export const DEFAULT_MAX_ROTATION_GRACE_MS = 24 * 3600_000;

export interface PreviousKey {
  /** The SHA-256 of the previous key. */
  digest: Buffer;
  /** Until when (ms since the epoch, exclusive) the previous key still logs in. */
  until: number;
}

/**
 * The stored spec.previousKey, when it is well-formed (a `sha256:<hex>` digest and an RFC 3339
 * time); undefined otherwise. A malformed value never opens a window.
 */
export function previousKeyOf(key: OwnedAccessKey | null | undefined): PreviousKey | undefined {
  const digest = ownPath(key, ["spec", "previousKey", "key"]);
  const until = ownPath(key, ["spec", "previousKey", "until"]);
  if (typeof digest !== "string" || !isStoredHash(digest) || typeof until !== "string") {
    return undefined;
  }
  const at = parseRfc3339(until);
  return at === null ? undefined : { digest: storedDigest(digest), until: at };
}

/** The previous key while its window is open at `now`, else undefined. */
export function openPreviousKey(key: OwnedAccessKey, now: number): PreviousKey | undefined {
  const prev = previousKeyOf(key);
  return prev && now < prev.until ? prev : undefined;
}

/**
 * status.previousKey {until, lastActivity}: the last login with the previous key, written by the
 * token webhook's activity recorder (auth/activity.ts). `until` names the window it belongs to (the
 * deadline of spec.previousKey at the login): the mutating webhook cannot write status, so a later
 * rotation leaves it in place, and a reader takes it only while it names the current window.
 */
export interface PreviousKeyActivity {
  /** The deadline of the window the login was in (ms since the epoch). */
  until: number;
  /** The last login with the previous key (ms since the epoch). */
  lastActivity: number;
}

/** The stored status.previousKey, when it is well-formed, whatever window it names. */
export function storedPreviousKeyActivity(
  key: OwnedAccessKey | null | undefined,
): PreviousKeyActivity | undefined {
  const until = ownPath(key, ["status", "previousKey", "until"]);
  const last = ownPath(key, ["status", "previousKey", "lastActivity"]);
  if (typeof until !== "string" || typeof last !== "string") return undefined;
  const untilAt = parseRfc3339(until);
  const lastAt = parseRfc3339(last);
  return untilAt === null || lastAt === null ? undefined : { until: untilAt, lastActivity: lastAt };
}

/**
 * The last login with the key's previous key in its current window (spec.previousKey), or
 * undefined when the previous key has not logged in since the rotation that opened it (status
 * names another window, or none).
 */
export function previousKeyLastActivity(
  key: OwnedAccessKey | null | undefined,
): number | undefined {
  const window = previousKeyOf(key);
  const stored = storedPreviousKeyActivity(key);
  return window && stored && stored.until === window.until ? stored.lastActivity : undefined;
}
