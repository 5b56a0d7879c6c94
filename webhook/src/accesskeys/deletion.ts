// metadata.deletionTimestamp and metadata.deletionGracePeriodSeconds
// (docs/reference.md#kube-deletion-timestamp; docs/decisions.md OAK-5). Only the API server sets
// them, on DELETE. Once set, the timestamp "may not be unset or be set further into the future,
// although it may be shortened" (ObjectMeta's doc in k8s.io/apimachinery pkg/apis/meta/v1). kube
// silently wipes or restores client changes here; we reject them instead.

import { forbidden, invalid, type FieldError } from "../api/field-errors.js";
import type { ObjectMeta } from "../api/ownedaccesskey.js";
import { isAbsent, wrongType } from "./json-fields.js";

const TS_PATH = "metadata.deletionTimestamp";
const GRACE_PATH = "metadata.deletionGracePeriodSeconds";
const IMMUTABLE = "field is immutable";
const ONLY_SHORTENED =
  "may not be unset or be set further into the future, although it may be shortened";
const SET_BY_SERVER = "may not be set on create; the API server sets it when the object is deleted";
export const RFC3339_MESSAGE = 'must be an RFC 3339 timestamp (e.g. "2006-01-02T15:04:05Z")';

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Days in a month (1-12): day 0 of the next month is the last day of this one. */
function daysIn(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/**
 * Milliseconds since the epoch for an RFC 3339 timestamp as Go's time.Parse(time.RFC3339) accepts
 * it (fractional seconds allowed, no leap second, no 24:00), or null when it is not one.
 */
export function parseRfc3339(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0] = m.slice(1, 7).map(Number);
  const [sign, oh, om] = [m[8], Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return null;
  if (h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  // Milliseconds from the first three fraction digits (Go keeps nanoseconds; we compare in ms).
  const ms = Number((m[7] ?? ".").slice(1, 4).padEnd(3, "0"));
  date.setUTCHours(h, mi, s, ms);
  const offset = (oh * 60 + om) * 60_000 * (sign === "-" ? -1 : 1);
  return date.getTime() - offset;
}

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
