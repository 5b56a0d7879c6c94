// POST /authenticate: a TokenReview (authentication.k8s.io/v1 or v1beta1) in, its answer out.
//
// Existence never shows: an unknown key, a near miss, a malformed token and a digest two keys share
// all get the same answer ("invalid access key"), and every well-formed token costs one SHA-256
// and one Map lookup before that answer. The other reasons (disabled, expired, being deleted, no
// owner, audiences) are only given to someone who holds the exact key.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { goQuote } from "../shared/go-quote.js";
import { newBadRequest, newServiceUnavailable } from "../shared/status.js";
import { isObject, own } from "../accesskeys/json-fields.js";
import { isExpired } from "../shared/key-expiry.js";
import { MIN_KEY_LENGTH } from "../shared/key-hash.js";
import type { LoginResult, ReviewAnswer, ReviewLog } from "./contracts.js";
import { keyUser, type KeyUser } from "./identity.js";
import type { KeyLookup } from "./key-index.js";
import { openPreviousKey } from "../shared/previous-key.js";

export const TOKEN_REVIEW_VERSIONS = [
  "authentication.k8s.io/v1",
  "authentication.k8s.io/v1beta1",
] as const;
export type TokenReviewVersion = (typeof TOKEN_REVIEW_VERSIONS)[number];

export interface TokenReviewRequest {
  apiVersion: TokenReviewVersion;
  token: string;
  audiences: string[];
}

export const MAX_AUDIENCES = 100;
export const MAX_AUDIENCE_BYTES = 1024;
/** Longer tokens cannot be keys: they are refused without being hashed. */
export const MAX_TOKEN_LENGTH = 8192;

/** The answers of a review that fails; the same text for every cause of "invalid". */
export const TOKEN_ERRORS = {
  notSynced: "access keys are not loaded yet; try again",
  invalid: "invalid access key",
  disabled: "access key disabled",
  expired: "access key expired",
  deleting: "access key is being deleted",
  noOwner: "access key has no owner",
} as const;

const bad = (message: string) => newBadRequest(`TokenReview: ${message}`);

function decodeVersion(body: Record<string, unknown>): TokenReviewVersion {
  const apiVersion = own(body, "apiVersion");
  const version = TOKEN_REVIEW_VERSIONS.find((v) => v === apiVersion);
  if (version === undefined) {
    throw bad(`apiVersion must be one of ${TOKEN_REVIEW_VERSIONS.join(", ")}`);
  }
  if (own(body, "kind") !== "TokenReview") throw bad("kind must be TokenReview");
  return version;
}

function decodeAudiences(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad("spec.audiences must be an array of strings");
  if (value.length > MAX_AUDIENCES) {
    throw bad(`spec.audiences must not have more than ${MAX_AUDIENCES} items`);
  }
  return (value as unknown[]).map((aud, i) => {
    if (typeof aud !== "string") throw bad(`spec.audiences[${i}] must be a string`);
    if (Buffer.byteLength(aud, "utf8") > MAX_AUDIENCE_BYTES) {
      throw bad(`spec.audiences[${i}] must not be longer than ${MAX_AUDIENCE_BYTES} bytes`);
    }
    return aud;
  });
}

/**
 * Reads a TokenReview as kube-apiserver sends it. Structural problems throw a 400 BadRequest
 * KubeError whose message never contains the token.
 */
export function decodeTokenReview(body: unknown): TokenReviewRequest {
  if (!isObject(body)) throw bad("the body must be a JSON object");
  const apiVersion = decodeVersion(body);
  const spec = own(body, "spec");
  if (!isObject(spec)) throw bad("spec must be an object");
  const token = own(spec, "token");
  if (typeof token !== "string") throw bad("spec.token must be a string");
  return { apiVersion, token, audiences: decodeAudiences(own(spec, "audiences")) };
}

export interface TokenReviewDeps {
  index: { synced(): boolean; findByToken(token: string): KeyLookup };
  groupDomain: string;
  /** The audiences vgate's keys are valid for (--audiences); undefined: audience-agnostic. */
  audiences?: readonly string[] | undefined;
  now(): number;
  /** A use of the key the recorder knows of but has not yet written to status. */
  localLastActivity(name: string): number | undefined;
  /**
   * A login at `at`; `weak`: the token is shorter than the minimum key length; `previous`: it is
   * the key's previous key, in its grace window.
   */
  recordActivity(key: OwnedAccessKey, at: number, weak: boolean, previous: boolean): void;
}

interface Status {
  authenticated: boolean;
  user?: KeyUser;
  audiences?: string[];
  error?: string;
}

function answer(apiVersion: TokenReviewVersion, status: Status, log: ReviewLog): ReviewAnswer {
  return { body: { apiVersion, kind: "TokenReview", status }, log };
}

