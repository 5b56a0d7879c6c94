// Whether a key works at a given moment (decision 10, docs/decisions.md). The rule itself lives in
// webhook/src/shared/key-expiry.ts, shared with the token webhook; the printers import it from here.
// On top of it the printers show a working key that is too short as Weak (docs/decisions.md OAK-34).

import { ownPath } from "../../../webhook/src/shared/own-path.js";
import { isStoredHash, MIN_KEY_LENGTH } from "../../../webhook/src/shared/key-hash.js";
import { keyStatus, type KeyStatus } from "../../../webhook/src/shared/key-expiry.js";

export {
  keyStatus,
  ttlBase,
  ttlSeconds,
  type KeyStatus,
} from "../../../webhook/src/shared/key-expiry.js";

/** Keys shorter than this are weak (the minimum the server asks of new keys). */
export const WEAK_KEY_LENGTH = MIN_KEY_LENGTH;

/** Why a key is weak, or undefined when it is not (or nothing says so). */
export type Weakness = "short" | "reported";

/**
 * A plain spec.key (anything but `sha256:` and 64 lowercase hex) shorter than WEAK_KEY_LENGTH, or
 * a hashed key the server found short at a login (status.weakKey: true).
 */
export function keyWeakness(object: unknown): Weakness | undefined {
  const key = ownPath(object, ["spec", "key"]);
  if (typeof key === "string" && key !== "" && !isStoredHash(key) && key.length < WEAK_KEY_LENGTH)
    return "short";
  return ownPath(object, ["status", "weakKey"]) === true ? "reported" : undefined;
}

/**
 * What STATUS shows: Active, Disabled, Expired, Weak for a working key that is weak, or
 * Terminating for a key being deleted (metadata.deletionTimestamp set, finalizers pending), as
 * kubectl shows a pod or namespace being deleted whatever its other state.
 */
export type ShownStatus = KeyStatus | "Weak" | "Terminating";

export function shownStatus(
  object: unknown,
  now: number,
): { status: ShownStatus; expiresAt: number | undefined } {
  const { status, expiresAt } = keyStatus(object, now);
  const deletion = ownPath(object, ["metadata", "deletionTimestamp"]);
  if (typeof deletion === "string" && deletion !== "") return { status: "Terminating", expiresAt };
  if (status === "Active" && keyWeakness(object) !== undefined)
    return { status: "Weak", expiresAt };
  return { status, expiresAt };
}
