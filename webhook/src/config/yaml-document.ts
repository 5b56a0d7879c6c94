// One YAML (or JSON) document from untrusted text, for vcluster.yaml and the objects the CLI reads.
//
// Two rules make this safe on hostile input:
// - Problems name the position (`source:line:column`) and say what is wrong in words of our own,
//   chosen by the parser's error code. They never carry the parser's message text, which can quote
//   the input (a tag, a block scalar header, a token), nor an excerpt of the lines around it: the
//   input may hold secrets.
// - Nesting is bounded before the recursive parts run. yaml's composer and toJS recurse per level,
//   and its CST parser spends seconds and a gigabyte on a few megabytes of `[[[[`: a stack overflow
//   deep inside it has even aborted the process. So flow nesting is counted on the lexer's tokens
//   (a flat loop), the CST's nesting is walked with an explicit stack, and only then is the
//   document composed. The JSON value is checked once more, since aliases can nest it further.

import {
  Composer,
  CST,
  Lexer,
  LineCounter,
  Parser,
  type DocumentOptions,
  type ErrorCode,
  type ParseOptions,
  type SchemaOptions,
  type YAMLError,
} from "yaml";
import { goYamlTags } from "./go-yaml-scalars.js";

/** The deepest nesting accepted, as for AdmissionReview bodies (README: deeper than 100 is a 400). */
export const MAX_DEPTH = 100;
/** Aliases expanded at most (the "billion laughs" bound). */
const MAX_ALIAS_COUNT = 100;

export type DocumentOutcome = { ok: true; value: unknown } | { ok: false; problems: string[] };

/** What each parser error code means, in words that never quote the input. */
const CODE_TEXT: Record<ErrorCode, string> = {
  ALIAS_PROPS: "an alias cannot have an anchor or a tag",
  BAD_ALIAS: "an anchor or alias name is empty or ends in ':'",
  BAD_COLLECTION_TYPE: "a tag does not fit the collection it is on",
  BAD_DIRECTIVE: "bad directive",
  BAD_DQ_ESCAPE: "invalid escape sequence in a double-quoted string",
  BAD_INDENT: "bad indentation",
  BAD_PROP_ORDER: "an anchor or tag must come after the '-', '?' or ':' indicator",
  BAD_SCALAR_START: "a plain value cannot start with this character; quote it",
  BLOCK_AS_IMPLICIT_KEY: "a block collection cannot be an implicit key",
  BLOCK_IN_FLOW: "a block collection cannot be inside a flow collection",
  DUPLICATE_KEY: "Map keys must be unique",
  IMPOSSIBLE: "cannot parse this",
  KEY_OVER_1024_CHARS: "an implicit key is longer than 1024 characters",
  MISSING_CHAR: "a character is missing here (a closing quote or bracket, ',', ':' or a space)",
  MULTILINE_IMPLICIT_KEY: "Implicit keys need to be on a single line",
  MULTIPLE_ANCHORS: "A node can have at most one anchor",
  MULTIPLE_DOCS: "more than one YAML document; give one",
  MULTIPLE_TAGS: "A node can have at most one tag",
  NON_STRING_KEY: "a map key is not a string",
  RESOURCE_EXHAUSTION: "too large or too deeply nested",
  TAB_AS_INDENT: "Tabs are not allowed as indentation",
  TAG_RESOLVE_FAILED: "unknown tag",
  UNEXPECTED_TOKEN: "unexpected character",
};

/**
 * yaml's own messages that quote nothing of the input, kept because they say more than CODE_TEXT:
 * its constant texts, word for word, and the flow-collection ones, which only name the collection
 * kind and its closing bracket. Anything else is replaced by CODE_TEXT.
 */
const FIXED_MESSAGES = new Set([
  "A block sequence may not be used as an implicit map key",
  "A node can have at most one anchor",
  "A node can have at most one tag",
  "All mapping items must start at the same column",
  "All sequence items must start at the same column",
  "Block collection cannot start on same line with directives-end marker",
  "Block collections are not allowed within flow collections",
  "Block scalar values in collections must be indented",
  "Comments must be separated from other tokens by white space characters",
  "Flow end indicator should be more indented than parent",
  "Implicit keys need to be on a single line",
  "Implicit keys of flow sequence pairs need to be on a single line",
  "Implicit map keys need to be followed by map values",
  "Map keys must be unique",
  'Missing closing "quote',
  "Missing closing 'quote",
  "Nested mappings are not allowed in compact mappings",
  "Sequence item without - indicator",
  "Tabs are not allowed as indentation",
  "Tags and anchors must be separated from the next token by white space",
]);
const FLOW_MESSAGE =
  /^(?:Flow (?:map|sequence)(?: in block collection must be sufficiently indented and| must) end with a [\]}]|(?:Unexpected , in|Unexpected empty item in|Missing space after : in) flow (?:map|sequence)|Missing , (?:or : )?between flow (?:map|sequence) items)$/;

function describe(err: YAMLError): string {
  const safe = FIXED_MESSAGES.has(err.message) || FLOW_MESSAGE.test(err.message);
  return safe ? err.message : CODE_TEXT[err.code];
}

function at(source: string, lines: LineCounter, offset: number): string {
  const { line, col } = lines.linePos(offset);
  return `${source}:${line}:${col}`;
}

