// POST /authorize: a SubjectAccessReview (authorization.k8s.io/v1 or v1beta1) in, its answer out.
//
// vgate never allows. For a request authenticated with an access key it either denies (the
// request is outside the key's scope, or the key cannot be found) or has no opinion, so that the
// next authorizer (RBAC) decides: a key's scope only narrows what its owner may do. When the caches
// the answer depends on have not synced, it denies (fails closed).

import { newBadRequest, newServiceUnavailable } from "../shared/status.js";
import { isObject, own, type JsonObject } from "../accesskeys/json-fields.js";
import { isExpired } from "../shared/key-expiry.js";
import { storedDigest } from "../shared/key-hash.js";
import { openPreviousKey } from "../shared/previous-key.js";
import {
  accessKeyExtra,
  accessKeyIdExtra,
  keyId,
  type KeysByName,
  type ReviewAnswer,
  type ReviewLog,
} from "./contracts.js";
import type {
  NonResourceAttributes,
  RequestAttributes,
  ResourceAttributes,
} from "./policy-rule-match.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { authorizeScope, NOT_LOADED_REASON, type ScopeDeps } from "./scope-authorizer.js";

export const SUBJECT_ACCESS_REVIEW_VERSIONS = [
  "authorization.k8s.io/v1",
  "authorization.k8s.io/v1beta1",
] as const;
export type SubjectAccessReviewVersion = (typeof SUBJECT_ACCESS_REVIEW_VERSIONS)[number];

/** At most this many groups, extra keys, and values per extra key. */
export const MAX_LIST_ITEMS = 1000;
/** The longest string accepted anywhere in the review, in UTF-8 bytes. */
export const MAX_STRING_BYTES = 64 * 1024;

/** Who asks; with the attributes of what is asked, a decoded SubjectAccessReview. */
export interface SubjectAccessReviewSubject {
  apiVersion: SubjectAccessReviewVersion;
  user: string;
  groups: string[];
  uid: string;
  /** Own properties only; a `__proto__` key is data like any other. */
  extra: Record<string, string[]>;
}

export type SubjectAccessReviewRequest = SubjectAccessReviewSubject & RequestAttributes;

export const SAR_REASONS = {
  notLoaded: NOT_LOADED_REASON,
  notFound: "access key not found",
  ambiguous: "the request names more than one access key",
  disabled: "access key disabled",
  deleting: "access key is being deleted",
  expired: "access key expired",
  rotated: "access key rotated since this login",
} as const;

const bad = (message: string) => newBadRequest(`SubjectAccessReview: ${message}`);

function decodeVersion(body: JsonObject): SubjectAccessReviewVersion {
  const apiVersion = own(body, "apiVersion");
  const version = SUBJECT_ACCESS_REVIEW_VERSIONS.find((v) => v === apiVersion);
  if (version === undefined) {
    throw bad(`apiVersion must be one of ${SUBJECT_ACCESS_REVIEW_VERSIONS.join(", ")}`);
  }
  if (own(body, "kind") !== "SubjectAccessReview") throw bad("kind must be SubjectAccessReview");
  return version;
}

function checkLength(value: string, path: string): string {
  if (value.length > MAX_STRING_BYTES || Buffer.byteLength(value, "utf8") > MAX_STRING_BYTES) {
    throw bad(`${path} must not be longer than ${MAX_STRING_BYTES} bytes`);
  }
  return value;
}

/** An omitempty string: absent or null is "". */
function optionalString(obj: JsonObject, key: string, path: string): string {
  const value = own(obj, key);
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw bad(`${path}.${key} must be a string`);
  return checkLength(value, `${path}.${key}`);
}

/** An omitempty list of strings: absent or null is []. */
function stringList(value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(`${path} must be an array of strings`);
  if (value.length > MAX_LIST_ITEMS) {
    throw bad(`${path} must not have more than ${MAX_LIST_ITEMS} items`);
  }
  return (value as unknown[]).map((item, i) => {
    if (typeof item !== "string") throw bad(`${path}[${i}] must be a string`);
    return checkLength(item, `${path}[${i}]`);
  });
}

/** map[string]ExtraValue. Keys are never echoed: they are client-chosen and may be long. */
function decodeExtra(value: unknown): Record<string, string[]> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw bad("spec.extra must be an object");
  const keys = Object.keys(value);
  if (keys.length > MAX_LIST_ITEMS) {
    throw bad(`spec.extra must not have more than ${MAX_LIST_ITEMS} keys`);
  }
  // fromEntries defines own data properties, so a "__proto__" key stays an ordinary entry.
  return Object.fromEntries(
    keys.map((key, i) => {
      checkLength(key, `spec.extra key #${i + 1}`);
      return [key, stringList(value[key], `spec.extra key #${i + 1}`)];
    }),
  );
}

const RESOURCE_FIELDS = [
  "namespace",
  "verb",
  "group",
  "version",
  "resource",
  "subresource",
  "name",
] as const;

function decodeResourceAttributes(value: JsonObject): ResourceAttributes {
  const path = "spec.resourceAttributes";
  const fields = RESOURCE_FIELDS.map((f) => [f, optionalString(value, f, path)]);
  return Object.fromEntries(fields) as ResourceAttributes;
}

function decodeNonResourceAttributes(value: JsonObject): NonResourceAttributes {
  const path = "spec.nonResourceAttributes";
  return { path: optionalString(value, "path", path), verb: optionalString(value, "verb", path) };
}

/** The attributes object at `key`, undefined when absent; anything else is a 400. */
function attributes(spec: JsonObject, key: string): JsonObject | undefined {
  const value = own(spec, key);
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw bad(`spec.${key} must be an object`);
  return value;
}

