// Secrets never reach a log line (docs/decisions.md OAK-11): access keys, connector data, OIDC
// tokens, bearer tokens, Authorization headers, and any text shaped like a credential (below) are
// replaced wherever they appear in a record.

import { SECRET_FIELD_NAMES } from "../shared/ownedaccesskey.js";

export const REDACTED = "[REDACTED]";
const secretNames = new Set(SECRET_FIELD_NAMES.map((n) => n.toLowerCase()));
const MAX_DEPTH = 32;

// What a credential looks like, for text where field names are gone (error messages, free-form log
// text): a bearer token; a PEM block; a run of 32 or more hex digits; or a word of 20 or more
// characters from the base64 and base64url alphabets that mixes upper case, lower case and digits,
// as generated keys, tokens and JWT segments do. Kubernetes names, UIDs, field paths and kinds do
// not: names are lower case, UIDs are short hex groups, paths and kinds have no long mixed runs.
const BEARER = /\b(bearer)\s+[^\s"',;]+/gi;
const BEARER_TEST = /\bbearer\s/i;
const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g;
const PEM_TEST = /-----BEGIN [A-Z0-9 ]+-----/;
const HEX_RUN = /(?<![0-9A-Za-z])[0-9A-Fa-f]{32,}(?![0-9A-Za-z])/g;
const TOKEN = /[A-Za-z0-9+/=_-]{20,}/g;
const UPPER = /[A-Z]/;
const LOWER = /[a-z]/;
const DIGIT = /[0-9]/;

function looksRandom(word: string): boolean {
  return UPPER.test(word) && LOWER.test(word) && DIGIT.test(word);
}

/**
 * Whether `s` holds something shaped like a credential. Tests without building strings: it runs
 * on every string of every log record, and nearly all hold none.
 */
export function mayHoldSecret(s: string): boolean {
  if (s.length < 8) return false;
  if (BEARER_TEST.test(s)) return true;
  if (s.length < 20) return false;
  if (PEM_TEST.test(s)) return true;
  HEX_RUN.lastIndex = 0;
  if (HEX_RUN.test(s)) return true;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(s); m; m = TOKEN.exec(s)) {
    if (looksRandom(m[0])) return true;
  }
  return false;
}

/** `text` with everything shaped like a credential replaced by [REDACTED]. */
export function redactCredentials(text: string): string {
  if (!mayHoldSecret(text)) return text;
  return text
    .replace(PEM, REDACTED)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(HEX_RUN, REDACTED)
    .replace(TOKEN, (word) => (looksRandom(word) ? REDACTED : word));
}

/** Field names compare case-insensitively; most are lower-case already, so skip the copy. */
export function isSecretName(k: string): boolean {
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
  if (typeof value === "string") return redactCredentials(value);
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
