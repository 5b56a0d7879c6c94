// The parser of kubectl's JSONPath templates, token for token as client-go's
// (k8s.io/client-go/util/jsonpath/parser.go), so that the same template is accepted or refused
// with the same message. Differences, on purpose:
//   - it loops instead of recursing per token, so a template of any length cannot overflow the
//     stack;
//   - templates longer than MAX_TEMPLATE_LENGTH are refused up front.
// Quirks kept from client-go: `['a.b']` is read as `.a.b` (two fields; write `a\.b` for a key with
// a dot), `[]` means `[0]`, and `range`/`end` are only checked when the template runs.

import { GO_PRINTABLE } from "../../../../webhook/src/shared/go-quote.js";
import { newList, type ArrayNode, type ListNode, type SliceParam } from "./nodes.js";

/** A template the parser or the evaluator refuses; the message is client-go's where it has one. */
export class JsonPathError extends Error {
  override name = "JsonPathError";
}

/** 64 KiB: far more than any template typed on a command line (Linux caps one argument at 128 KiB). */
export const MAX_TEMPLATE_LENGTH = 64 * 1024;

const EOF = -1;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}_]$/u;
const DIGIT = /^\p{Nd}$/u;

const isSpace = (r: number) => r === 0x20 || r === 0x09;
const isEndOfLine = (r: number) => r === 0x0d || r === 0x0a;
const isAlphaNumeric = (r: number) => r !== EOF && LETTER_OR_DIGIT.test(String.fromCodePoint(r));
const isDigit = (r: number) => r !== EOF && DIGIT.test(String.fromCodePoint(r));
const TERMINATORS = new Set([".", ",", "[", "]", "$", "@", "{", "}"].map((c) => c.charCodeAt(0)));
const isTerminator = (r: number) => r === EOF || isSpace(r) || isEndOfLine(r) || TERMINATORS.has(r);

/** Go's `%#U`: `U+002A '*'`, without the character when it is not printable. */
function goRune(r: number): string {
  const hex = `U+${r.toString(16).toUpperCase().padStart(4, "0")}`;
  const ch = String.fromCodePoint(r);
  return GO_PRINTABLE.test(ch) ? `${hex} '${ch}'` : hex;
}

/** Parses a whole template (text with `{…}` actions). */
export function parseTemplate(text: string): ListNode {
  if (text.length > MAX_TEMPLATE_LENGTH) {
    throw new JsonPathError(
      `template is ${text.length} characters long; the limit is ${MAX_TEMPLATE_LENGTH}`,
    );
  }
  return new Parser(text).parse();
}

/** client-go's parseAction: the first action list of `{text}`. */
function parseAction(text: string): ListNode {
  const root = new Parser(`{${text}}`).parse();
  return root.nodes[0] as ListNode;
}

class Parser {
  private pos = 0;
  private start = 0;
  private width = 0;
  private readonly root: ListNode = newList();

  constructor(private readonly input: string) {}

  parse(): ListNode {
    let cur: ListNode | undefined; // the open action, if any
    for (;;) {
      if (!cur) {
        if (!this.scanText()) return this.root;
        this.pos += 1;
        this.consume();
        cur = newList();
        this.root.nodes.push(cur);
        continue;
      }
      if (this.input.startsWith("}", this.pos)) {
        this.pos += 1;
        this.consume();
        cur = undefined;
        continue;
      }
      this.insideAction(cur);
    }
  }

