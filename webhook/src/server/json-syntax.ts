// Where JSON text stops being valid, without quoting it. V8's JSON.parse errors quote the text
// around the error (`Unexpected token ']', "...[1,2,]..." is not valid JSON`), and that text can be
// a secret, so a body that fails to parse is scanned again here for the offset alone. Runs only on
// that failure path; iterative, so any depth is fine; reads bytes, so offsets are byte offsets.

export interface JsonSyntaxError {
  /** Byte offset of the first byte that cannot be part of valid JSON (the length at end of input). */
  offset: number;
  /** 1-based line and column (in bytes) of `offset`. */
  line: number;
  column: number;
  /** What was wrong, in words that never include the input. */
  problem: string;
}

const enum Expect {
  /** Any value (the top level, or after `:` or `,` in an array). */
  Value,
  /** A value or `]` (right after `[`). */
  ValueOrEnd,
  /** A key (after `,` in an object). */
  Key,
  /** A key or `}` (right after `{`). */
  KeyOrEnd,
  Colon,
  /** `,` or the close of the enclosing container. */
  CommaOrEnd,
  /** Only whitespace: the top-level value is complete. */
  Nothing,
}

const OBJECT = 0x7b;
const ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;

const isWhitespace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/**
 * The scan position, shared by the helpers below: each moves `at` past what it read, or leaves it
 * at the offending byte and sets `problem`. One per scan, so a scan allocates nothing per token.
 */
interface Cursor {
  bytes: Uint8Array;
  at: number;
  problem: string;
  /** Open containers as bytes ({ or [); a JSON text has at most one per byte. */
  containers: Uint8Array;
  depth: number;
}

/** What a step returns when the byte at `at` cannot come next. */
const FAILED = -1;

/** The first syntax error in `bytes`, or undefined when they are one valid JSON text. */
export function findJsonSyntaxError(bytes: Uint8Array): JsonSyntaxError | undefined {
  const c: Cursor = {
    bytes,
    at: 0,
    problem: "",
    containers: new Uint8Array(bytes.length),
    depth: 0,
  };
  let expect: Expect = Expect.Value;
  for (;;) {
    while (c.at < bytes.length && isWhitespace(bytes[c.at]!)) c.at++;
    if (c.at >= bytes.length) {
      return expect === Expect.Nothing
        ? undefined
        : located(bytes, c.at, "unexpected end of input");
    }
    const next = step(c, bytes[c.at]!, expect);
    if (next === FAILED) return located(bytes, c.at, c.problem);
    expect = next;
  }
}

/** Reads the token that starts with `b`, where `expect` says what may come; returns what may follow. */
function step(c: Cursor, b: number, expect: Expect): Expect | typeof FAILED {
  switch (expect) {
    case Expect.Nothing:
      return problem(c, "unexpected data after the JSON value");
    case Expect.Colon:
      if (b !== COLON) return problem(c, "expected ':' after an object key");
      c.at++;
      return Expect.Value;
    case Expect.CommaOrEnd:
      return commaOrEnd(c, b);
    case Expect.Key:
    case Expect.KeyOrEnd:
      if (b === CLOSE_OBJECT && expect === Expect.KeyOrEnd) return close(c);
      if (b !== QUOTE) return problem(c, "expected a double-quoted object key");
      return scanString(c) ? Expect.Colon : FAILED;
    default:
      if (b === CLOSE_ARRAY && expect === Expect.ValueOrEnd) return close(c);
      if (b === OBJECT || b === ARRAY) {
        c.containers[c.depth++] = b;
        c.at++;
        return b === OBJECT ? Expect.KeyOrEnd : Expect.ValueOrEnd;
      }
      return scanScalar(c, b) ? afterValue(c) : FAILED;
  }
}

