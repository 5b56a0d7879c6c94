// Making one table cell of a string, as kubectl's table printer does: cut at the first line break
// (and add "..."), and neutralise terminal escapes (ESC as "^[", CR as "\r"). Tabs and vertical
// tabs would split a cell in the tab writer, so they become spaces (kubectl leaves them).

export const NONE = "<none>";

export function cell(value: string | undefined): string {
  if (value === undefined || value === "") return NONE;
  let text = value;
  const lineBreak = text.search(/[\f\n\r]/);
  const cut = lineBreak >= 0;
  if (cut) text = text.slice(0, lineBreak);
  text = escapeTerminal(text).replace(/[\t\v]/g, " ");
  return cut ? `${text}...` : text;
}

/** cli-runtime's EscapeTerminal. */
export function escapeTerminal(s: string): string {
  return s.replaceAll("\x1b", "^[").replaceAll("\r", "\\r");
}