  /** Text up to the next `{`; false at the end of the input. */
  private scanText(): boolean {
    for (;;) {
      if (this.input.startsWith("{", this.pos)) {
        if (this.pos > this.start) this.root.nodes.push({ type: "text", text: this.consume() });
        return true;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) this.root.nodes.push({ type: "text", text: this.consume() });
    return false;
  }

  /** One token inside an action (client-go's parseInsideAction, minus the tail call). */
  private insideAction(cur: ListNode): void {
    if (this.input.startsWith("[?(", this.pos)) return this.parseFilter(cur);
    if (this.input.startsWith("..", this.pos)) return this.parseRecursive(cur);
    const r = this.next();
    if (r === EOF || isEndOfLine(r)) throw new JsonPathError("unclosed action");
    if (r === 0x20 || r === 0x40 || r === 0x24) {
      this.consume(); // ' ', '@' and '$' (the current object) are skipped
      return;
    }
    if (r === 0x5b) return this.parseArray(cur);
    if (r === 0x22 || r === 0x27) return this.parseQuote(cur, r);
    if (r === 0x2e) return this.parseField(cur);
    if (r === 0x2b || r === 0x2d || isDigit(r)) {
      this.backup();
      return this.parseNumber(cur);
    }
    if (isAlphaNumeric(r)) {
      this.backup();
      return this.parseIdentifier(cur);
    }
    throw new JsonPathError(`unrecognized character in action: ${goRune(r)}`);
  }

  private consume(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private charBefore(offset: number): string {
    return this.input[this.pos - offset] ?? "";
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.next()));
    this.backup();
    const value = this.consume();
    if (value === "true" || value === "false") {
      cur.nodes.push({ type: "bool", value: value === "true" });
    } else {
      cur.nodes.push({ type: "identifier", name: value });
    }
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === "recursive") {
      throw new JsonPathError("invalid multiple recursive descent");
    }
    this.pos += 2;
    this.consume();
    cur.nodes.push({ type: "recursive" });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const sign = this.peek();
    if (sign === 0x2b || sign === 0x2d) this.next();
    for (;;) {
      const r = this.next();
      if (r !== 0x2e && !isDigit(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consume();
    const int = goAtoi(value);
    if (int !== undefined) {
      cur.nodes.push({ type: "int", value: int });
      return;
    }
    if (/^[+-]?(\d+(?:\.\d*)?|\.\d+)$/.test(value)) {
      cur.nodes.push({ type: "float", value: Number(value) });
      return;
    }
    throw new JsonPathError(`cannot parse number ${value}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathError("unterminated array");
      if (r === 0x5d) break;
    }
    let text = this.consume().slice(1, -1);
    if (text === "*") text = ":";
    const parts = text.split(",");
    if (parts.length > 1) {
      const lists = parts.map((part) => parseAction(`[${trimSpaces(part)}]`));
      cur.nodes.push({ type: "union", lists });
      return;
    }
    const key = DICT_KEY.exec(text);
    if (key) {
      cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
      return;
    }
    cur.nodes.push(sliceNode(text));
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consume();
    let begin = false;
    let end = false;
    let pair = 0;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathError("unterminated filter");
      if (r === 0x22 || r === 0x27) {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.charBefore(2) !== "\\" && r === pair) end = true;
      } else if (r === 0x29 && begin === end) {
        break;
      }
    }
    if (this.next() !== 0x5d) throw new JsonPathError("unclosed array expect ]");
    const text = this.consume().slice(0, -2);
    const match = FILTER.exec(text);
    if (!match) {
      cur.nodes.push({
        type: "filter",
        left: parseAction(text),
        right: newList(),
        operator: "exists",
      });
      return;
    }
    const [, left = "", operator = "", right = ""] = match;
    cur.nodes.push({
      type: "filter",
      left: parseAction(left),
      right: parseAction(right),
      operator,
    });
  }

  private parseQuote(cur: ListNode, quote: number): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathError("unterminated quoted string");
      if (r === quote && this.charBefore(2) !== "\\") break;
    }
    const value = this.consume();
    const text = unquoteExtend(value);
    if (text === undefined) {
      throw new JsonPathError(`unquote string ${value} error invalid syntax`);
    }
    cur.nodes.push({ type: "text", text });
  }

  private parseField(cur: ListNode): void {
    this.consume();
    for (;;) {
      const r = this.next();
      if (r === 0x5c) {
        this.next();
      } else if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consume();
    if (value === "*") cur.nodes.push({ type: "wildcard" });
    else cur.nodes.push({ type: "field", name: value.replaceAll("\\", "") });
  }
}

/** Go's strings.Trim(s, " "). */
function trimSpaces(s: string): string {
  return s.replace(/^ +| +$/g, "");
}

/** Go's strconv.Atoi (64-bit): a signed decimal integer in range, else undefined. */
function goAtoi(value: string): number | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const big = BigInt(value.replace(/^\+/, ""));
  return big > INT64_MAX || big < INT64_MIN ? undefined : Number(big);
}

function sliceNode(text: string): ArrayNode {
  const match = SLICE.exec(text);
  if (!match) throw new JsonPathError(`invalid array index ${text}`);
  const groups = [match[1] ?? "", match[2] ?? "", match[3] ?? ""];
  const params: SliceParam[] = [];
  groups.forEach((group, i) => {
    if (group !== "") {
      const digits = i > 0 ? group.slice(1) : group;
      if (i > 0 && digits === "") {
        params.push({ known: false, value: 0, derived: false });
        return;
      }
      const value = goAtoi(digits);
      if (value === undefined) throw new JsonPathError(`array index ${digits} is not a number`);
      params.push({ known: true, value, derived: false });
    } else if (i === 1) {
      params.push({ known: true, value: params[0]!.value + 1, derived: true });
    } else {
      params.push({ known: false, value: 0, derived: false });
    }
  });
  return { type: "array", params: params as ArrayNode["params"] };
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
};

/**
 * client-go's UnquoteExtend: Go's strconv.Unquote rules for a "…" or '…' string (the escapes
 * `\a \b \f \n \r \t \v \\`, the enclosing quote, `\xHH`, octal `\ooo`, `\uHHHH`, `\UHHHHHHHH`).
 * Undefined when Go would answer "invalid syntax".
 */
export function unquoteExtend(s: string): string | undefined {
  if (s.length < 2) return undefined;
  const quote = s[0]!;
  if (quote !== s.at(-1) || (quote !== '"' && quote !== "'")) return undefined;
  const body = s.slice(1, -1);
  if (!body.includes("\\") && !body.includes(quote)) return body;
  let out = "";
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === quote) return undefined;
    if (c !== "\\") {
      out += c;
      i += 1;
      continue;
    }
    const step = unescapeAt(body, i + 1, quote);
    if (!step) return undefined;
    out += step.text;
    i = step.next;
  }
  return out;
}

function unescapeAt(s: string, i: number, quote: string): { text: string; next: number } | null {
  const c = s[i];
  if (c === undefined) return null;
  const simple = SIMPLE_ESCAPES[c];
  if (simple !== undefined) return { text: simple, next: i + 1 };
  if (c === "'" || c === '"') return c === quote ? { text: c, next: i + 1 } : null;
  const hexLength = c === "x" ? 2 : c === "u" ? 4 : c === "U" ? 8 : 0;
  if (hexLength) {
    const hex = s.slice(i + 1, i + 1 + hexLength);
    if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) return null;
    const code = parseInt(hex, 16);
    if (c === "x") return { text: String.fromCharCode(code), next: i + 1 + hexLength };
    if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return null;
    return { text: String.fromCodePoint(code), next: i + 1 + hexLength };
  }
  const octal = s.slice(i, i + 3);
  if (/^[0-7]{3}$/.test(octal) && parseInt(octal, 8) <= 255) {
    return { text: String.fromCharCode(parseInt(octal, 8)), next: i + 3 };
  }
  return null;
}
