// kubectl's -o yaml: sigs.k8s.io/yaml turns the JSON of the object into YAML with go-yaml v2
// (libyaml's emitter). This writes decoded JSON the same way, byte for byte in the cases we test
// against kubectl:
//   - mapping keys in go-yaml's order (numbers inside keys compare as numbers, non-letters before
//     letters); block style; sequences inside mappings not indented; `{}` and `[]` when empty;
//   - a string is plain unless it would read back as something else under YAML 1.1 (`"123"`,
//     `"yes"`, `"n"`, `"2021-01-01"`, `""`), which is double-quoted, or plain is not allowed
//     (leading `*`, `: `, ` #`, edge spaces…), which is single-quoted, or it has characters
//     libyaml will not print raw (tab, control, astral), which is double-quoted with escapes;
//     so are the bidirectional controls, which libyaml prints raw (our one difference);
//     multi-line strings are literal blocks (`|`, `|-`, `|+`, with an indentation indicator when
//     they start with a space);
//   - long plain and quoted strings fold at the first space past column 80, as libyaml does.
// The yaml npm package is a fine YAML library, but it chooses quotes and folds lines its own way.

import { goFloatV, isJsonObject, type JsonObject } from "./go-values.js";

const BEST_WIDTH = 80;
const INDENT = 2;

/** go-yaml v2's keyList.Less for string keys. */
export function goYamlKeyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  const isLetter = (c: string) => /^\p{L}$/u.test(c);
  const isDigit = (c: string | undefined) => c !== undefined && /^\p{Nd}$/u.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]!);
    const bl = isLetter(br[i]!);
    if (al && bl) return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ar[i] === "0" || br[i] === "0") {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== "0") {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10 + (ar[ai]!.codePointAt(0)! - 48);
    let bi = i;
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10 + (br[bi]!.codePointAt(0)! - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
  }
  return ar.length < br.length;
}

const goYamlKeyOrder = (a: string, b: string) =>
  goYamlKeyLess(a, b) ? -1 : goYamlKeyLess(b, a) ? 1 : 0;

const RESOLVE_MAP = new Set([
  ...["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"],
  ...["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"],
  ...["", "~", "null", "Null", "NULL"],
  ...[".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"],
  ...["-.inf", "-.Inf", "-.INF"],
]);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)$/;
const TIMESTAMP =
  /^\d{4}-\d{1,2}-\d{1,2}(?:[Tt]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})|\s\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?)?$/;
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** Whether go-yaml v2 would read the plain scalar `s` back as something other than a string. */
function resolvesToNonString(s: string): boolean {
  if (RESOLVE_MAP.has(s)) return true;
  const first = s[0] ?? "";
  if (first === ".") return /^\.(\d+([eE][-+]?\d+)?)$/.test(s);
  if (!/[-+0-9]/.test(first)) return false;
  if (TIMESTAMP.test(s)) return true;
  const plain = s.replaceAll("_", "");
  return GO_INT.test(plain) || YAML_FLOAT.test(plain) || /^-?0b[01]+$/.test(plain);
}

/**
 * The Unicode bidirectional marks, embeddings, overrides and isolates. libyaml writes them raw;
 * we escape them in a double-quoted scalar, so a terminal cannot reorder what -o yaml shows
 * (docs/decisions.md OAK-30). The value read back is the same.
 */
const isBidiControl = (cp: number) =>
  cp === 0x061c ||
  cp === 0x200e ||
  cp === 0x200f ||
  (cp >= 0x202a && cp <= 0x202e) ||
  (cp >= 0x2066 && cp <= 0x2069);

/**
 * libyaml's IS_PRINTABLE (with unicode output on, as go-yaml sets it), which already leaves out
 * the C0 controls but LF, DEL and the C1 controls; and not the bidirectional controls.
 */
function isPrintable(cp: number): boolean {
  if (isBidiControl(cp)) return false;
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}
const isBreak = (c: string | undefined) =>
  c === "\r" || c === "\n" || c === "\u0085" || c === "\u2028" || c === "\u2029";
const isBlankZ = (c: string | undefined) =>
  c === undefined || c === " " || c === "\t" || isBreak(c);

