// Reading kubeconfig YAML so that a mistake is reported by place, never by content
// (docs/decisions.md OAK-32). A kubeconfig holds tokens, passwords and private keys, and YAML
// parsers quote the offending line in their messages (`token: s3cr3t` with a stray colon is
// echoed whole). Here a failure is a KubeconfigContentError: the line and column, the field path
// when it is known (built only from kubeconfig's own field names, so a mistyped line never becomes
// a "field name" in the message), and what is wrong in fixed words chosen by the error's code.

import {
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  YAMLError,
  type Document,
  type ErrorCode,
} from "yaml";

/** A kubeconfig text that is not usable, said by place: never a value from it. */
export class KubeconfigContentError extends Error {
  override readonly name = "KubeconfigContentError";
  constructor(
    /** What is wrong, in fixed words. */
    readonly problem: string,
    /** 1-based line and column, when known. */
    readonly line?: number,
    readonly column?: number,
    /** A path such as users[0].user.token, from kubeconfig's own field names only. */
    readonly field?: string,
  ) {
    super(
      [
        line === undefined
          ? undefined
          : `line ${line}${column === undefined ? "" : `, column ${column}`}`,
        field === undefined ? undefined : `in ${field}`,
        problem,
      ]
        .filter((p) => p !== undefined)
        .join(": "),
    );
  }
}

/** What each YAML error code means, in words that quote nothing. */
const PROBLEMS: Readonly<Record<ErrorCode, string>> = {
  ALIAS_PROPS: "an alias cannot have a tag or an anchor",
  BAD_ALIAS: "an alias names no anchor defined before it",
  BAD_DIRECTIVE: "a directive is not valid",
  BAD_DQ_ESCAPE: "a double-quoted string has an invalid escape",
  BAD_INDENT: "the indentation is wrong",
  BAD_PROP_ORDER: "an anchor or tag is in the wrong place",
  BAD_SCALAR_START: "a value starts with a character that is not allowed there",
  BLOCK_AS_IMPLICIT_KEY: "a block value is used as a key",
  BLOCK_IN_FLOW: "a block value is inside a flow collection ([…] or {…})",
  DUPLICATE_KEY: "a key appears twice in one mapping",
  IMPOSSIBLE: "the YAML cannot be read",
  KEY_OVER_1024_CHARS: "a key is longer than 1024 characters",
  MISSING_CHAR: "a closing quote or bracket is missing",
  MULTILINE_IMPLICIT_KEY: "a key spans more than one line (a missing ':' or indentation?)",
  MULTIPLE_ANCHORS: "a value has more than one anchor",
  MULTIPLE_DOCS: "the file holds more than one YAML document",
  MULTIPLE_TAGS: "a value has more than one tag",
  NON_STRING_KEY: "a key is not a string",
  RESOURCE_EXHAUSTION: "aliases expand too far",
  TAB_AS_INDENT: "a tab is used for indentation",
  TAG_RESOLVE_FAILED: "a tagged value cannot be read as its tag says",
  UNEXPECTED_TOKEN: "a character is not allowed here",
  BAD_COLLECTION_TYPE: "a collection has the wrong type for its tag",
};

/** kubeconfig's field names (clientcmd/api/v1): the only words a field path is made of. */
const FIELDS = new Set([
  "apiVersion",
  "kind",
  "preferences",
  "colors",
  "clusters",
  "cluster",
  "server",
  "tls-server-name",
  "insecure-skip-tls-verify",
  "certificate-authority",
  "certificate-authority-data",
  "proxy-url",
  "disable-compression",
  "users",
  "user",
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "token",
  "tokenFile",
  "token-file",
  "as",
  "as-uid",
  "as-groups",
  "as-user-extra",
  "username",
  "password",
  "auth-provider",
  "exec",
  "command",
  "args",
  "env",
  "value",
  "installHint",
  "provideClusterInfo",
  "interactiveMode",
  "config",
  "contexts",
  "context",
  "namespace",
  "current-context",
  "extensions",
  "extension",
  "name",
]);

type Node = unknown;

const startOf = (node: Node): number | undefined =>
  (node as { range?: [number, number, number] } | null)?.range?.[0];

