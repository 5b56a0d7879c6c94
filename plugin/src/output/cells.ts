// Making one table cell of a string, as kubectl's table printer does: cut at the first line break
// (and add "..."). Tabs and vertical tabs would split a cell in the tab writer, so they become
// spaces (kubectl leaves them). What is left is escaped whole (docs/decisions.md OAK-30): no control
// or bidirectional character reaches the terminal, where kubectl escapes only ESC and CR.

import { escapeTerminal } from "./terminal-text.js";

export const NONE = "<none>";

export function cell(value: string | undefined): string {
  if (value === undefined || value === "") return NONE;
  return oneLine(value);
}

/**
 * What oneLine changes: a line break (the C0 and C1 controls hold all but U+2028 and U+2029) or a
 * character escapeTerminal replaces. Most cells have none, and are printed as they are.
 */
const CHANGED =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/** The first line of `value` (with "..." when there was more), tabs as spaces, escaped. */
export function oneLine(value: string): string {
  if (!CHANGED.test(value)) return value;
  const lineBreak = value.search(/[\n\v\f\r\u0085\u2028\u2029]/);
  const cut = lineBreak >= 0;
  const text = escapeTerminal((cut ? value.slice(0, lineBreak) : value).replace(/\t/g, " "));
  return cut ? `${text}...` : text;
}
