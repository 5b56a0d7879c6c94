// Label and field selectors as kube-apiserver parses and applies them on list, watch and
// deletecollection. The label grammar, its tokens and its error texts follow apimachinery's
// labels.Parse (`unable to parse requirement: found 'b' expected: '('`); field selectors follow
// fields.ParseSelector, and only metadata.name and metadata.namespace are known fields, as for
// custom resources and most built-in types.

import { aggregateText, invalid, type FieldError } from "../../../webhook/src/api/field-errors.js";
import { newBadRequest } from "../../../webhook/src/api/status.js";
import { isLabelKey, isLabelValue } from "./name-validation.js";
import type { KubeObject } from "./store.js";

type Operator = "in" | "notin" | "=" | "==" | "!=" | ">" | "<" | "exists" | "!";

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export interface FieldTerm {
  field: string;
  value: string;
  negated: boolean;
}

/** A parsed labelSelector and fieldSelector; empty lists match everything. */
export interface Selectors {
  labels: Requirement[];
  fields: FieldTerm[];
}

const BINARY_OPERATORS = ["in", "notin", "=", "==", "!=", "gt", "lt"];
const SPECIAL = new Set(["=", "!", "(", ")", ",", ">", "<"]);
const WHITESPACE = new Set([" ", "\t", "\r", "\n"]);
const KEYWORDS = new Set([")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin", "("]);

type Tok = { kind: "id" | "op" | "end"; text: string };

/** labels.Lexer: identifiers run to whitespace or a special symbol; operators are the longest match. */
function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && WHITESPACE.has(s[i]!)) i++;
    if (i >= s.length) {
      out.push({ kind: "end", text: "" });
      return out;
    }
    if (SPECIAL.has(s[i]!)) {
      // Every single special symbol is a token, so the longest match is never empty.
      let best = s[i]!;
      if (KEYWORDS.has(s.slice(i, i + 2))) best = s.slice(i, i + 2);
      i += best.length;
      out.push({ kind: "op", text: best });
      continue;
    }
    const start = i;
    while (i < s.length && !SPECIAL.has(s[i]!) && !WHITESPACE.has(s[i]!)) i++;
    const word = s.slice(start, i);
    out.push({ kind: word === "in" || word === "notin" ? "op" : "id", text: word });
  }
}