/** The field path at `offset`: the innermost entry that starts at or before it. */
function fieldAt(node: Node, offset: number, path: string[] = []): string[] {
  if (isMap(node)) {
    let chosen: (typeof node.items)[number] | undefined;
    for (const pair of node.items) {
      const start = startOf(pair.key) ?? startOf(pair.value);
      if (start !== undefined && start <= offset) chosen = pair;
    }
    if (!chosen) return path;
    const key = isScalar(chosen.key) ? chosen.key.value : undefined;
    if (typeof key !== "string" || !FIELDS.has(key)) return path;
    const next = [...path, path.length === 0 ? key : `.${key}`];
    const valueStart = startOf(chosen.value);
    return valueStart !== undefined && valueStart <= offset
      ? fieldAt(chosen.value, offset, next)
      : next;
  }
  if (isSeq(node)) {
    let index = -1;
    node.items.forEach((item, i) => {
      const start = startOf(item);
      if (start !== undefined && start <= offset) index = i;
    });
    if (index < 0) return path;
    return fieldAt(node.items[index], offset, [...path, `[${index}]`]);
  }
  return path;
}

function fieldPath(doc: Document, offset: number): string | undefined {
  const path = fieldAt(doc.contents, offset);
  return path.length > 0 ? path.join("") : undefined;
}

/** An error at `offset`; `doc` given: with the field path found there. */
function located(
  lines: LineCounter,
  offset: number | undefined,
  problem: string,
  doc?: Document,
): KubeconfigContentError {
  if (offset === undefined) return new KubeconfigContentError(problem);
  const { line, col } = lines.linePos(offset);
  return new KubeconfigContentError(problem, line, col, doc && fieldPath(doc, offset));
}

/** One entry of clusters, users or contexts, as client-node's parsers need it. */
function checkEntry(
  doc: Document,
  lines: LineCounter,
  list: "clusters" | "users" | "contexts",
  index: number,
): KubeconfigContentError | undefined {
  const item = doc.getIn([list, index], true);
  // The problem names the field itself.
  const at = (node: Node, problem: string) =>
    located(lines, startOf(node) ?? startOf(item), problem);
  const entry = `${list}[${index}]`;
  if (!isMap(item)) return at(item, `${entry} must be a mapping`);
  const name = item.get("name");
  if (!name) return at(item, `${entry}.name is missing`);
  if (typeof name !== "string") return at(item.get("name", true), `${entry}.name must be a string`);
  if (list === "users") return undefined;
  const inner = list === "clusters" ? "cluster" : "context";
  const body = item.get(inner, true);
  if (!body || (isScalar(body) && !body.value)) return at(item, `${entry}.${inner} is missing`);
  if (!isMap(body)) return at(body, `${entry}.${inner} must be a mapping`);
  const required = list === "clusters" ? "server" : "cluster";
  const value = body.get(required, true);
  if (!value || (isScalar(value) && !value.value))
    return at(body, `${entry}.${inner}.${required} is missing`);
  if (!isScalar(value) || typeof value.value !== "string")
    return at(value, `${entry}.${inner}.${required} must be a string`);
  return undefined;
}

/**
 * The kubeconfig as plain data, read as YAML 1.1 (as kubectl reads it), or a
 * KubeconfigContentError that says where it is wrong.
 */
export function parseKubeconfigText(text: string): Record<string, unknown> {
  const lines = new LineCounter();
  // parseDocument collects warnings instead of printing them (parse() prints them with the line),
  // and logLevel "error" keeps toJS from printing its own (which quote keys) as process warnings.
  const doc = parseDocument(text, {
    version: "1.1",
    lineCounter: lines,
    prettyErrors: false,
    logLevel: "error",
  });
  const error = doc.errors[0];
  if (error) throw located(lines, error.pos[0], problemOf(error), doc);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new KubeconfigContentError("the YAML cannot be read (aliases expand too far?)");
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw located(
      lines,
      startOf(doc.contents),
      "the file is not a kubeconfig: its top level is not a mapping",
    );
  }
  for (const list of ["clusters", "users", "contexts"] as const) {
    const seq = doc.get(list, true);
    // client-node ignores a list that is not one; so does this.
    if (!isSeq(seq)) continue;
    for (let i = 0; i < seq.items.length; i++) {
      const problem = checkEntry(doc, lines, list, i);
      if (problem) throw problem;
    }
  }
  return value as Record<string, unknown>;
}

function problemOf(error: YAMLError): string {
  return PROBLEMS[error.code] ?? "the YAML cannot be read";
}
