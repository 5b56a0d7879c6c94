// Rotation with a grace window (docs/decisions.md OAK-38). spec.previousKey {key, until} keeps the
// key before the last rotation valid until `until`; only vgate writes it. A rotation asks for it
// with the annotation accesskey.<group-domain>/rotation-grace-seconds (kubectl accesskey rotate
// --grace), which the mutating webhook turns into spec.previousKey and removes. Every other value
// a client sends for spec.previousKey is refused (422), so no edit, apply or replace can plant a
// digest or move a deadline; a client may only drop it (ending the window early) or send back
// what is stored.

import { isDeepStrictEqual } from "node:util";
import { forbidden, invalid, type FieldError } from "../shared/field-errors.js";
import { digestsEqual, HASH_PREFIX, storedDigest } from "../shared/key-hash.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import {
  DEFAULT_MAX_ROTATION_GRACE_MS,
  previousKeyOf,
  rotationGraceAnnotation,
} from "../shared/previous-key.js";
import { isObject, own } from "./json-fields.js";
import type { KeyRequest } from "./request.js";

/** Replicas' clocks may differ this much between the mutating and the validating webhook. */
export const CLOCK_SKEW_MS = 5_000;
const FIELD = "spec.previousKey";
const SET_BY_VGATE =
  "is set by vgate on a rotation (kubectl accesskey rotate --grace); it can be removed, but not set or changed";

function groupDomain(req: KeyRequest): string {
  return req.identity.group.replace(/^management\./, "");
}

function keyOf(obj: OwnedAccessKey | null): string | undefined {
  const spec = isObject(obj) ? own(obj, "spec") : undefined;
  const key = isObject(spec) ? own(spec, "key") : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/** The raw spec.previousKey of an object, undefined when absent or null. */
function rawPrevious(obj: OwnedAccessKey | null): unknown {
  const spec = isObject(obj) ? own(obj, "spec") : undefined;
  const value = isObject(spec) ? own(spec, "previousKey") : undefined;
  return value === null ? undefined : value;
}

/** Whether the update gives the key another value (a rotation). */
function rotates(req: KeyRequest): boolean {
  const before = keyOf(req.oldObject);
  const after = keyOf(req.object);
  if (before === undefined || after === undefined) return false;
  return !digestsEqual(storedDigest(before), storedDigest(after));
}

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function annotationsOf(obj: OwnedAccessKey | null): Record<string, unknown> | undefined {
  const meta = isObject(obj) ? own(obj, "metadata") : undefined;
  const annotations = isObject(meta) ? own(meta, "annotations") : undefined;
  return isObject(annotations) ? annotations : undefined;
}

const maxGraceOf = (req: KeyRequest) => req.maxRotationGraceMs ?? DEFAULT_MAX_ROTATION_GRACE_MS;
const nowOf = (req: KeyRequest) => req.now ?? Date.now();

/** The grace the request asks for, in seconds (0: none), or the errors of the annotation. */
function requestedGrace(req: KeyRequest): { seconds: number } | { errors: FieldError[] } {
  const name = rotationGraceAnnotation(groupDomain(req));
  const value = annotationsOf(req.object)?.[name];
  if (value === undefined) return { seconds: 0 };
  const field = `metadata.annotations[${name}]`;
  if (typeof value !== "string" || !/^\d{1,10}$/.test(value)) {
    return { errors: [invalid(field, value, "must be a whole number of seconds, such as 3600")] };
  }
  const seconds = Number(value);
  const maxSeconds = Math.floor(maxGraceOf(req) / 1000);
  if (seconds > maxSeconds) {
    return {
      errors: [
        invalid(
          field,
          value,
          `must be at most ${maxSeconds} seconds, the longest grace this server allows (vgate serve --max-rotation-grace)`,
        ),
      ],
    };
  }
  if (seconds > 0 && !rotates(req)) {
    return {
      errors: [
        invalid(
          field,
          value,
          "keeps the previous key valid after a rotation, so spec.key must change in the same update (kubectl accesskey rotate --grace)",
        ),
      ],
    };
  }
  return { seconds };
}

/** What spec.previousKey becomes: the rotation's, the stored one while open, or none. */
function derived(req: KeyRequest, graceSeconds: number): unknown {
  const now = nowOf(req);
  if (rotates(req)) {
    if (graceSeconds === 0) return undefined;
    const digest = storedDigest(keyOf(req.oldObject)!).toString("hex");
    return { key: `${HASH_PREFIX}${digest}`, until: rfc3339(now + graceSeconds * 1000) };
  }
  const stored = previousKeyOf(req.oldObject);
  return stored && now < stored.until ? rawPrevious(req.oldObject) : undefined;
}

/** `obj` with spec.previousKey set to `value` (removed when undefined) and the annotation gone. */
function withPrevious(obj: OwnedAccessKey, value: unknown, annotation: string): OwnedAccessKey {
  const spec: Record<string, unknown> = { ...(isObject(obj.spec) ? obj.spec : {}) };
  if (value === undefined) delete spec["previousKey"];
  else spec["previousKey"] = value;
  const out = { ...obj, spec } as OwnedAccessKey;
  const annotations = annotationsOf(obj);
  if (annotations && Object.hasOwn(annotations, annotation)) {
    const rest = Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== annotation));
    out.metadata = { ...obj.metadata, annotations: rest as Record<string, string> };
    if (Object.keys(rest).length === 0) delete out.metadata.annotations;
  }
  return out;
}

