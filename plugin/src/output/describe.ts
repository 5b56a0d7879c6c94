// `kubectl accesskey describe NAME`: kubectl-describe style ("Field:" and a value, aligned by
// describe's tab writer: minwidth 0, padding 2; a line without a value starts a new aligned block).
// It shows the computed status and expiry and never the key: only whether one is set, how it is
// stored and whether it is weak. Text comes from the object with its secrets masked wherever they
// are (mask.ts), one line of it per value, escaped for the terminal (cells.ts). The key's Events
// end it, as they end kubectl describe (describe-events.ts).

import { ownPath } from "../../../webhook/src/shared/own-path.js";
import { exactDuration, NEVER, rfc3339, scopeEntries } from "./access-key-table.js";
import { NONE, oneLine } from "./cells.js";
import { eventLines } from "./describe-events.js";
import { isJsonObject } from "./go-values.js";
import { humanDuration } from "./human-duration.js";
import {
  keyStatus,
  keyWeakness,
  shownStatus,
  ttlBase,
  ttlSeconds,
  WEAK_KEY_LENGTH,
} from "./key-status.js";
import { maskSecrets } from "./mask.js";
import { parseRfc3339 } from "../../../webhook/src/shared/rfc3339.js";
import { isStoredHash } from "../../../webhook/src/shared/key-hash.js";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  previousKeyLastActivity,
  previousKeyOf,
} from "../../../webhook/src/shared/previous-key.js";
import { DESCRIBE_SETTINGS, tabwrite } from "./tabwriter.js";

const str = (object: unknown, ...path: string[]): string | undefined => {
  const v = ownPath(object, path);
  return typeof v === "string" && v !== "" ? v : undefined;
};

const orNone = (v: string | undefined) => (v === undefined ? NONE : oneLine(v));

function when(ms: number, now: number): string {
  const rel = ms > now ? `in ${humanDuration(ms - now)}` : `${humanDuration(now - ms)} ago`;
  return `${rfc3339(ms)} (${rel})`;
}

/** kubectl's multi-line map: the first entry on the field's line, the others below it. */
function mapLines(title: string, value: unknown): string[] {
  const entries = isJsonObject(value)
    ? Object.keys(value)
        .sort()
        .map((k) => `${oneLine(k)}=${oneLine(String(value[k]))}`)
    : [];
  if (entries.length === 0) return [`${title}:\t${NONE}`];
  return entries.map((e, i) => (i === 0 ? `${title}:\t${e}` : `\t${e}`));
}

function ownerLines(object: unknown): string[] {
  const lines: string[] = [];
  const user = str(object, "spec", "user");
  const team = str(object, "spec", "team");
  const subject = str(object, "spec", "subject");
  if (user) lines.push(`User:\t${oneLine(user)}`);
  if (team) lines.push(`Team:\t${oneLine(team)}`);
  if (subject) lines.push(`Subject:\t${oneLine(subject)}`);
  return lines.length ? lines : [`User:\t${NONE}`];
}

function expiryLines(object: unknown, now: number): string[] {
  const ttl = ttlSeconds(object);
  if (ttl === undefined) return [`TTL:\t${NEVER}`, `Expires:\t${NEVER}`];
  const base = ttlBase(object);
  const from =
    base?.from === "lastActivity"
      ? "counted from the last activity"
      : ownPath(object, ["spec", "ttlAfterLastActivity"]) === true
        ? "counted from the last activity; not used yet, so from creation"
        : "counted from creation";
  const { expiresAt } = keyStatus(object, now);
  return [
    `TTL:\t${exactDuration(ttl)} (${from})`,
    `Expires:\t${expiresAt === undefined ? "<unknown>" : when(expiresAt, now)}`,
  ];
}

function timeLine(title: string, ts: string | undefined, now: number, missing: string): string {
  const at = ts === undefined ? null : parseRfc3339(ts);
  return `${title}:\t${at === null ? missing : when(at, now)}`;
}

