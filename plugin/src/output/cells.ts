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

/** The first line of `value` (with "..." when there was more), tabs as spaces, escaped. */
export function oneLine(value: string): string {
  const lineBreak = value.search(/[\n\v\f\r\u0085\u2028\u2029]/);
  const cut = lineBreak >= 0;
  const text = escapeTerminal((cut ? value.slice(0, lineBreak) : value).replace(/\t/g, " "));
  return cut ? `${text}...` : text;
}
