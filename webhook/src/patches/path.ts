// The patch path grammar (docs/reference.md#patch-path-grammar + docs/decisions.md EPS-7). It
// follows vCluster's tokeniser (`pkg/util/patch/path.go`): `.` separates segments, `"` toggles
// quoting anywhere and is never part of a key, dots inside brackets are literal, empty segments
// between dots are ignored. Where vCluster panics at sync time (empty `[]`, nested or stray
// brackets, unclosed quotes or brackets, negative indices) we throw a PathSyntaxError at load time
// instead. Additions: `['k']` is a quoted key (vcluster#3580: users write it and it silently never
// matched), and a bare `*` is a wildcard in every position.

import type { PathSegment } from "./types.js";

export class PathSyntaxError extends Error {
  override readonly name = "PathSyntaxError";
  constructor(
    readonly path: string,
    readonly position: number,
    readonly problem: string,
  ) {
    super(`invalid path ${JSON.stringify(path)}: ${problem} at position ${position}`);
  }
}

/** The raw text of one segment before it is classified as key, index or wildcard. */
interface RawSegment {
  text: string;
  quoted: boolean;
  bracketed: boolean;
  /** Position of the segment's first character in the untrimmed path, for error messages. */
  start: number;
}

interface TokeniserState {
  buffer: string;
  quoted: boolean;
  start: number;
  /** The open quote character, if any. */
  quote: '"' | "'" | null;
  quoteAt: number;
  /** Position of the open `[`, or -1. */
  bracketAt: number;
  /** Set after a single-quoted bracket key closes: only `]` may follow. */
  expectClose: boolean;
  out: RawSegment[];
}

const DIGITS = /^[0-9]+$/;
const NEGATIVE = /^-[0-9]+$/;

/** Parses a patch path into segments. "" and "." are the empty path (the whole object). */
export function parsePath(path: string): PathSegment[] {
  if (typeof path !== "string") throw new PathSyntaxError(String(path), 0, "path is not a string");
  const offset = path.length - path.trimStart().length;
  return tokenise(path, path.trim(), offset).map((raw) => classify(path, raw));
}

function tokenise(original: string, text: string, offset: number): RawSegment[] {
  const st: TokeniserState = {
    buffer: "",
    quoted: false,
    start: offset,
    quote: null,
    quoteAt: -1,
    bracketAt: -1,
    expectClose: false,
    out: [],
  };
  for (let i = 0; i < text.length; i++) step(original, st, text.charAt(i), i + offset);
  if (st.quote !== null) throw new PathSyntaxError(original, st.quoteAt, "unclosed quote");
  if (st.bracketAt >= 0) throw new PathSyntaxError(original, st.bracketAt, "unclosed bracket");
  pushPlain(st, offset + text.length);
  return st.out;
}

function step(original: string, st: TokeniserState, c: string, pos: number): void {
  if (st.quote !== null) {
    if (c === st.quote) {
      st.expectClose = st.quote === "'";
      st.quote = null;
    } else {
      st.buffer += c;
    }
    return;
  }
  if (st.expectClose && c !== "]") {
    throw new PathSyntaxError(original, pos, "expected ] after a single-quoted key");
  }
  if (c === '"' || (c === "'" && st.bracketAt >= 0 && st.buffer === "" && !st.quoted)) {
    st.quote = c;
    st.quoteAt = pos;
    st.quoted = true;
  } else if (c === "." && st.bracketAt < 0) {
    pushPlain(st, pos + 1);
  } else if (c === "[") {
    openBracket(original, st, pos);
  } else if (c === "]") {
    closeBracket(original, st, pos);
  } else {
    st.buffer += c;
  }
}

function openBracket(original: string, st: TokeniserState, pos: number): void {
  if (st.bracketAt >= 0) throw new PathSyntaxError(original, pos, "nested bracket");
  pushPlain(st, pos);
  st.bracketAt = pos;
}