function decodeAttributes(spec: JsonObject): RequestAttributes {
  const resource = attributes(spec, "resourceAttributes");
  const nonResource = attributes(spec, "nonResourceAttributes");
  if ((resource === undefined) === (nonResource === undefined)) {
    throw bad("exactly one of spec.resourceAttributes and spec.nonResourceAttributes must be set");
  }
  return resource
    ? { resourceAttributes: decodeResourceAttributes(resource) }
    : { nonResourceAttributes: decodeNonResourceAttributes(nonResource!) };
}

/**
 * Reads a SubjectAccessReview as kube-apiserver sends it (v1 spec.groups; v1beta1 spec.group).
 * fieldSelector and labelSelector are ignored. Structural problems throw a 400 BadRequest.
 */
export function decodeSubjectAccessReview(body: unknown): SubjectAccessReviewRequest {
  if (!isObject(body)) throw bad("the body must be a JSON object");
  const apiVersion = decodeVersion(body);
  const spec = own(body, "spec");
  if (!isObject(spec)) throw bad("spec must be an object");
  const groupsField = apiVersion === "authorization.k8s.io/v1beta1" ? "group" : "groups";
  return {
    apiVersion,
    user: optionalString(spec, "user", "spec"),
    groups: stringList(own(spec, groupsField), `spec.${groupsField}`),
    uid: optionalString(spec, "uid", "spec"),
    extra: decodeExtra(own(spec, "extra")),
    ...decodeAttributes(spec),
  };
}

export interface ReviewDeps extends ScopeDeps {
  keys: KeysByName;
  /** The clock, for expiry; Date.now when omitted. */
  now?: () => number;
  /** A use of the key the token webhook knows of but has not yet written to status. */
  localLastActivity?: (name: string) => number | undefined;
}

interface Status {
  allowed: false;
  denied?: true;
  reason?: string;
}

function answer(req: SubjectAccessReviewRequest, status: Status, log: ReviewLog): ReviewAnswer {
  return { body: { apiVersion: req.apiVersion, kind: "SubjectAccessReview", status }, log };
}

function deny(req: SubjectAccessReviewRequest, reason: string, key?: string): ReviewAnswer {
  const log: ReviewLog = { user: req.user, decision: "denied", reason };
  if (key !== undefined) log.key = key;
  return answer(req, { allowed: false, denied: true, reason }, log);
}

function noOpinion(req: SubjectAccessReviewRequest, key?: string): ReviewAnswer {
  const log: ReviewLog = { user: req.user, decision: "no-opinion" };
  if (key !== undefined) log.key = key;
  return answer(req, { allowed: false }, log);
}

const shortText = (s: string): string => (s.length > 100 ? `${s.slice(0, 100)}...` : s);

/**
 * A key that stopped working while kube-apiserver still caches its login (at least 10 s, a cache no
 * flag changes): deny at once. Expiry counts the uses the token webhook has not yet written to
 * status.lastActivity, as the token webhook does.
 */
function keyProblem(key: OwnedAccessKey, deps: ReviewDeps): string | undefined {
  if (key.metadata?.deletionTimestamp) return SAR_REASONS.deleting;
  if (key.spec?.disabled === true) return SAR_REASONS.disabled;
  const local = deps.localLastActivity?.(key.metadata?.name ?? "");
  const now = (deps.now ?? Date.now)();
  return isExpired(key, now, { localLastActivity: local }) ? SAR_REASONS.expired : undefined;
}

/**
 * A login with a key's old value (kube-apiserver still has it cached as logged in) after a
 * rotation. Checked when the login carries a key-id, as every login vgate made does. The previous
 * key of a rotation with a grace window (spec.previousKey) is accepted until its deadline.
 */
function rotated(key: OwnedAccessKey, req: SubjectAccessReviewRequest, deps: ReviewDeps) {
  const ids = req.extra[accessKeyIdExtra(deps.groupDomain)];
  if (ids === undefined) return undefined;
  if (ids.length !== 1) return SAR_REASONS.rotated;
  const stored = key.spec?.key;
  const current = typeof stored === "string" && stored !== "" ? storedDigest(stored) : undefined;
  if (current && ids[0] === keyId(current.toString("hex"))) return undefined;
  const previous = openPreviousKey(key, (deps.now ?? Date.now)());
  if (previous && ids[0] === keyId(previous.digest.toString("hex"))) return undefined;
  return SAR_REASONS.rotated;
}

/**
 * The answer to a decoded review. Requests not made with an access key get no opinion; for key
 * requests the key named in extra must exist with the request's uid (each key logs in with its
 * own metadata.uid), and its scope decides. Until the key cache has synced, a key request throws a
 * 503 ServiceUnavailable (failurePolicy: Deny makes kube-apiserver refuse it).
 */
export function reviewAccess(req: SubjectAccessReviewRequest, deps: ReviewDeps): ReviewAnswer {
  const extraKey = accessKeyExtra(deps.groupDomain);
  if (!Object.hasOwn(req.extra, extraKey)) return noOpinion(req);
  const names = req.extra[extraKey] ?? [];
  if (names.length > 1) return deny(req, SAR_REASONS.ambiguous);
  const name = names[0] ?? "";
  const logName = shortText(name);
  if (!deps.keys.synced()) throw newServiceUnavailable(SAR_REASONS.notLoaded);
  const key = name === "" ? undefined : deps.keys.get(name);
  if (key === undefined || key.metadata?.uid !== req.uid) {
    return deny(req, SAR_REASONS.notFound, logName);
  }
  const problem = keyProblem(key, deps) ?? rotated(key, req, deps);
  if (problem !== undefined) return deny(req, problem, name);
  const decision = authorizeScope(key, req, deps);
  return decision.denied ? deny(req, decision.reason, name) : noOpinion(req, name);
}