function keyLine(object: unknown): string {
  const key = ownPath(object, ["spec", "key"]);
  const weakness = keyWeakness(object);
  const weak =
    weakness === "short"
      ? `; weak: shorter than ${WEAK_KEY_LENGTH} characters, rotate it`
      : weakness === "reported"
        ? `; weak: the server found it shorter than ${WEAK_KEY_LENGTH} characters, rotate it`
        : "";
  if (typeof key !== "string" || key === "") return `Key:\t${NONE}${weak}`;
  return `Key:\tset, stored ${isStoredHash(key) ? "hashed" : "in plain form"} (never shown)${weak}`;
}

/**
 * A rotation's grace window (spec.previousKey), when there is one: its deadline, never the digest,
 * and the previous key's last login in this window (status.previousKey, when it names this window:
 * one of an earlier window is not this key's). Absent from keys never rotated with --grace, so
 * their description is as it always was.
 */
function previousKeyLines(object: unknown, now: number): string[] {
  if (ownPath(object, ["spec", "previousKey"]) === undefined) return [];
  const previous = previousKeyOf(object as OwnedAccessKey);
  if (!previous) return [`Previous Key:\t<invalid> (refused)`];
  const state = now < previous.until ? "still logs in until" : "refused since";
  const last = previousKeyLastActivity(object as OwnedAccessKey);
  const used =
    last === undefined
      ? "not used since the rotation"
      : `last used ${humanDuration(Math.max(0, now - last))} ago`;
  return [`Previous Key:\t${state} ${when(previous.until, now)} (never shown); ${used}`];
}

function scopeLines(object: unknown): string[] {
  const entries = scopeEntries(object);
  if (entries.length === 0) return [`Scope:\t${NONE} (the owner's permissions)`];
  return ["Scope:", ...entries.map((e) => `  ${oneLine(e)}`)];
}

/**
 * `kubectl accesskey describe NAME`: kubectl-describe style, computed expiry, never the key.
 * `generated`: keys this run made, masked like spec.key. `events`: the Events about the key, shown
 * at the end as kubectl shows them; undefined: no Events section (--show-events=false).
 */
export function describeAccessKey(
  stored: unknown,
  now: number = Date.now(),
  generated: readonly string[] = [],
  events?: readonly unknown[],
): string {
  const object = maskSecrets(stored, { generated });
  const groups = ownPath(object, ["spec", "groups"]);
  const groupList = Array.isArray(groups) ? groups.filter((g) => typeof g === "string") : [];
  const { status } = shownStatus(stored, now);
  const lines = [
    `Name:\t${orNone(str(object, "metadata", "name"))}`,
    `Display Name:\t${orNone(str(object, "spec", "displayName"))}`,
    `Description:\t${orNone(str(object, "spec", "description"))}`,
    ...mapLines("Labels", ownPath(object, ["metadata", "labels"])),
    ...mapLines("Annotations", ownPath(object, ["metadata", "annotations"])),
    `API Version:\t${orNone(str(object, "apiVersion"))}`,
    `Type:\t${orNone(str(object, "spec", "type"))}`,
    ...ownerLines(object),
    `Groups:\t${groupList.length ? oneLine(groupList.join(", ")) : NONE}`,
    `Status:\t${status}`,
    `Disabled:\t${ownPath(object, ["spec", "disabled"]) === true}`,
    ...expiryLines(object, now),
    timeLine("Last Activity", str(object, "status", "lastActivity"), now, NEVER),
    timeLine("Created", str(object, "metadata", "creationTimestamp"), now, "<unknown>"),
    keyLine(stored),
    ...previousKeyLines(stored, now),
    ...scopeLines(object),
    ...(events === undefined ? [] : eventLines(events, now)),
  ];
  return tabwrite(`${lines.join("\n")}\n`, DESCRIBE_SETTINGS);
}
