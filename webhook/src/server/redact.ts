// Secrets never reach a log line (docs/decisions.md OAK-11): access keys, connector data, OIDC
// tokens, bearer tokens and Authorization headers are replaced wherever they appear in a record.

import { SECRET_FIELD_NAMES } from "../api/ownedaccesskey.js";

export const REDACTED = "[REDACTED]";
const secretNames = new Set(SECRET_FIELD_NAMES.map((n) => n.toLowerCase()));
const BEARER = /\b(bearer)\s+[^\s"',;]+/gi;
const BEARER_TEST = /bearer/i;
const MAX_DEPTH = 32;

/** Whether a string may carry a bearer token (most hold none, and skip the replacement). */
export function mayHoldSecret(s: string): boolean {
  return s.length > 7 && BEARER_TEST.test(s);
}

function redactString(s: string): string {
  return mayHoldSecret(s) ? s.replace(BEARER, `$1 ${REDACTED}`) : s;
}

/** Field names compare case-insensitively; most are lower-case already, so skip the copy. */
function isSecretName(k: string): boolean {
  return secretNames.has(k) || (/[A-Z]/.test(k) && secretNames.has(k.toLowerCase()));
}

/** Whether anything in `value` needs redacting; walks without allocating. */
function hasSecrets(value: unknown, depth: number): boolean {
  if (typeof value === "string") return mayHoldSecret(value);
  if (typeof value !== "object" || value === null) return false;
  if (depth >= MAX_DEPTH) return true;
  if (Array.isArray(value)) return value.some((v) => hasSecrets(v, depth + 1));
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    if (isSecretName(k) && v !== undefined && v !== null && v !== "") return true;
    if (hasSecrets(v, depth + 1)) return true;
  }
  return false;
}

/**
 * `value` with every secret replaced: a copy when something had to change, else `value` itself.
 * The input is never changed. Most log records hold no secret, so they are checked, not copied.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  return depth === 0 && !hasSecrets(value, 0) ? value : redactCopy(value, depth);
}

function redactCopy(value: unknown, depth: number): unknown {
  if (typeof value === "string") return redactString(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "[TRUNCATED]";
  if (Array.isArray(value)) return value.map((v) => redactCopy(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    const secret = isSecretName(k) && v !== undefined && v !== null && v !== "";
    const copy = secret ? REDACTED : redactCopy(v, depth + 1);
    // A plain assignment to "__proto__" would set the prototype instead of a key.
    if (k === "__proto__") {
      Object.defineProperty(out, k, {
        value: copy,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[k] = copy;
    }
  }
  return out;
}
