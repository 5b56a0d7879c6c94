// metadata.deletionTimestamp and metadata.deletionGracePeriodSeconds
// (docs/reference.md#kube-deletion-timestamp; docs/decisions.md OAK-5). Only the API server sets
// them, on DELETE. Once set, the timestamp "may not be unset or be set further into the future,
// although it may be shortened" (ObjectMeta's doc in k8s.io/apimachinery pkg/apis/meta/v1). kube
// silently wipes or restores client changes here; we reject them instead.

import { forbidden, invalid, type FieldError } from "../shared/field-errors.js";
import type { ObjectMeta } from "../shared/ownedaccesskey.js";
import { isAbsent, wrongType } from "./json-fields.js";
import { parseRfc3339 } from "../shared/rfc3339.js";

const TS_PATH = "metadata.deletionTimestamp";
const GRACE_PATH = "metadata.deletionGracePeriodSeconds";
const IMMUTABLE = "field is immutable";
const ONLY_SHORTENED =
  "may not be unset or be set further into the future, although it may be shortened";
const SET_BY_SERVER = "may not be set on create; the API server sets it when the object is deleted";
export const RFC3339_MESSAGE = 'must be an RFC 3339 timestamp (e.g. "2006-01-02T15:04:05Z")';

const ownValue = (meta: ObjectMeta, key: keyof ObjectMeta): unknown =>
  Object.hasOwn(meta, key) ? meta[key] : undefined;

function typeErrors(ts: unknown, grace: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (!isAbsent(ts) && typeof ts !== "string") errs.push(wrongType(TS_PATH, ts, "string"));
  if (!isAbsent(grace) && !Number.isSafeInteger(grace)) {
    errs.push(wrongType(GRACE_PATH, grace, "integer"));
  }
  return errs;
}

function onCreate(ts: unknown, grace: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (!isAbsent(ts)) errs.push(forbidden(TS_PATH, SET_BY_SERVER));
  if (!isAbsent(grace)) errs.push(forbidden(GRACE_PATH, SET_BY_SERVER));
  return errs;
}

/** The timestamp rule of an UPDATE, for a well-typed new value. */
function timestampChange(ts: string | null, oldTs: unknown): FieldError[] {
  if (isAbsent(oldTs)) return ts === null ? [] : [invalid(TS_PATH, ts, IMMUTABLE)];
  if (ts === null) return [invalid(TS_PATH, null, ONLY_SHORTENED)];
  const next = parseRfc3339(ts);
  if (next === null) return [invalid(TS_PATH, ts, RFC3339_MESSAGE)];
  const prev = typeof oldTs === "string" ? parseRfc3339(oldTs) : null;
  // A stored value we cannot read can only be kept as it is.
  if (prev === null) return ts === oldTs ? [] : [invalid(TS_PATH, ts, IMMUTABLE)];
  return next <= prev ? [] : [invalid(TS_PATH, ts, ONLY_SHORTENED)];
}

/**
 * On CREATE (`oldMeta` null) neither field may be set. On UPDATE an unset timestamp stays unset, a
 * set one may only move earlier, and the grace period may not change.
 */
export function validateDeletionTimestamp(
  meta: ObjectMeta,
  oldMeta: ObjectMeta | null,
): FieldError[] {
  const ts = ownValue(meta, "deletionTimestamp");
  const grace = ownValue(meta, "deletionGracePeriodSeconds");
  const typed = typeErrors(ts, grace);
  if (typed.length) return typed;
  if (!oldMeta) return onCreate(ts, grace);
  const errs = timestampChange(
    isAbsent(ts) ? null : (ts as string),
    ownValue(oldMeta, "deletionTimestamp"),
  );
  const oldGrace = ownValue(oldMeta, "deletionGracePeriodSeconds");
  if ((grace ?? null) !== (oldGrace ?? null))
    errs.push(invalid(GRACE_PATH, grace ?? null, IMMUTABLE));
  return errs;
}
