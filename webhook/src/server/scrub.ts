// No answer echoes a secret (docs/decisions.md OAK-11). Validators already leave the values of
// secret fields out of their messages; this is the one place every message passes on its way out,
// so a message built anywhere, now or later, cannot carry one either. It removes
// - every value the request holds under a secret field name (spec.key, connectorData, the OIDC
//   tokens, `token`, `authorization`, at any depth and however the message quotes it), and
// - anything shaped like a credential (redact.ts), whatever field it came from.
// It runs only for answers that carry text (denials, warnings, errors): allowed requests skip it.

import type { Status } from "../shared/status.js";
import type { AdmissionReviewResponse } from "../admission/review.js";
import { isSecretName, redactCredentials, REDACTED } from "./redact.js";

/** A secret value shorter than this is not matched in text (it would match ordinary words). */
const MIN_SECRET_CHARS = 4;
/** Secrets are found by their first characters; a shorter piece of one is not worth hiding. */
const PREFIX_CHARS = 12;
/** Candidates compared per prefix; past it the rest of the word is hidden anyway. */
const MAX_PER_PREFIX = 8;
/** Messages are cut here: thousands of field errors help nobody and flood audit logs. */
export const MAX_MESSAGE_CHARS = 16 * 1024;
/** Causes past this many are dropped from details (the message still counts them). */
export const MAX_CAUSES = 100;
const MAX_DEPTH = 128;

/** The secret values of one request, indexed by their first characters. */
export class SecretValues {
  private readonly byPrefix = new Map<string, string[]>();
  /** The prefix lengths in the index, longest first (PREFIX_CHARS, or a whole shorter secret). */
  private lengths: number[] = [];

  /** Collects every value found under a secret field name in `body`. */
  static of(body: unknown): SecretValues {
    const secrets = new SecretValues();
    const stack: [unknown, number, boolean][] = [[body, 0, false]];
    while (stack.length) {
      const [value, depth, secret] = stack.pop()!;
      if (typeof value === "string") {
        if (secret) secrets.add(value);
      } else if (typeof value === "number") {
        if (secret) secrets.add(String(value));
      } else if (typeof value === "object" && value !== null && depth < MAX_DEPTH) {
        for (const [k, v] of Object.entries(value)) {
          stack.push([v, depth + 1, secret || isSecretName(k)]);
        }
      }
    }
    return secrets;
  }

  get size(): number {
    return this.byPrefix.size;
  }

  add(value: string): void {
    if (value.length < MIN_SECRET_CHARS) return;
    // As written, and as JSON.stringify writes it inside a quoted value.
    const escaped = JSON.stringify(value).slice(1, -1);
    for (const form of escaped === value ? [value] : [value, escaped]) {
      const prefix = form.slice(0, PREFIX_CHARS);
      const list = this.byPrefix.get(prefix);
      if (!list) {
        this.byPrefix.set(prefix, [form]);
        if (!this.lengths.includes(prefix.length)) {
          this.lengths = [...this.lengths, prefix.length].sort((a, b) => b - a);
        }
      } else if (list.length < MAX_PER_PREFIX && !list.includes(form)) {
        list.push(form);
      }
    }
  }

  /** `text` with each secret (or any piece of one that starts with its prefix) replaced. */
  redact(text: string): string {
    if (this.byPrefix.size === 0) return text;
    let out = "";
    let copied = 0;
    for (let i = 0; i < text.length;) {
      const end = this.matchAt(text, i);
      if (end > i) {
        out += text.slice(copied, i) + REDACTED;
        i = copied = end;
      } else {
        i++;
      }
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /** The end of the secret that starts at `i` in `text`, or `i`. */
  private matchAt(text: string, i: number): number {
    let end = i;
    for (const length of this.lengths) {
      const candidates = this.byPrefix.get(text.slice(i, i + length));
      if (!candidates) continue;
      for (const c of candidates) end = Math.max(end, i + sharedPrefix(text, i, c));
      if (length === PREFIX_CHARS) end = Math.max(end, wordEnd(text, end));
    }
    return end;
  }
}

function sharedPrefix(text: string, at: number, s: string): number {
  let n = 0;
  while (n < s.length && at + n < text.length && text.charCodeAt(at + n) === s.charCodeAt(n)) n++;
  return n;
}

/** Past a long secret's prefix, the word it is part of is hidden too (it may be the rest). */
function wordEnd(text: string, from: number): number {
  let k = from;
  while (k < text.length && !/[\s"',;:)\]}]/.test(text[k]!)) k++;
  return k;
}

/** A message fit to send: no secret, nothing shaped like a credential, bounded length. */
export function scrubText(text: string, secrets?: SecretValues): string {
  const cut =
    text.length > MAX_MESSAGE_CHARS
      ? `${text.slice(0, MAX_MESSAGE_CHARS)}... (${text.length - MAX_MESSAGE_CHARS} more characters)`
      : text;
  return redactCredentials(secrets ? secrets.redact(cut) : cut);
}

/** A copy of `status` with its message, name and causes scrubbed. */
export function scrubStatus(status: Status, secrets?: SecretValues): Status {
  const out: Status = { ...status, message: scrubText(status.message, secrets) };
  const details = status.details;
  if (details) {
    out.details = { ...details };
    if (details.name !== undefined) out.details.name = scrubText(details.name, secrets);
    if (details.causes) {
      out.details.causes = details.causes.slice(0, MAX_CAUSES).map((c) => ({
        ...c,
        message: scrubText(c.message, secrets),
        field: scrubText(c.field, secrets),
      }));
    }
  }
  return out;
}

/** The review as is when it carries no text; else a copy with its status and warnings scrubbed. */
export function scrubReview(
  review: AdmissionReviewResponse,
  secretsOf: () => SecretValues,
): AdmissionReviewResponse {
  const { status, warnings } = review.response;
  if (!status && !warnings?.length) return review;
  const secrets = secretsOf();
  const response = { ...review.response };
  if (status) response.status = scrubStatus(status, secrets);
  if (warnings?.length) response.warnings = warnings.map((w) => scrubText(w, secrets));
  return { ...review, response };
}
