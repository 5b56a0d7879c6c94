// The `kubectl accesskey list` table. Columns (the issue pins them): NAME, DISPLAY NAME, OWNER,
// TYPE, SCOPE, STATUS, EXPIRES, LAST ACTIVITY, AGE; -o wide adds TTL, EXPIRES AT, GROUPS and
// DESCRIPTION after AGE (kubectl puts wide columns last) and lists the whole scope.
//   OWNER          User/<name>, Team/<name> or Subject/<name> (spec.user, spec.team, spec.subject)
//   SCOPE          project:P, space:P/S, vcluster:P/V, cluster:C, role:R, plus "rules" and
//                  "loft-cli" for the deprecated fields; <none> when the key is not narrowed.
//                  Without -o wide, at most 3 entries and "+N more".
//   EXPIRES        "in 29d", "3d ago", or <never> without a TTL
//   LAST ACTIVITY  status.lastActivity as a kubectl age ("5m"), or <never>
//   TTL            spec.ttl as a duration ("30d"), "+idle" when it counts from the last activity

import { ownPath } from "../../../webhook/src/shared/own-path.js";
import { parseRfc3339 } from "../../../webhook/src/shared/rfc3339.js";
import { cell } from "./cells.js";
import { isJsonObject } from "./go-values.js";
import { humanDuration } from "./human-duration.js";
import { shownStatus } from "./key-status.js";
import type { FieldTree } from "./mask.js";

export const NEVER = "<never>";
const SCOPE_ENTRIES_SHOWN = 3;

const HEADERS = [
  "NAME",
  "DISPLAY NAME",
  "OWNER",
  "TYPE",
  "SCOPE",
  "STATUS",
  "EXPIRES",
  "LAST ACTIVITY",
  "AGE",
];
const WIDE_HEADERS = ["TTL", "EXPIRES AT", "GROUPS", "DESCRIPTION"];

export function tableHeaders(wide: boolean): string[] {
  return wide ? [...HEADERS, ...WIDE_HEADERS] : HEADERS;
}

const str = (object: unknown, ...path: string[]): string | undefined => {
  const v = ownPath(object, path);
  return typeof v === "string" ? v : undefined;
};