/**
 * The mutating webhook's part on UPDATE: spec.previousKey as vgate derives it from the stored
 * object and the grace asked for, the annotation removed. `obj` is the object after the other
 * mutations (hashed storage's included). A client value other than the stored one, absent or the
 * derived one is refused.
 */
export function mutatePreviousKey(
  req: KeyRequest,
  obj: OwnedAccessKey,
): { object: OwnedAccessKey } | { errors: FieldError[] } {
  if (req.operation !== "UPDATE") return { object: obj };
  const grace = requestedGrace({ ...req, object: obj });
  if ("errors" in grace) return grace;
  const value = derived({ ...req, object: obj }, grace.seconds);
  const sent = rawPrevious(obj);
  const untouched = sent === undefined || isDeepStrictEqual(sent, rawPrevious(req.oldObject));
  if (!untouched && !isDeepStrictEqual(sent, value))
    return { errors: [forbidden(FIELD, SET_BY_VGATE)] };
  // A client that removed the field ends the window early: it only takes access away.
  const result = sent === undefined && !rotates({ ...req, object: obj }) ? undefined : value;
  const annotation = rotationGraceAnnotation(groupDomain(req));
  const unchanged =
    isDeepStrictEqual(result, sent) && !Object.hasOwn(annotationsOf(obj) ?? {}, annotation);
  return { object: unchanged ? obj : withPrevious(obj, result, annotation) };
}

/**
 * The validating webhook's check of the object to be stored: no grace annotation left (the mutating
 * webhook removes it), no spec.previousKey on a new key, and on an update either the stored value,
 * none, or the previous key's digest with a deadline within --max-rotation-grace of now.
 */
export function previousKeyErrors(req: KeyRequest): FieldError[] {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return [];
  const annotation = rotationGraceAnnotation(groupDomain(req));
  if (Object.hasOwn(annotationsOf(req.object) ?? {}, annotation)) {
    const why =
      req.operation === "CREATE"
        ? "applies to a rotation only (kubectl accesskey rotate --grace): a new key has no previous key"
        : "is read and removed by vgate's mutating webhook; is it installed?";
    return [forbidden(`metadata.annotations[${annotation}]`, why)];
  }
  const sent = rawPrevious(req.object);
  if (sent === undefined) return [];
  if (req.operation === "CREATE") return [forbidden(FIELD, SET_BY_VGATE)];
  if (isDeepStrictEqual(sent, rawPrevious(req.oldObject))) return [];
  const prev = previousKeyOf(req.object);
  const old = keyOf(req.oldObject);
  const fits =
    prev !== undefined &&
    old !== undefined &&
    rotates(req) &&
    digestsEqual(prev.digest, storedDigest(old)) &&
    prev.until <= nowOf(req) + maxGraceOf(req) + CLOCK_SKEW_MS &&
    isObject(sent) &&
    Object.keys(sent).every((k) => k === "key" || k === "until");
  return fits ? [] : [forbidden(FIELD, SET_BY_VGATE)];
}
