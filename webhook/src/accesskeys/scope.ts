// spec.scope: what a key may reach. Scope only narrows the owner's permissions, so the checks here
// are about shape: every entry names its target, and `*` ("selects all …") is the only wildcard.

import { invalid, required, type FieldError } from "../shared/field-errors.js";
import {
  checkBoolean,
  checkFields,
  checkObject,
  checkObjectList,
  checkStringList,
  isAbsent,
  isObject,
  own,
  wrongType,
  type FieldCheck,
  type JsonObject,
} from "./json-fields.js";
import { validateRules } from "./policy-rules.js";

/** Role names of the Loft API (Jan 2025 and v4.11 together); others only get a warning. */
export const KNOWN_ROLES = [
  "agent",
  "vcluster",
  "network-peer",
  "loft-cli",
  "runner",
  "workspace",
  "metrics-writer",
  "metrics-reader",
] as const;

const WILDCARD_DETAIL = `"*" is the only wildcard and must be the whole value; patterns such as "dev-*" are not supported`;

/** Each target list and the names its entries must carry. */
const TARGETS: Record<string, readonly string[]> = {
  projects: ["project"],
  spaces: ["project", "space"],
  virtualClusters: ["project", "virtualCluster"],
  clusters: ["cluster"],
};

const ROLE_FIELDS: Record<string, FieldCheck> = {
  role: (v, p) => checkRequiredString(v, p),
  projects: (v, p) => checkStringList(v, p, checkWildcard),
  virtualClusters: (v, p) => checkStringList(v, p, checkWildcard),
};

const SCOPE_FIELDS: Record<string, FieldCheck> = {
  roles: (v, p) => checkObjectList(v, p, (role, q) => checkFields(role, q, ROLE_FIELDS)),
  ...Object.fromEntries(
    Object.entries(TARGETS).map(([list, names]): [string, FieldCheck] => [
      list,
      (v, p) => checkObjectList(v, p, (entry, q) => checkTargetNames(entry, q, names)),
    ]),
  ),
  rules: validateRules,
  allowLoftCli: checkBoolean,
};

/** Validates an AccessKeyScope found at `path` (normally `spec.scope`). */
export function validateScope(scope: unknown, path: string): FieldError[] {
  return checkObject(scope, path, (obj, p) => checkFields(obj, p, SCOPE_FIELDS));
}

function checkTargetNames(entry: JsonObject, path: string, names: readonly string[]): FieldError[] {
  return names.flatMap((name) => {
    const value = own(entry, name);
    const namePath = `${path}.${name}`;
    const errors = checkRequiredString(value, namePath);
    return errors.length > 0 || typeof value !== "string" ? errors : checkWildcard(value, namePath);
  });
}

function checkRequiredString(value: unknown, path: string): FieldError[] {
  if (isAbsent(value) || value === "") return [required(path)];
  return typeof value === "string" ? [] : [wrongType(path, value, "string")];
}

function checkWildcard(value: string, path: string): FieldError[] {
  return value === "*" || !value.includes("*") ? [] : [invalid(path, value, WILDCARD_DETAIL)];
}

/** Warnings (not errors) for role names we do not know; the platform may define more. */
export function scopeWarnings(scope: unknown, path: string): string[] {
  const roles = isObject(scope) ? own(scope, "roles") : undefined;
  if (!Array.isArray(roles)) return [];
  return (roles as unknown[]).flatMap((entry, i) => {
    const role = isObject(entry) ? own(entry, "role") : undefined;
    if (typeof role !== "string" || role === "" || isKnownRole(role)) return [];
    return [`${path}.roles[${i}].role: unknown role ${shortQuote(role)}; ${KNOWN_ROLES_HINT}`];
  });
}

// The full list would push the warning past kube's advice of about 120 characters.
const KNOWN_ROLES_HINT = "built-in roles include vcluster, loft-cli, agent";

function isKnownRole(role: string): boolean {
  return (KNOWN_ROLES as readonly string[]).includes(role);
}

/** Warnings should stay short (kube truncates long ones), so long names are cut. */
function shortQuote(s: string): string {
  return JSON.stringify(s.length > 24 ? `${s.slice(0, 24)}...` : s);
}