function owner(object: unknown): string | undefined {
  const user = str(object, "spec", "user");
  if (user) return `User/${user}`;
  const team = str(object, "spec", "team");
  if (team) return `Team/${team}`;
  const subject = str(object, "spec", "subject");
  return subject ? `Subject/${subject}` : undefined;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const field = (v: unknown, key: string): string => {
  const x = isJsonObject(v) ? v[key] : undefined;
  return typeof x === "string" ? x : "?";
};

/** The scope as short entries, in the order of the product document's fields. */
export function scopeEntries(object: unknown): string[] {
  const scope = ownPath(object, ["spec", "scope"]);
  const entries: string[] = [];
  for (const r of list(ownPath(scope, ["roles"]))) entries.push(`role:${field(r, "role")}`);
  for (const p of list(ownPath(scope, ["projects"])))
    entries.push(`project:${field(p, "project")}`);
  for (const s of list(ownPath(scope, ["spaces"]))) {
    entries.push(`space:${field(s, "project")}/${field(s, "space")}`);
  }
  for (const v of list(ownPath(scope, ["virtualClusters"]))) {
    entries.push(`vcluster:${field(v, "project")}/${field(v, "virtualCluster")}`);
  }
  for (const c of list(ownPath(scope, ["clusters"])))
    entries.push(`cluster:${field(c, "cluster")}`);
  const rules = [...list(ownPath(scope, ["rules"])), ...list(ownPath(object, ["spec", "rules"]))];
  if (rules.length) entries.push(`rules:${rules.length}`);
  if (
    ownPath(scope, ["allowLoftCli"]) === true ||
    ownPath(object, ["spec", "allowLoftCli"]) === true
  ) {
    entries.push("loft-cli");
  }
  return entries;
}

function scopeCell(object: unknown, wide: boolean): string {
  const entries = scopeEntries(object);
  if (wide || entries.length <= SCOPE_ENTRIES_SHOWN) return cell(entries.join(","));
  const shown = entries.slice(0, SCOPE_ENTRIES_SHOWN).join(",");
  return cell(`${shown},+${entries.length - SCOPE_ENTRIES_SHOWN} more`);
}

/** kubectl's AGE: the time since, or <unknown> without a valid time. */
function age(ts: string | undefined, now: number): string {
  const at = ts === undefined ? null : parseRfc3339(ts);
  return at === null ? "<unknown>" : humanDuration(now - at);
}

function expiresCell(expiresAt: number | undefined, now: number): string {
  if (expiresAt === undefined) return NEVER;
  return expiresAt > now
    ? `in ${humanDuration(expiresAt - now)}`
    : `${humanDuration(now - expiresAt)} ago`;
}

function lastActivity(object: unknown, now: number): string {
  const ts = str(object, "status", "lastActivity");
  return ts ? age(ts, now) : NEVER;
}

function ttlCell(object: unknown): string {
  const ttl = ownPath(object, ["spec", "ttl"]);
  if (typeof ttl !== "number" || !(ttl > 0)) return NEVER;
  const idle = ownPath(object, ["spec", "ttlAfterLastActivity"]) === true ? "+idle" : "";
  return `${exactDuration(ttl)}${idle}`;
}

const UNITS: readonly [string, number][] = [
  ["w", 604800],
  ["d", 86400],
  ["h", 3600],
  ["m", 60],
];

/** Seconds in the largest unit that divides them (`2w`, `30d`, `90m`, `45s`): what --ttl takes. */
export function exactDuration(seconds: number): string {
  if (!Number.isSafeInteger(seconds)) return `${seconds}s`;
  for (const [unit, size] of UNITS) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/** RFC 3339 in UTC with second precision, as Kubernetes writes times; <invalid> out of range. */
export function rfc3339(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() > 9999) return "<invalid>";
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function groupsCell(object: unknown): string {
  const groups = list(ownPath(object, ["spec", "groups"])).filter((g) => typeof g === "string");
  return cell(groups.join(","));
}

/**
 * Every field tableRow reads from `shown`: the printer masks only these (mask.ts maskSecrets'
 * `fields`). A field read but not listed here would print as missing, never unmasked.
 */
export const TABLE_FIELDS: FieldTree = {
  metadata: { name: true, creationTimestamp: true },
  spec: {
    displayName: true,
    user: true,
    team: true,
    subject: true,
    type: true,
    scope: true,
    rules: true,
    allowLoftCli: true,
    ttl: true,
    ttlAfterLastActivity: true,
    groups: true,
    description: true,
  },
  status: { lastActivity: true },
};

/**
 * One row of the list table. STATUS is read from `stored` (a short plain key is Weak); every cell
 * with text from the object is read from `shown`, the object with its secrets masked (mask.ts).
 * No cell shows spec.key.
 */
export function tableRow(
  stored: unknown,
  wide: boolean,
  now: number,
  shown: unknown = stored,
): string[] {
  const { status, expiresAt } = shownStatus(stored, now);
  const object = shown;
  const row = [
    cell(str(object, "metadata", "name")),
    cell(str(object, "spec", "displayName")),
    cell(owner(object)),
    cell(str(object, "spec", "type")),
    scopeCell(object, wide),
    status,
    expiresCell(expiresAt, now),
    lastActivity(object, now),
    age(str(object, "metadata", "creationTimestamp"), now),
  ];
  if (!wide) return row;
  const at = expiresAt === undefined ? NEVER : rfc3339(expiresAt);
  return [
    ...row,
    ttlCell(object),
    at,
    groupsCell(object),
    cell(str(object, "spec", "description")),
  ];
}
