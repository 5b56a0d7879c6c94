// Go's strconv.Quote (fmt's %q), so messages quote values exactly as kube-apiserver and kubectl do:
// the short escapes, \x for other ASCII controls, \u / \U for anything else Go does not print.

const GO_ESCAPES: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  '"': '\\"',
  "\\": "\\\\",
};
/** What Go's strconv.IsPrint accepts: letters, marks, numbers, punctuation, symbols and space. */
export const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function goEscape(ch: string): string {
  const escaped = Object.hasOwn(GO_ESCAPES, ch) ? GO_ESCAPES[ch] : undefined;
  if (escaped) return escaped;
  if (GO_PRINTABLE.test(ch)) return ch;
  const cp = ch.codePointAt(0)!;
  if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, "0")}`;
  return cp < 0x10000
    ? `\\u${cp.toString(16).padStart(4, "0")}`
    : `\\U${cp.toString(16).padStart(8, "0")}`;
}

/** Go's %q (strconv.Quote). */
export function goQuote(s: string): string {
  return `"${Array.from(s, goEscape).join("")}"`;
}
