// Where a plaintext key shows in text the fuzzer got back: the whole key, or any piece of it long
// enough to matter (WINDOW characters; a piece of 16 base64url characters is 96 bits of a key).
// vgate's scrubber hides each secret from its first 12 characters on (docs/decisions.md OAK-11), so
// a key that shows from its start is hidden; a piece from its middle must not show either.

import { hashed, LAST_APPLIED, MIN_KEY_LENGTH } from "./keys.js";
import type { Target } from "./targets.js";

/** The shortest piece of a key that counts as the key showing. */
export const WINDOW = 16;

/** The first of `secrets` that shows in `text`, in words (never the key itself); or undefined. */
export function keyShowing(text: string, secrets: readonly string[]): string | undefined {
  for (const [i, secret] of secrets.entries()) {
    if (text.includes(secret)) return `planted key ${i + 1} (${secret.length} characters)`;
    for (let at = 0; at + WINDOW <= secret.length; at++) {
      if (text.includes(secret.slice(at, at + WINDOW))) {
        return `characters ${at + 1}-${at + WINDOW} of planted key ${i + 1}`;
      }
    }
  }
  return undefined;
}

/** Every string of `value` (object keys included), iteratively: any depth is fine. */
export function stringsOf(value: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (typeof v === "object" && v !== null) {
      for (const [k, inner] of Object.entries(v)) {
        out.push(k);
        stack.push(inner);
      }
    }
  }
  return out;
}

/** Where a key shows in any string of `value`: see keyShowing. */
export function keyShowingIn(value: unknown, secrets: readonly string[]): string | undefined {
  if (secrets.length === 0) return undefined;
  for (const s of stringsOf(value)) {
    const found = keyShowing(s, secrets);
    if (found) return found;
  }
  return undefined;
}

type Json = Record<string, unknown>;

const field = (v: unknown, name: string): unknown =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.hasOwn(v, name)
    ? (v as Json)[name]
    : undefined;

function lastAppliedKey(obj: unknown): unknown {
  const text = field(field(field(obj, "metadata"), "annotations"), LAST_APPLIED);
  try {
    return typeof text === "string" ? field(field(JSON.parse(text), "spec"), "key") : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The planted `keys` that vgate can tell are keys in `body` (as JSON.parse reads it), and so must
 * never show: those under a secret field name (spec.key of the object and the stored object, a
 * TokenReview's token), which vgate's scrubber hides wherever they appear (docs/decisions.md
 * OAK-11); with hashed storage also the key in last-applied-configuration and every key of 32
 * characters or more whose sha256:<hex> is spec.key, which it looks for by value. A key the fuzzer copied somewhere else
 * while a mutation took spec.key away is just a string to vgate.
 */
export function knownKeys(target: Target, keys: readonly string[], body: unknown): string[] {
  if (keys.length === 0) return [];
  const request = field(body, "request");
  const object = field(request, "object");
  const stored = [
    field(field(object, "spec"), "key"),
    field(field(field(request, "oldObject"), "spec"), "key"),
    field(field(body, "spec"), "token"),
  ];
  if (target === "hashed") stored.push(lastAppliedKey(object));
  const hashOfObject = target === "hashed" ? field(field(object, "spec"), "key") : undefined;
  // vgate looks for a key by its hash only from MIN_KEY_LENGTH characters on (README, Key storage).
  return keys.filter(
    (k) => stored.includes(k) || (k.length >= MIN_KEY_LENGTH && hashOfObject === hashed(k)),
  );
}
