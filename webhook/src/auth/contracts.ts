// What the token and authorization webhooks share: the extra attribute that names the key a request
// was authenticated with, the read-only views of the watch caches both sides answer from, and the
// shape of a review answer. The caches themselves live in kube/ (which defines the views, so it
// needs nothing from auth/); auth/ sees only these interfaces, so its rules are pure and need no
// server to test.

export type { KeysByName, NamespaceLabels } from "../kube/ports.js";

/**
 * The `user.extra` attribute a key login carries: its value is the key's metadata.name. The
 * authorization webhook's matchConditions look for it, so only key logins are sent to vgate.
 * Lower case, as kube requires of extra keys; one per group domain.
 */
export function accessKeyExtra(groupDomain: string): string {
  return `accesskey.${groupDomain}/name`;
}

/**
 * The `user.extra` attribute naming which value of the key logged in: the first 16 hex digits of
 * its SHA-256 digest (nothing an attacker can use; in hashed storage every reader sees the whole
 * digest anyway). A rotation changes it, so the authorization webhook can refuse an old value that
 * kube-apiserver still has cached as logged in.
 */
export function accessKeyIdExtra(groupDomain: string): string {
  return `accesskey.${groupDomain}/key-id`;
}

/**
 * Kubernetes' own extra key for the credential a request was authenticated with
 * (user.CredentialIDKey): kube-apiserver's audit events carry it, so each request can be traced to
 * the credential. Its values are `<TYPE>=<id>`, as kube's `X509SHA256=<hex>` and `JTI=<jti>`; an
 * access key's is `ACCESSKEYID=<key-id>`, which changes when the key is rotated.
 */
export const CREDENTIAL_ID_EXTRA = "authentication.kubernetes.io/credential-id";

export function credentialId(keyIdHex: string): string {
  return `ACCESSKEYID=${keyIdHex}`;
}

/** The key-id of a stored spec.key (plain or sha256:). */
export function keyId(digestHex: string): string {
  return digestHex.slice(0, 16);
}

/**
 * What became of a login (a TokenReview), for the bounded `result` label of
 * vgate_access_key_logins_total: a guessing attack shows as many "invalid".
 */
export type LoginResult =
  "authenticated" | "invalid" | "disabled" | "expired" | "deleting" | "no-owner" | "audience";

/** How a review went, for the one log line per request (never a token, never a key). */
export interface ReviewLog {
  /** TokenReview only: the login's result. */
  login?: LoginResult;
  /** The access key's name, when the review found one. */
  key?: string;
  user?: string;
  /** authenticated (TokenReview) or allowed/denied/no-opinion (SubjectAccessReview). */
  decision: string;
  reason?: string;
  /** TokenReview only: the login used the key's previous key, in a rotation's grace window. */
  previousKey?: boolean;
}

/** A review answer: the body to send (HTTP 200) and what to log about it. */
export interface ReviewAnswer {
  body: object;
  log: ReviewLog;
}