interface Analysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** Whether character `i` makes plain style impossible in block context (libyaml's indicators). */
function isBlockIndicator(
  cs: readonly string[],
  i: number,
  precededByWhitespace: boolean,
): boolean {
  const c = cs[i]!;
  const followedByWhitespace = isBlankZ(cs[i + 1]);
  if (i === 0) {
    if ("#,[]{}&*!|>'\"%@`".includes(c)) return true;
    return (c === "?" || c === ":" || c === "-") && followedByWhitespace;
  }
  return (c === ":" && followedByWhitespace) || (c === "#" && precededByWhitespace);
}

interface Whitespace {
  leadingSpace: boolean;
  leadingBreak: boolean;
  trailingSpace: boolean;
  trailingBreak: boolean;
  breakSpace: boolean;
  spaceBreak: boolean;
}

/** libyaml's tracking of spaces and line breaks at the edges and next to each other. */
function whitespace(cs: readonly string[]): Whitespace {
  const w: Whitespace = {
    leadingSpace: false,
    leadingBreak: false,
    trailingSpace: false,
    trailingBreak: false,
    breakSpace: false,
    spaceBreak: false,
  };
  let previousSpace = false;
  let previousBreak = false;
  cs.forEach((c, i) => {
    const first = i === 0;
    const last = i === cs.length - 1;
    if (c === " ") {
      w.leadingSpace ||= first;
      w.trailingSpace ||= last;
      w.breakSpace ||= previousBreak;
      [previousSpace, previousBreak] = [true, false];
    } else if (isBreak(c)) {
      w.leadingBreak ||= first;
      w.trailingBreak ||= last;
      w.spaceBreak ||= previousSpace;
      [previousSpace, previousBreak] = [false, true];
    } else {
      [previousSpace, previousBreak] = [false, false];
    }
  });
  return w;
}

/** libyaml's yaml_emitter_analyze_scalar, for block context. */
function analyze(s: string): Analysis {
  const cs = [...s];
  if (cs.length === 0) {
    return {
      multiline: false,
      blockPlainAllowed: true,
      singleQuotedAllowed: true,
      blockAllowed: false,
    };
  }
  let blockIndicators = s.startsWith("---") || s.startsWith("...");
  let precededByWhitespace = true;
  cs.forEach((c, i) => {
    blockIndicators ||= isBlockIndicator(cs, i, precededByWhitespace);
    precededByWhitespace = isBlankZ(c);
  });
  const special = cs.some((c) => !isPrintable(c.codePointAt(0)!));
  const lineBreaks = cs.some(isBreak);
  const w = whitespace(cs);
  let blockPlainAllowed = !(w.leadingSpace || w.leadingBreak || w.trailingSpace || w.trailingBreak);
  let singleQuotedAllowed = true;
  let blockAllowed = !w.trailingSpace;
  if (w.breakSpace) blockPlainAllowed = singleQuotedAllowed = false;
  if (w.spaceBreak || special) blockPlainAllowed = singleQuotedAllowed = blockAllowed = false;
  if (lineBreaks || blockIndicators) blockPlainAllowed = false;
  return { multiline: lineBreaks, blockPlainAllowed, singleQuotedAllowed, blockAllowed };
}

type Style = "plain" | "single" | "double" | "literal";

/** go-yaml's stringv choice, then libyaml's yaml_emitter_select_scalar_style. */
function selectStyle(s: string, simpleKey: boolean): Style {
  const a = analyze(s);
  let style: Style;
  if (s.includes("\n")) style = "literal";
  else if (!resolvesToNonString(s) && !BASE60.test(s)) style = "plain";
  else style = "double";
  if (style === "plain") {
    if (!a.blockPlainAllowed || (s.length === 0 && simpleKey)) style = "single";
  }
  if (style === "single" && !a.singleQuotedAllowed) style = "double";
  if (style === "literal" && (!a.blockAllowed || simpleKey)) style = "double";
  return style;
}

/** Writes text and tracks the column, as libyaml's emitter does. */
class Writer {
  out: string[] = [];
  column = 0;
  /** A literal block was just written, and it ends its own line. */
  literalEnded = false;

  put(text: string): void {
    this.out.push(text);
    for (const c of text) this.column = c === "\n" ? 0 : this.column + 1;
  }

  indent(n: number): void {
    this.out.push("\n", " ".repeat(n));
    this.column = n;
  }
}

const ESCAPES: Record<string, string> = {
  "\0": "0",
  "\x07": "a",
  "\b": "b",
  "\t": "t",
  "\n": "n",
  "\v": "v",
  "\f": "f",
  "\r": "r",
  "\x1b": "e",
  '"': '"',
  "\\": "\\",
  "\u0085": "N",
  "\u00a0": "_",
  "\u2028": "L",
  "\u2029": "P",
};

function escapeChar(c: string): string {
  const named = ESCAPES[c];
  if (named !== undefined) return `\\${named}`;
  const cp = c.codePointAt(0)!;
  const hex = cp.toString(16).toUpperCase();
  if (cp <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (cp <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

function writePlain(w: Writer, s: string, indent: number, allowBreaks: boolean): void {
  const cs = [...s];
  let spaces = false;
  cs.forEach((c, i) => {
    if (c === " ") {
      if (allowBreaks && !spaces && w.column > BEST_WIDTH && cs[i + 1] !== " ") w.indent(indent);
      else w.put(c);
      spaces = true;
    } else {
      w.put(c);
      spaces = false;
    }
  });
}

function writeSingle(w: Writer, s: string, indent: number, allowBreaks: boolean): void {
  const cs = [...s];
  let spaces = false;
  let breaks = false;
  w.put("'");
  cs.forEach((c, i) => {
    if (c === " ") {
      const fold =
        allowBreaks &&
        !spaces &&
        w.column > BEST_WIDTH &&
        i !== 0 &&
        i !== cs.length - 1 &&
        cs[i + 1] !== " ";
      if (fold) w.indent(indent);
      else w.put(c);
      spaces = true;
    } else if (isBreak(c)) {
      // Only U+2028 and U+2029 get here (other breaks are not single-quoted): written raw.
      w.out.push(c);
      w.column = 0;
      breaks = true;
    } else {
      if (breaks) {
        w.out.push(" ".repeat(indent));
        w.column = indent;
      }
      w.put(c === "'" ? "''" : c);
      spaces = false;
      breaks = false;
    }
  });
  w.put("'");
}

function writeDouble(w: Writer, s: string, indent: number, allowBreaks: boolean): void {
  const cs = [...s];
  let spaces = false;
  w.put('"');
  cs.forEach((c, i) => {
    const cp = c.codePointAt(0)!;
    if (!isPrintable(cp) || cp === 0xfeff || isBreak(c) || c === '"' || c === "\\") {
      w.put(escapeChar(c));
      spaces = false;
    } else if (c === " ") {
      if (allowBreaks && !spaces && w.column > BEST_WIDTH && i !== 0 && i !== cs.length - 1) {
        w.indent(indent);
        if (cs[i + 1] === " ") w.put("\\");
      } else {
        w.put(c);
      }
      spaces = true;
    } else {
      w.put(c);
      spaces = false;
    }
  });
  w.put('"');
}

function writeLiteral(w: Writer, s: string, indent: number): void {
  const cs = [...s];
  const hint = cs[0] === " " || isBreak(cs[0]) ? String(INDENT) : "";
  let chomp = "";
  if (!isBreak(cs.at(-1))) chomp = "-";
  else if (cs.length === 1 || isBreak(cs.at(-2))) chomp = "+";
  w.put(`|${hint}${chomp}`);
  w.out.push("\n");
  w.column = 0;
  let breaks = true;
  for (const c of cs) {
    if (isBreak(c)) {
      // "\n" ends the line; U+2028 and U+2029 are written as they are.
      w.out.push(c);
      w.column = 0;
      breaks = true;
    } else {
      if (breaks) {
        w.out.push(" ".repeat(indent));
        w.column = indent;
        breaks = false;
      }
      w.put(c);
    }
  }
  if (!breaks) w.out.push("\n");
  w.column = 0;
  w.literalEnded = true;
}

/** A string scalar after the current position; `indent` is where continuation lines start. */
function writeString(w: Writer, s: string, indent: number, simpleKey: boolean): void {
  const style = selectStyle(s, simpleKey);
  if (style === "plain") writePlain(w, s, indent, !simpleKey);
  else if (style === "single") writeSingle(w, s, indent, !simpleKey);
  else if (style === "double") writeDouble(w, s, indent, !simpleKey);
  else {
    writeLiteral(w, s, indent);
  }
}

function scalarText(v: unknown): string | undefined {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? String(v) : yamlFloat(v);
  }
  return undefined;
}

function yamlFloat(f: number): string {
  if (Number.isNaN(f)) return ".nan";
  if (!Number.isFinite(f)) return f > 0 ? ".inf" : "-.inf";
  return goFloatV(f);
}

const isEmptyContainer = (v: unknown) =>
  (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);

/**
 * Writes a value that follows an indicator (`key:` or `- `) on the current line. Scalars and
 * empty containers go on the same line; a non-empty map or list starts below.
 */
function writeValue(w: Writer, v: unknown, indent: number, inSequence: boolean): void {
  if (Array.isArray(v) && v.length > 0) {
    if (inSequence) {
      w.put(" ");
      writeSequence(w, v, indent, true);
    } else {
      endLine(w);
      writeSequence(w, v, indent - INDENT, false);
    }
    return;
  }
  if (isJsonObject(v) && Object.keys(v).length > 0) {
    if (inSequence) {
      w.put(" ");
      writeMapping(w, v, indent, true);
    } else {
      endLine(w);
      writeMapping(w, v, indent, false);
    }
    return;
  }
  w.put(" ");
  if (isEmptyContainer(v)) w.put(Array.isArray(v) ? "[]" : "{}");
  else if (typeof v === "string") writeString(w, v, indent, false);
  else w.put(scalarText(v) ?? "null");
  endLine(w);
}

function endLine(w: Writer): void {
  if (w.literalEnded) {
    w.literalEnded = false;
    return;
  }
  w.out.push("\n");
  w.column = 0;
}

/** A block mapping at `indent`; `inline`: its first key continues the current line. */
function writeMapping(w: Writer, m: JsonObject, indent: number, inline: boolean): void {
  const keys = Object.keys(m).sort(goYamlKeyOrder);
  keys.forEach((key, i) => {
    if (!(inline && i === 0)) {
      w.out.push(" ".repeat(indent));
      w.column = indent;
    }
    if (Buffer.byteLength(key) > 128 || key.includes("\n")) {
      // libyaml writes keys that cannot be simple (over 128 bytes, or multi-line) as `? key`.
      w.put("? ");
      writeString(w, key, indent + INDENT, false);
      endLine(w);
      w.out.push(" ".repeat(indent));
      w.column = indent;
      // After an explicit key, a map or list starts on the ":" line, as in a sequence item.
      w.put(":");
      writeValue(w, m[key], indent + INDENT, true);
      return;
    }
    writeString(w, key, indent + INDENT, true);
    w.put(":");
    writeValue(w, m[key], indent + INDENT, false);
  });
}

/** A block sequence whose `- ` sits at `indent`; `inline`: its first item continues the line. */
function writeSequence(w: Writer, s: unknown[], indent: number, inline: boolean): void {
  s.forEach((item, i) => {
    if (!(inline && i === 0)) {
      w.out.push(" ".repeat(indent));
      w.column = indent;
    }
    w.put("-");
    writeValue(w, item, indent + INDENT, true);
  });
}

/**
 * sigs.k8s.io/yaml reads the JSON it made back as YAML, where a raw U+0085 (NEL, which Go's JSON
 * encoder leaves unescaped) is a line break inside a double-quoted scalar and folds: with the
 * spaces around it, one becomes a space and n become n-1 newlines.
 */
function foldNel(s: string): string {
  return s.replace(/ *(?:\u0085 *)+/g, (run) => {
    const n = run.split("\u0085").length - 1;
    return n === 1 ? " " : "\n".repeat(n - 1);
  });
}

function foldNels(v: unknown): unknown {
  if (typeof v === "string") return v.includes("\u0085") ? foldNel(v) : v;
  if (Array.isArray(v)) return v.map(foldNels);
  if (isJsonObject(v)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [foldNel(k), foldNels(x)]));
  }
  return v;
}

const hasNel = (v: unknown): boolean => JSON.stringify(v)?.includes("\u0085") ?? false;

/** sigs.k8s.io/yaml's Marshal of a decoded JSON document. */
export function goYaml(input: unknown): string {
  const value = hasNel(input) ? foldNels(input) : input;
  const w = new Writer();
  if (isJsonObject(value) && Object.keys(value).length > 0) writeMapping(w, value, 0, false);
  else if (Array.isArray(value) && value.length > 0) writeSequence(w, value, 0, false);
  else {
    if (isEmptyContainer(value)) w.put(Array.isArray(value) ? "[]" : "{}");
    else if (typeof value === "string") writeString(w, value, INDENT, false);
    else w.put(scalarText(value) ?? "null");
    endLine(w);
  }
  return w.out.join("");
}
