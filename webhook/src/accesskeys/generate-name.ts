// Name generation for `metadata.generateName` (docs/decisions.md OAK-4). The mutating webhook does
// what kube's names.SimpleNameGenerator and the RetryGenerateName store do
// (docs/reference.md#kube-generate-name), so that it can report a collision itself: the prefix cut
// to 58 characters plus 5 random characters, up to 8 tries.

import { randomInt } from "node:crypto";

/** utilrand's alphabet: no vowels and no 0, 1, 3, so generated names cannot spell words. */
export const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** kube's RetryGenerateName tries 8 names before answering 409 AlreadyExists. */
export const MAX_GENERATED_NAME_TRIES = 8;

const RANDOM_LENGTH = 5;
/** "maxNameLength = 63; MaxGeneratedNameLength = maxNameLength - randomLength". */
export const MAX_GENERATE_NAME_PREFIX = 63 - RANDOM_LENGTH;

/** Returns an integer in [0, n). */
export type RandomInt = (n: number) => number;

const cryptoRandom: RandomInt = (n) => randomInt(n);

function randomChar(random: RandomInt): string {
  const n = GENERATE_NAME_ALPHABET.length;
  // An injected source may return anything; fold it into range rather than read past the end.
  const r = Math.trunc(random(n));
  const i = Number.isFinite(r) ? ((r % n) + n) % n : 0;
  return GENERATE_NAME_ALPHABET.charAt(i);
}

/**
 * One candidate name. kube cuts the prefix to 58 bytes; a prefix that passed generateName
 * validation is ASCII, so characters and bytes agree.
 */
export function generateNameCandidate(prefix: string, random: RandomInt = cryptoRandom): string {
  let suffix = "";
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += randomChar(random);
  return prefix.slice(0, MAX_GENERATE_NAME_PREFIX) + suffix;
}

export type FreeName = { name: string } | { conflict: string };

/**
 * Tries up to 8 candidates, asking `exists` about each in turn. Returns the first free one, or the
 * last candidate tried as `conflict` (the caller answers newGenerateNameConflict(..., 1)).
 * Errors from `exists` propagate: the caller fails closed.
 */
export async function findFreeName(
  prefix: string,
  exists: (name: string) => Promise<boolean>,
  random: RandomInt = cryptoRandom,
): Promise<FreeName> {
  let last = "";
  for (let attempt = 0; attempt < MAX_GENERATED_NAME_TRIES; attempt++) {
    last = generateNameCandidate(prefix, random);
    if (!(await exists(last))) return { name: last };
  }
  return { conflict: last };
}
