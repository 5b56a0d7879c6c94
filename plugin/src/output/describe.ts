// `kubectl accesskey describe NAME`: kubectl-describe style ("Field:" and a value, aligned by
// describe's tab writer: minwidth 0, padding 2; a line without a value starts a new aligned block).
// It shows the computed status and expiry and never the key: only whether one is set and how it
// is stored.

import { ownPath } from "../../../webhook/src/accesskeys/json-fields.js";
import { exactDuration, NEVER, rfc3339, scopeEntries } from "./access-key-table.js";
import { escapeTerminal, NONE } from "./cells.js";
import { isJsonObject } from "./go-values.js";
import { humanDuration } from "./human-duration.js";
import { keyStatus, ttlBase, ttlSeconds } from "./key-status.js";
import { parseRfc3339 } from "../../../webhook/src/accesskeys/deletion.js";
import { DESCRIBE_SETTINGS, tabwrite } from "./tabwriter.js";

/** One line of text for a value: cut at the first line break (with "..."), escapes neutralised. */
function oneLine(value: string): string {
  const lineBreak = value.search(/[\f\n\r\v]/);
  const text = escapeTerminal(lineBreak >= 0 ? value.slice(0, lineBreak) : value).replace(
    /\t/g,
    " ",
  );
  return lineBreak >= 0 ? `${text}...` : text;
}

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
  if (typeof key !== "string" || key === "") return `Key:\t${NONE}`;
  return `Key:\tset, stored ${key.startsWith("sha256:") ? "hashed" : "in plain form"} (never shown)`;
}

function scopeLines(object: unknown): string[] {
  const entries = scopeEntries(object);
  if (entries.length === 0) return [`Scope:\t${NONE} (the owner's permissions)`];
  return ["Scope:", ...entries.map((e) => `  ${oneLine(e)}`)];
}

/** `kubectl accesskey describe NAME`: kubectl-describe style, computed expiry, never the key. */
export function describeAccessKey(object: unknown, now: number = Date.now()): string {
  const groups = ownPath(object, ["spec", "groups"]);
  const groupList = Array.isArray(groups) ? groups.filter((g) => typeof g === "string") : [];
  const { status } = keyStatus(object, now);
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
    keyLine(object),
    ...scopeLines(object),
  ];
  return tabwrite(`${lines.join("\n")}\n`, DESCRIBE_SETTINGS);
}