class LabelParser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}

  /** In a value position `in` and `notin` are plain identifiers (kube's Values context). */
  private peek(values = true): Tok {
    const t = this.toks[this.pos]!;
    return values && (t.text === "in" || t.text === "notin") ? { kind: "id", text: t.text } : t;
  }
  private next(values = true): Tok {
    const t = this.peek(values);
    this.pos++;
    return t;
  }
  private isId(t: Tok): boolean {
    return t.kind === "id";
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === "end") return reqs;
      if (!this.isId(t) && t.text !== "!") {
        throw new Error(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      }
      try {
        reqs.push(this.requirement());
      } catch (err) {
        throw new Error(`unable to parse requirement: ${(err as Error).message}`, { cause: err });
      }
      const after = this.next();
      if (after.kind === "end") return reqs;
      if (after.text !== ",")
        throw new Error(`found '${after.text}', expected: ',' or 'end of string'`);
      const t2 = this.peek();
      if (!this.isId(t2) && t2.text !== "!") {
        throw new Error(`found '${t2.text}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): Requirement {
    let t = this.next();
    const negated = t.text === "!" && t.kind === "op";
    if (negated) t = this.next();
    if (!this.isId(t)) throw new Error(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyErrs = isLabelKey(key);
    if (keyErrs.length)
      throw new Error(`: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join("; ")}`);
    const la = this.peek();
    if (negated) return checked({ key, operator: "!", values: [] });
    if (la.kind === "end" || la.text === ",")
      return checked({ key, operator: "exists", values: [] });
    const op = this.next(false);
    if (op.kind !== "op" || !BINARY_TOKENS.has(op.text)) {
      throw new Error(`found '${op.text}', expected: ${BINARY_OPERATORS.join(", ")}`);
    }
    const operator = op.text as Operator;
    const values = operator === "in" || operator === "notin" ? this.valueSet() : this.exactValue();
    return checked({ key, operator, values });
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.text !== "(" || open.kind !== "op")
      throw new Error(`found '${open.text}' expected: '('`);
    const la = this.peek();
    if (la.text === ")" && la.kind === "op") {
      this.next();
      return [""];
    }
    if (!this.isId(la) && la.text !== ",") {
      throw new Error(`found '${la.text}', expected: ',', ')' or identifier`);
    }
    const values = this.identifiers();
    if (this.next().text !== ")") throw new Error(`found '${la.text}', expected: ')'`);
    return values;
  }

  private identifiers(): string[] {
    const set = new Set<string>();
    for (;;) {
      const t = this.next();
      if (this.isId(t)) {
        set.add(t.text);
        const t2 = this.peek();
        if (t2.text === ",") continue;
        if (t2.text === ")") return [...set].sort();
        throw new Error(`found '${t2.text}', expected: ',' or ')'`);
      }
      if (t.text !== ",") throw new Error(`found '${t.text}', expected: ',', or identifier`);
      if (set.size === 0) set.add("");
      const t2 = this.peek();
      if (t2.text === ")") {
        set.add("");
        return [...set].sort();
      }
      if (t2.text === ",") set.add("");
    }
  }

  private exactValue(): string[] {
    const la = this.peek();
    if (la.kind === "end" || la.text === ",") return [""];
    const t = this.next();
    if (this.isId(t)) return [t.text];
    throw new Error(`found '${t.text}', expected: identifier`);
  }
}

const BINARY_TOKENS = new Set(["in", "notin", "=", "==", "!=", ">", "<"]);

/** NewRequirement's checks: label values must be valid, `>`/`<` take one integer. */
function checked(r: Requirement): Requirement {
  const errs: FieldError[] = [];
  if ((r.operator === ">" || r.operator === "<") && !/^[+-]?\d+$/.test(r.values[0] ?? "")) {
    errs.push(
      invalid("values[0]", r.values[0], "for 'Gt', 'Lt' operators, the value must be an integer"),
    );
  }
  r.values.forEach((v, i) => {
    const msgs = isLabelValue(v);
    if (msgs.length) errs.push(invalid(`values[${i}][${r.key}]`, v, msgs.join("; ")));
  });
  if (errs.length) throw new Error(aggregateText(errs));
  return r;
}

/** labels.Parse; a malformed selector is 400 BadRequest with the parser's text. */
export function parseLabelSelector(selector: string): Requirement[] {
  try {
    const reqs = new LabelParser(lex(selector)).parse();
    return reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  } catch (err) {
    throw newBadRequest((err as Error).message);
  }
}

export function labelsMatch(reqs: readonly Requirement[], labels: Record<string, string>): boolean {
  return reqs.every((r) => requirementMatches(r, labels));
}

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case "in":
    case "=":
    case "==":
      return has && r.values.includes(value!);
    case "notin":
    case "!=":
      return !has || !r.values.includes(value!);
    case "exists":
      return has;
    case "!":
      return !has;
    case ">":
    case "<":
      return has && compareInts(r.operator, value!, r.values[0]!);
  }
}

function compareInts(op: ">" | "<", have: string, want: string): boolean {
  if (!/^[+-]?\d+$/.test(have)) return false;
  const a = BigInt(have);
  const b = BigInt(want);
  return op === ">" ? a > b : a < b;
}

const META_FIELDS = ["metadata.name", "metadata.namespace"];

// Built-in types with their own field-label conversion (and its "field label not supported" text).
const TYPE_FIELDS: Record<string, string[]> = {
  "/Event": [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
  ],
  "/Pod": [
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
  ],
  "/Secret": ["type"],
  "/Namespace": ["status.phase"],
  "/Node": ["spec.unschedulable"],
};

/** The group/Kind a field selector is converted for; omit for metadata-only checks. */
export interface FieldScope {
  group: string;
  kind: string;
}

/**
 * fields.ParseSelector, then the field-label conversion: terms split on unescaped commas, each
 * `field=value`, `field==value` or `field!=value`; unknown fields are rejected as kube's default
 * conversion does (`"spec.x" is not a known field selector: only "metadata.name", ...`).
 */
export function parseFieldSelector(selector: string, scope?: FieldScope): FieldTerm[] {
  const own = scope && TYPE_FIELDS[`${scope.group}/${scope.kind}`];
  const terms: FieldTerm[] = [];
  for (const part of splitUnescaped(selector, ",").sort()) {
    if (part === "") continue;
    const split = splitTerm(part);
    if (!split) {
      throw newBadRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    }
    const [field, op, raw] = split;
    if (own && !META_FIELDS.includes(field) && !own.includes(field)) {
      throw newBadRequest(`field label not supported: ${field}`);
    }
    if (!own && !META_FIELDS.includes(field)) {
      throw newBadRequest(
        `${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
    terms.push({ field, value: unescape(raw), negated: op === "!=" });
  }
  return terms;
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length) {
      cur += c + s[++i]!;
    } else if (c === sep) {
      out.push(cur);
      cur = "";
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function splitTerm(term: string): [string, string, string] | null {
  for (let i = 0; i < term.length; i++) {
    for (const op of ["!=", "==", "="]) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return null;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, "$1");
}

export function fieldsMatch(terms: readonly FieldTerm[], obj: KubeObject): boolean {
  return terms.every((t) => (fieldValue(obj, t.field) === t.value) !== t.negated);
}

/** A field's value as field selectors compare it: a string, "" when absent. */
function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const step of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return "";
    cur = (cur as Record<string, unknown>)[step];
  }
  if (cur === undefined || cur === null) return "";
  return typeof cur === "string" ? cur : JSON.stringify(cur);
}

/** Reads labelSelector and fieldSelector from a query; 400 BadRequest when malformed. */
export function parseSelectors(query: URLSearchParams, scope?: FieldScope): Selectors {
  return {
    labels: parseLabelSelector(query.get("labelSelector") ?? ""),
    fields: parseFieldSelector(query.get("fieldSelector") ?? "", scope),
  };
}

export function selects(s: Selectors, obj: KubeObject): boolean {
  const labels = (obj.metadata["labels"] ?? {}) as Record<string, string>;
  return labelsMatch(s.labels, labels) && fieldsMatch(s.fields, obj);
}

export function isEverything(s: Selectors): boolean {
  return s.labels.length === 0 && s.fields.length === 0;
}