function refuse(
  req: TokenReviewRequest,
  error: string,
  login: LoginResult,
  log: Omit<ReviewLog, "decision" | "login">,
) {
  return answer(
    req.apiVersion,
    { authenticated: false, error },
    { decision: "unauthenticated", login, ...log },
  );
}

const PROBLEM_RESULTS: Readonly<Record<string, LoginResult>> = {
  [TOKEN_ERRORS.deleting]: "deleting",
  [TOKEN_ERRORS.disabled]: "disabled",
  [TOKEN_ERRORS.expired]: "expired",
};

/** Printable ASCII only: a bearer token is an HTTP header value. */
const WELL_FORMED_TOKEN = /^[\x20-\x7e]+$/;

function wellFormed(token: string): boolean {
  return token.length <= MAX_TOKEN_LENGTH && WELL_FORMED_TOKEN.test(token);
}

/** The audiences to answer with, or a kube-worded error when none of the requested ones fit. */
function audienceCheck(
  requested: readonly string[],
  accepted: readonly string[] | undefined,
): { audiences?: string[]; error?: string } {
  if (accepted === undefined) return {};
  if (requested.length === 0) return { audiences: [...accepted] };
  const audiences = requested.filter((aud) => accepted.includes(aud));
  if (audiences.length > 0) return { audiences };
  // kube's service account tokens say the same (pkg/serviceaccount/jwt.go).
  const list = (auds: readonly string[]) => `[${auds.map(goQuote).join(" ")}]`;
  return {
    error: `token audiences ${list(accepted)} is invalid for the target audiences ${list(requested)}`,
  };
}

/** Why an exactly matching key may still not log in, or undefined when it may. */
function keyProblem(key: OwnedAccessKey, now: number, deps: TokenReviewDeps): string | undefined {
  const meta = key.metadata;
  const deletion = meta && Object.hasOwn(meta, "deletionTimestamp") ? meta.deletionTimestamp : null;
  if (deletion !== undefined && deletion !== null) return TOKEN_ERRORS.deleting;
  if (key.spec && Object.hasOwn(key.spec, "disabled") && key.spec.disabled === true) {
    return TOKEN_ERRORS.disabled;
  }
  const name = meta?.name ?? "";
  if (isExpired(key, now, { localLastActivity: deps.localLastActivity(name) })) {
    return TOKEN_ERRORS.expired;
  }
  return undefined;
}

/** A deadline as a log line shows it. */
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function reviewKey(
  req: TokenReviewRequest,
  key: OwnedAccessKey,
  previous: boolean,
  deps: TokenReviewDeps,
) {
  const now = deps.now();
  const name = key.metadata?.name ?? "";
  // The previous key of a rotation logs in until its deadline; after it, it is no key at all.
  const window = previous ? openPreviousKey(key, now) : undefined;
  if (previous && !window) {
    return refuse(req, TOKEN_ERRORS.invalid, "invalid", {
      key: name,
      reason: "previous key past its grace window",
    });
  }
  const problem = keyProblem(key, now, deps);
  if (problem !== undefined) {
    return refuse(req, problem, PROBLEM_RESULTS[problem] ?? "invalid", {
      key: name,
      reason: problem,
    });
  }
  const user = keyUser(key, deps.groupDomain, window?.digest);
  if (!user) {
    return refuse(req, TOKEN_ERRORS.noOwner, "no-owner", {
      key: name,
      reason: TOKEN_ERRORS.noOwner,
    });
  }
  const { audiences, error } = audienceCheck(req.audiences, deps.audiences);
  if (error !== undefined) {
    return refuse(req, error, "audience", { key: name, user: user.username, reason: "audiences" });
  }
  deps.recordActivity(key, now, req.token.length < MIN_KEY_LENGTH, window !== undefined);
  const status: Status = { authenticated: true, user };
  if (audiences) status.audiences = audiences;
  const log: ReviewLog = {
    key: name,
    user: user.username,
    decision: "authenticated",
    login: "authenticated",
  };
  if (window) {
    log.previousKey = true;
    log.reason = `previous key (rotated), valid until ${rfc3339(window.until)}`;
  }
  return answer(req.apiVersion, status, log);
}

/**
 * The answer to a decoded TokenReview; the body never contains the token. Until the key cache has
 * synced it throws a 503 ServiceUnavailable (fail closed: kube-apiserver then refuses the login),
 * since "no such key" could be wrong.
 */
export function reviewToken(req: TokenReviewRequest, deps: TokenReviewDeps): ReviewAnswer {
  if (!deps.index.synced()) throw newServiceUnavailable(TOKEN_ERRORS.notSynced);
  const invalid = (reason: string) => refuse(req, TOKEN_ERRORS.invalid, "invalid", { reason });
  if (!wellFormed(req.token)) return invalid("malformed");
  const found = deps.index.findByToken(req.token);
  if (found.kind === "none") return invalid("unknown");
  if (found.kind === "ambiguous") return invalid(`ambiguous: ${found.names.join(", ")}`);
  return reviewKey(req, found.key, found.previous, deps);
}