const tooDeep = `nested deeper than ${MAX_DEPTH} levels`;

/** The offset of the first flow collection opened deeper than MAX_DEPTH, or -1. */
function flowTooDeep(text: string): number {
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    // The lexer's mode markers are not part of the text.
    const marker = token === CST.DOCUMENT || token === CST.SCALAR || token === CST.FLOW_END;
    if (token === "[" || token === "{") {
      depth++;
      if (depth > MAX_DEPTH) return offset;
    } else if (token === "]" || token === "}") {
      depth = Math.max(0, depth - 1);
    }
    if (!marker) offset += token.length;
  }
  return -1;
}

/** The offset of the first CST collection deeper than MAX_DEPTH, or -1; no recursion. */
function cstTooDeep(tokens: readonly CST.Token[]): number {
  const stack: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [token, depth] = next;
    if (token.type === "document" && token.value) stack.push([token.value, depth]);
    if (!CST.isCollection(token)) continue;
    if (depth + 1 > MAX_DEPTH) return token.offset;
    for (const item of token.items) {
      if (item.key) stack.push([item.key, depth + 1]);
      if (item.value) stack.push([item.value, depth + 1]);
    }
  }
  return -1;
}

/** Whether a parsed JSON value nests deeper than `max` (arrays and objects); no recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * How plain scalars are read: "yaml-1.2" (YAML 1.2's core schema, for the objects the CLI reads)
 * or "go-yaml-v2" (YAML 1.1 as vCluster's Go code reads it, with `<<` merge keys: for vcluster.yaml;
 * config/go-yaml-scalars.ts).
 */
export type YamlDialect = "yaml-1.2" | "go-yaml-v2";

const OPTIONS: Record<YamlDialect, ParseOptions & DocumentOptions & SchemaOptions> = {
  "yaml-1.2": { uniqueKeys: true, prettyErrors: false },
  "go-yaml-v2": {
    uniqueKeys: true,
    prettyErrors: false,
    version: "1.1",
    schema: "yaml-1.1",
    merge: true,
    customTags: goYamlTags,
  },
};
/** Syntax errors reported at most; garbage input can have one per character. */
const MAX_REPORTED = 10;

function syntaxProblems(
  errors: readonly YAMLError[],
  source: string,
  lines: LineCounter,
): string[] {
  const shown = errors
    .slice(0, MAX_REPORTED)
    .map((e) => `${at(source, lines, e.pos[0])}: ${describe(e)}`);
  const more = errors.length - shown.length;
  return more > 0 ? [...shown, `${source}: ${more} more syntax errors`] : shown;
}

/**
 * Parses one YAML document (JSON is YAML 1.2). Problems are `source:line:column: what`, one per
 * syntax error; duplicate keys, several documents, alias bombs and nesting deeper than MAX_DEPTH
 * are problems too. An empty text (or only comments) is the value null.
 */
export function parseYamlDocument(
  text: string,
  source: string,
  dialect: YamlDialect = "yaml-1.2",
): DocumentOutcome {
  const lines = new LineCounter();
  const tokens: CST.Token[] = [];
  const deep = flowTooDeep(text);
  // Only the text before a too-deep flow is parsed, to count its lines for the position.
  for (const token of new Parser(lines.addNewLine).parse(deep < 0 ? text : text.slice(0, deep)))
    tokens.push(token);
  const offset = deep >= 0 ? deep : cstTooDeep(tokens);
  if (offset >= 0) return { ok: false, problems: [`${at(source, lines, offset)}: ${tooDeep}`] };
  const docs = [...new Composer(OPTIONS[dialect]).compose(tokens, true, text.length)];
  // yaml only warns about a tag it does not know and keeps the text; go-yaml v2 decodes the
  // standard ones it knows (!!binary, !!set, ...) into other values, so vcluster.yaml refuses them.
  const unknownTags = (d: (typeof docs)[number]) =>
    dialect === "go-yaml-v2" ? d.warnings.filter((w) => w.code === "TAG_RESOLVE_FAILED") : [];
  const problems = syntaxProblems(
    docs.flatMap((d) => [...d.errors, ...unknownTags(d)]),
    source,
    lines,
  );
  const second = docs[1];
  if (second) problems.push(`${at(source, lines, second.range[0])}: ${CODE_TEXT.MULTIPLE_DOCS}`);
  if (problems.length > 0) return { ok: false, problems };
  let value: unknown;
  try {
    value = docs[0]?.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? null;
  } catch (err) {
    // toJS throws a ReferenceError on too many aliases (a "billion laughs" document), a
    // RangeError on overflowing its stack, and an Error on a `<<` merge key whose value is not a
    // map (go-yaml v2 refuses that too).
    let why = "a merge key (<<) needs a map, an alias of a map, or a list of them";
    if (err instanceof RangeError) why = tooDeep;
    else if (err instanceof ReferenceError) why = `expands more than ${MAX_ALIAS_COUNT} aliases`;
    return { ok: false, problems: [`${source}: ${why}`] };
  }
  if (nestsDeeperThan(value, MAX_DEPTH)) return { ok: false, problems: [`${source}: ${tooDeep}`] };
  return { ok: true, value };
}
