// Secrets never reach a log line (project decision 11): access keys, connector data, OIDC tokens,
// bearer tokens and Authorization headers are replaced wherever they appear in a record.

import { SECRET_FIELD_NAMES } from "../api/ownedaccesskey.js";

export const REDACTED = "[REDACTED]";
const secretNames = new Set(SECRET_FIELD_NAMES.map((n) => n.toLowerCase()));
const BEARER = /\b(bearer)\s+[^\s"',;]+/gi;
const MAX_DEPTH = 32;

function redactString(s: string): string {
  // Most strings hold no token; skip the regular expression for them.
  return s.length > 7 && /bearer/i.test(s) ? s.replace(BEARER, `$1 ${REDACTED}`) : s;
}

/** Field names compare case-insensitively; most are lower-case already, so skip the copy. */
function isSecretName(k: string): boolean {
  return secretNames.has(k) || (/[A-Z]/.test(k) && secretNames.has(k.toLowerCase()));
}

/** A copy of `value` with every secret replaced; the input is never changed. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactString(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "[TRUNCATED]";
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    const secret = isSecretName(k) && v !== undefined && v !== null && v !== "";
    const copy = secret ? REDACTED : redactSecrets(v, depth + 1);
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