function commaOrEnd(c: Cursor, b: number): Expect | typeof FAILED {
  const inObject = c.containers[c.depth - 1] === OBJECT;
  if (b === COMMA) {
    c.at++;
    return inObject ? Expect.Key : Expect.Value;
  }
  if (b === (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) return close(c);
  return problem(c, inObject ? "expected ',' or '}'" : "expected ',' or ']'");
}

/** Past the byte that closes the innermost container. */
function close(c: Cursor): Expect {
  c.at++;
  c.depth--;
  return afterValue(c);
}

function afterValue(c: Cursor): Expect {
  return c.depth > 0 ? Expect.CommaOrEnd : Expect.Nothing;
}

function problem(c: Cursor, what: string): typeof FAILED {
  c.problem = what;
  return FAILED;
}

function fail(c: Cursor, at: number, problem: string): false {
  c.at = at;
  c.problem = at >= c.bytes.length ? "unexpected end of input" : problem;
  return false;
}

/** A string, number or literal starting with byte `b`. */
function scanScalar(c: Cursor, b: number): boolean {
  if (b === QUOTE) return scanString(c);
  if (b === MINUS || isDigit(b)) return scanNumber(c);
  const word = b === 0x74 ? TRUE : b === 0x66 ? FALSE : b === 0x6e ? NULL : undefined;
  if (!word) return fail(c, c.at, "unexpected character where a value should start");
  for (let k = 0; k < word.length; k++) {
    if (c.bytes[c.at + k] !== word[k]) return fail(c, c.at + k, "invalid literal");
  }
  c.at += word.length;
  return true;
}

const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");
const NULL = Buffer.from("null");

/** 1 for the escapes that stand alone after a backslash: " \ / b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const ch of '"\\/bfnrt') SIMPLE_ESCAPE[ch.charCodeAt(0)] = 1;

/** A string from its opening quote. */
function scanString(c: Cursor): boolean {
  const bytes = c.bytes;
  let k = c.at + 1;
  while (k < bytes.length) {
    const b = bytes[k]!;
    if (b === QUOTE) {
      c.at = k + 1;
      return true;
    }
    if (b < 0x20) return fail(c, k, "control character in a string");
    if (b !== BACKSLASH) {
      k++;
      continue;
    }
    const e = bytes[k + 1];
    if (e === undefined) return fail(c, k + 1, "unterminated string");
    if (SIMPLE_ESCAPE[e]) {
      k += 2;
      continue;
    }
    if (e !== 0x75) return fail(c, k + 1, "invalid escape in a string");
    for (let h = k + 2; h < k + 6; h++) {
      if (h >= bytes.length || !isHex(bytes[h]!))
        return fail(c, h, "invalid \\u escape in a string");
    }
    k += 6;
  }
  return fail(c, k, "unterminated string");
}

function skipDigits(bytes: Uint8Array, from: number): number {
  let k = from;
  while (k < bytes.length && isDigit(bytes[k]!)) k++;
  return k;
}

/** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
function scanNumber(c: Cursor): boolean {
  const bytes = c.bytes;
  let k = c.at;
  if (bytes[k] === MINUS) k++;
  if (bytes[k] === 0x30) k++;
  else if (k < bytes.length && isDigit(bytes[k]!)) k = skipDigits(bytes, k);
  else return fail(c, k, "invalid number");
  if (bytes[k] === 0x2e) {
    const end = skipDigits(bytes, k + 1);
    if (end === k + 1) return fail(c, end, "invalid number");
    k = end;
  }
  if (bytes[k] === 0x65 || bytes[k] === 0x45) {
    k++;
    if (bytes[k] === 0x2b || bytes[k] === MINUS) k++;
    const end = skipDigits(bytes, k);
    if (end === k) return fail(c, end, "invalid number");
    k = end;
  }
  c.at = k;
  return true;
}

function located(bytes: Uint8Array, offset: number, problem: string): JsonSyntaxError {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < bytes.length; k++) {
    if (bytes[k] === 0x0a) {
      line++;
      lineStart = k + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1, problem };
}
