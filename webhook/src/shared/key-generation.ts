// New access keys (docs/decisions.md OAK-8): at least 256 bits from a CSPRNG, in URL-safe
// characters so the key can sit in a header, a URL or a kubeconfig without escaping.

import { randomBytes } from "node:crypto";

const KEY_BYTES = 32;

/** 32 random bytes as base64url without padding: 43 characters of [A-Za-z0-9_-]. */
export function generateAccessKey(): string {
  return randomBytes(KEY_BYTES).toString("base64url");
}
