// How a key is stored and compared. spec.key holds either the bearer token itself (plain storage)
// or `sha256:<64 lowercase hex>` (hashed storage: the hex is the SHA-256 of the token's UTF-8
// bytes). Both stand for one 32-byte digest, so the index and every comparison work on digests.
//
// A value that starts with `sha256:` but is not exactly 64 lowercase hex digits after it is a
// plain key: the token is then that whole string. The hashed form is recognised only when it is
// exact, so a malformed "hash" can never match a token it was not made from.

import { hash, timingSafeEqual } from "node:crypto";

export const HASH_PREFIX = "sha256:";

/**
 * The shortest key vgate accepts as a new key (docs/decisions.md OAK-20): kubectl accesskey makes
 * 43 characters from 256 random bits. Older, shorter keys keep working and are reported as weak.
 */
export const MIN_KEY_LENGTH = 32;

const STORED_HASH = /^sha256:[0-9a-f]{64}$/;

/** Whether a stored spec.key is the hashed form `sha256:<64 lowercase hex>`. */
export function isStoredHash(value: string): boolean {
  return STORED_HASH.test(value);
}

/** The SHA-256 of a token's UTF-8 bytes (one-shot: every TokenReview and listed key hashes one). */
export function tokenDigest(token: string): Buffer {
  return hash("sha256", token, "buffer");
}

/** The hashed storage form of a token: `sha256:<hex>`. */
export function hashKey(token: string): string {
  return `${HASH_PREFIX}${hash("sha256", token, "hex")}`;
}

/** The 32-byte digest a stored spec.key stands for: the decoded hash, or the hash of a plain key. */
export function storedDigest(stored: string): Buffer {
  if (isStoredHash(stored)) return Buffer.from(stored.slice(HASH_PREFIX.length), "hex");
  return tokenDigest(stored);
}

/**
 * Whether two digests are equal, in time that depends only on their length (always 32 bytes
 * here). Different lengths are unequal; timingSafeEqual itself throws on them.
 */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