function closeBracket(original: string, st: TokeniserState, pos: number): void {
  if (st.bracketAt < 0) throw new PathSyntaxError(original, pos, "unexpected ]");
  if (st.buffer === "") throw new PathSyntaxError(original, st.bracketAt, "empty brackets");
  st.out.push({ text: st.buffer, quoted: st.quoted, bracketed: true, start: st.bracketAt });
  reset(st, pos + 1);
  st.bracketAt = -1;
}

/** Ends a plain (unbracketed) segment; empty ones are skipped, as in vCluster. */
function pushPlain(st: TokeniserState, next: number): void {
  if (st.buffer !== "") {
    st.out.push({ text: st.buffer, quoted: st.quoted, bracketed: false, start: st.start });
  }
  reset(st, next);
}

function reset(st: TokeniserState, next: number): void {
  st.buffer = "";
  st.quoted = false;
  st.expectClose = false;
  st.start = next;
}

function classify(original: string, raw: RawSegment): PathSegment {
  const { text, quoted, bracketed } = raw;
  // A quoted `"*"` is the literal key `*`: the only way to name such a key.
  if (text === "*" && !quoted) return { kind: "wildcard", bracketed };
  if (DIGITS.test(text)) {
    const index = Number(text);
    // Longer than any array can be: it can still name an object key.
    if (!Number.isSafeInteger(index)) return { kind: "key", key: text, bracketed, quoted };
    return { kind: "index", index, key: text, bracketed };
  }
  // vCluster's Atoi accepts `-1` and then indexes `t[-1]`, which panics. A quoted `"-1"` is a key.
  if (NEGATIVE.test(text) && !quoted) {
    throw new PathSyntaxError(original, raw.start, `negative index ${text}`);
  }
  return { kind: "key", key: text, bracketed, quoted };
}

/** The object key an index segment names when it meets an object (`[0]` is key "0"). */
export function indexKey(segment: { index: number; key?: string }): string {
  return segment.key ?? String(segment.index);
}

/** Keys that cannot be written as a plain dotted segment and so need `["..."]`. */
function needsBrackets(key: string): boolean {
  return (
    key === "" ||
    key === "*" ||
    /[.[\]'"]/.test(key) ||
    /^\s|\s$/.test(key) ||
    DIGITS.test(key) ||
    NEGATIVE.test(key)
  );
}

function formatKeySegment(key: string, first: boolean): string {
  // There is no escape character: a key containing `"` can only be single-quoted.
  if (key.includes('"')) return `['${key}']`;
  if (needsBrackets(key)) return `["${key}"]`;
  return first ? key : `.${key}`;
}

/**
 * The normalised text of a parsed path, used to find duplicate paths (docs/decisions.md EPS-9):
 * `a.b`, `a["b"]`, `a."b"` and `a['b']` all give `a.b`; `a.0` and `a[0]` give `a[0]`; `*` and `[*]`
 * give `[*]`. Parsing the result gives the same segments back (up to the bracketed/quoted flags).
 */
export function canonicalPath(segments: PathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (segment.kind === "wildcard") out += "[*]";
    else if (segment.kind === "index") out += `[${indexKey(segment)}]`;
    else out += formatKeySegment(segment.key, out === "");
  }
  return out;
}

/**
 * A concrete matched path as vCluster builds it for `context.path` (docs/decisions.md EPS-4,
 * docs/reference.md#patch-matched-path): indices as `.N`, keys as `.key`, keys containing `.`, `[`
 * or `]` wrapped in double quotes.
 */
export function formatMatchedPath(keys: readonly (string | number)[]): string {
  // Called for every match (context.path), so no intermediate arrays and a cache for key quoting.
  let out = "";
  for (let i = 0; i < keys.length; i++) {
    const part = matchedPathPart(keys[i]!);
    out = i === 0 ? part : `${out}.${part}`;
  }
  return out;
}

/** One key of a matched path as formatMatchedPath writes it. */
export function matchedPathPart(key: string | number): string {
  return typeof key === "number" ? String(key) : quotePathKey(key);
}

const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

/** A key as it appears in a matched path: double-quoted when it holds `.`, `[` or `]`. */
function quotePathKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = /[.[\]]/.test(key) ? `"${key}"` : key;
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}
