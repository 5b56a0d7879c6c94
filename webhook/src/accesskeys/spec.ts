// spec of an OwnedAccessKey (fields: docs/reference.md#ownedaccesskey-fields; value checks:
// docs/decisions.md OAK-7): a type check for every field, the `type` enum, the ttl range, RFC 3339
// timestamps and base64 []byte fields. Unknown fields are ignored because kube prunes them from CRD
// objects. Secret values are never echoed in an error.

import { invalid, notSupported, OMIT_VALUE, type FieldError } from "../shared/field-errors.js";
import { ACCESS_KEY_TYPES } from "../shared/ownedaccesskey.js";
import {
  checkBoolean,
  checkFields,
  checkObject,
  checkString,
  checkStringList,
  checkStringMap,
  isAbsent,
  wrongType,
  type FieldCheck,
} from "./json-fields.js";
import { validateRules } from "./policy-rules.js";
import { validateScope } from "./scope.js";

const string: FieldCheck = (v, p) => checkString(v, p);
const secretString: FieldCheck = (v, p) => checkString(v, p, true);
const boolean: FieldCheck = (v, p) => checkBoolean(v, p);
const stringList: FieldCheck = (v, p) => checkStringList(v, p);

const IDENTITY_FIELDS: Record<string, FieldCheck> = {
  userId: string,
  username: string,
  preferredUsername: string,
  email: string,
  emailVerified: boolean,
  groups: stringList,
  connector: string,
  connectorData: (v, p) => checkBase64(v, p),
  extraClaims: (v, p) => checkStringMap(v, p),
};

const OIDC_PROVIDER_FIELDS: Record<string, FieldCheck> = {
  clientId: string,
  nonce: string,
  redirectUri: string,
  scopes: string,
};

// vgate's (accesskeys/previous-key.ts); key is a digest, but not echoed either.
const PREVIOUS_KEY_FIELDS: Record<string, FieldCheck> = {
  key: secretString,
  until: (v, p) => checkTimestamp(v, p),
};

const OIDC_LOGIN_FIELDS: Record<string, FieldCheck> = {
  idToken: (v, p) => checkBase64(v, p),
  accessToken: (v, p) => checkBase64(v, p),
  refreshToken: (v, p) => checkBase64(v, p),
  lastRefresh: (v, p) => checkTimestamp(v, p),
};

const SPEC_FIELDS: Record<string, FieldCheck> = {
  displayName: string,
  description: string,
  user: string,
  team: string,
  subject: string,
  groups: stringList,
  key: secretString,
  previousKey: (v, p) => checkObject(v, p, (o, q) => checkFields(o, q, PREVIOUS_KEY_FIELDS), true),
  disabled: boolean,
  ttl: (v, p) => checkTtl(v, p),
  ttlAfterLastActivity: boolean,
  scope: validateScope,
  rules: validateRules,
  allowLoftCli: boolean,
  type: (v, p) => checkType(v, p),
  // identity and oidcLogin hold secrets, so a wrong-typed value there is not echoed either.
  identity: (v, p) => checkObject(v, p, (o, q) => checkFields(o, q, IDENTITY_FIELDS), true),
  identityRefresh: (v, p) => checkTimestamp(v, p),
  oidcProvider: (v, p) => checkObject(v, p, (o, q) => checkFields(o, q, OIDC_PROVIDER_FIELDS)),
  parent: string,
  oidcLogin: (v, p) => checkObject(v, p, (o, q) => checkFields(o, q, OIDC_LOGIN_FIELDS), true),
};

/** Validates `spec`; an absent spec is fine (every field is optional). */
export function validateSpec(spec: unknown): FieldError[] {
  // The whole spec holds spec.key, so a spec of the wrong type is not echoed.
  return checkObject(spec, "spec", (obj, path) => checkFields(obj, path, SPEC_FIELDS), true);
}

const SUPPORTED_TYPES = ACCESS_KEY_TYPES.filter((t) => t !== "");

/** AccessKeyType: "" (none) or one of the values in docs/reference.md#access-key-types. */
function checkType(value: unknown, path: string): FieldError[] {
  if (isAbsent(value)) return [];
  if (typeof value !== "string") return [wrongType(path, value, "string")];
  return (ACCESS_KEY_TYPES as readonly string[]).includes(value)
    ? []
    : [notSupported(path, value, SUPPORTED_TYPES)];
}

/** ttl is an int64 of seconds; JSON numbers above 2^53-1 lose precision in JavaScript. */
function checkTtl(value: unknown, path: string): FieldError[] {
  if (isAbsent(value)) return [];
  if (typeof value !== "number" || !Number.isInteger(value)) {
    return [wrongType(path, value, "integer")];
  }
  if (value < 0) return [invalid(path, value, "must be greater than or equal to 0")];
  if (!Number.isSafeInteger(value)) {
    return [
      invalid(
        path,
        value,
        `must be less than or equal to ${Number.MAX_SAFE_INTEGER}; larger numbers lose precision`,
      ),
    ];
  }
  return [];
}

// metav1.Time unmarshals with Go's time.Parse(time.RFC3339, …): upper-case T and Z, an optional
// fraction of a second, and an offset of ±hh:mm.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

function checkTimestamp(value: unknown, path: string): FieldError[] {
  if (isAbsent(value)) return [];
  if (typeof value !== "string") return [wrongType(path, value, "string")];
  if (isRfc3339(value)) return [];
  return [invalid(path, value, `must be an RFC 3339 date-time such as "2025-01-01T00:00:00Z"`)];
}

export function isRfc3339(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = m
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth(year!, month!) &&
    hour! < 24 &&
    minute! < 60 &&
    second! < 60 &&
    offsetHour! < 24 &&
    offsetMinute! < 60
  );
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

// Go []byte fields are base64 (standard alphabet, padded) in JSON; encoding/json ignores \r and \n.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Every base64 field holds a secret (connector data, IdP tokens), so its value is never shown. */
function checkBase64(value: unknown, path: string): FieldError[] {
  if (isAbsent(value)) return [];
  if (typeof value !== "string") return [wrongType(path, value, "string", true)];
  if (BASE64.test(value.replace(/[\r\n]/g, ""))) return [];
  return [invalid(path, OMIT_VALUE, "must be a base64-encoded string")];
}
