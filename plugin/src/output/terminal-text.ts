// Text from a server on a terminal (docs/decisions.md OAK-30). A key's display name, a label, an
// error message or a warning is written by whoever could write to the API server; raw, it could
// move the cursor, rewrite what is already on the screen, set the window title, or reorder what is
// shown with Unicode's bidirectional controls. Every such character is made visible instead:
//   - ESC as `^[` and CR as `\r`, as kubectl's EscapeTerminal writes them;
//   - BEL, BS, TAB, LF, VT, FF as `\a`, `\b`, `\t`, `\n`, `\v`, `\f`;
//   - the other C0 controls (U+0000–U+001F) and DEL (U+007F) as `\xHH`;
//   - the C1 controls (U+0080–U+009F) and the bidirectional marks, embeddings, overrides and
//     isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) as `\uHHHH`.
// The escapes are for reading, not for parsing back (a `\` is left as it is); -o json and -o yaml
// keep exact values.

/** Every character `escapeTerminal` replaces. */
export const TERMINAL_UNSAFE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Whether `text` holds a character `escapeTerminal` would replace. */
export function hasTerminalUnsafe(text: string): boolean {
  TERMINAL_UNSAFE.lastIndex = 0;
  const found = TERMINAL_UNSAFE.test(text);
  TERMINAL_UNSAFE.lastIndex = 0;
  return found;
}

const NAMED: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
  "\x1b": "^[",
};

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const cp = c.charCodeAt(0);
  const hex = cp.toString(16);
  return cp <= 0x7f ? `\\x${hex.padStart(2, "0")}` : `\\u${hex.padStart(4, "0")}`;
}

/** One string of server text, made safe to print: no control or bidirectional character is left. */
export function escapeTerminal(text: string): string {
  return text.replace(TERMINAL_UNSAFE, escapeOne);
}

/**
 * Text the plugin has put together (a table, help, an error line), made safe to print: line
 * breaks and tabs stay, as the format needs them; every other character of TERMINAL_UNSAFE is
 * escaped. Server text inside it must have been escaped whole with escapeTerminal already, or its
 * own line breaks would still start lines.
 */
export function terminalLines(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => (c === "\n" || c === "\t" ? c : escapeOne(c)));
}

/**
 * A JSON text with DEL, the C1 controls and the bidirectional characters written as `\uHHHH`:
 * JSON allows them raw only inside strings, where the escape means the same character, so the
 * document decodes to the same value. (The C0 controls are escaped by every JSON encoder.)
 */
export function escapeJsonText(json: string): string {
  return json.replace(TERMINAL_UNSAFE, (c) =>
    c.charCodeAt(0) < 0x20 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
