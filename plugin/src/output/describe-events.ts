// The "Events:" section that ends `kubectl accesskey describe`, as kubectl describe writes it
// (k8s.io/kubectl/pkg/describe DescribeEvents): `Events:  <none>` when there are none; otherwise a
// table of Type, Reason, Age, From and Message, oldest lastTimestamp first. Age is the time since
// the Event was first seen, or `3m (x2 over 5m)` for one seen more than once (since the last time,
// the count, since the first); `<unknown>` for a missing timestamp. From is source.component, else
// reportingComponent. Every cell is server text that anyone allowed to create Events wrote, so it
// is escaped whole for the terminal (terminal-text.ts): a line break in a message shows as `\n`
// where kubectl would start a new line.

import { ownPath } from "../../../webhook/src/shared/own-path.js";
import { parseRfc3339 } from "../../../webhook/src/shared/rfc3339.js";
import { NONE } from "./cells.js";
import { humanDuration } from "./human-duration.js";
import { escapeTerminal } from "./terminal-text.js";

const text = (event: unknown, ...path: string[]): string => {
  const v = ownPath(event, path);
  return typeof v === "string" ? v : "";
};

/** ms since the epoch, or undefined for a missing (Go: zero) or unreadable timestamp. */
const time = (event: unknown, ...path: string[]): number | undefined => {
  const at = parseRfc3339(text(event, ...path));
  return at === null ? undefined : at;
};

/** kubectl's translateTimestampSince: `<unknown>` for a zero time. */
const since = (at: number | undefined, now: number): string =>
  at === undefined ? "<unknown>" : humanDuration(now - at);

const count = (value: unknown): number =>
  typeof value === "number" && Number.isInteger(value) ? value : 0;

function age(event: unknown, now: number): string {
  const eventTime = time(event, "eventTime");
  const first = since(eventTime ?? time(event, "firstTimestamp"), now);
  const series = ownPath(event, ["series"]);
  if (series !== undefined && series !== null) {
    const last = since(time(event, "series", "lastObservedTime"), now);
    return `${last} (x${count(ownPath(event, ["series", "count"]))} over ${first})`;
  }
  const times = count(ownPath(event, ["count"]));
  if (times > 1) return `${since(time(event, "lastTimestamp"), now)} (x${times} over ${first})`;
  return first;
}

function row(event: unknown, now: number): string {
  const from = text(event, "source", "component") || text(event, "reportingComponent");
  let message = text(event, "message").trim();
  const fieldPath = text(event, "involvedObject", "fieldPath");
  if (fieldPath) message = `${fieldPath}: ${message}`;
  const cells = [text(event, "type"), text(event, "reason"), age(event, now), from, message];
  return `  ${cells.map(escapeTerminal).join("\t")}`;
}

/**
 * The section's lines, for describe's tab writer. kubectl sorts with sort.Sort on lastTimestamp,
 * a missing one (Go's zero time) first; a stable sort gives the order it gives for the few Events a
 * key has (Go sorts up to 12 by insertion, which is stable).
 */
export function eventLines(events: readonly unknown[], now: number): string[] {
  if (events.length === 0) return [`Events:\t${NONE}`];
  const last = (e: unknown) => time(e, "lastTimestamp") ?? -Infinity;
  const sorted = [...events].sort((a, b) => last(a) - last(b) || 0);
  return [
    "Events:",
    "  Type\tReason\tAge\tFrom\tMessage",
    "  ----\t------\t----\t----\t-------",
    ...sorted.map((e) => row(e, now)),
  ];
}
