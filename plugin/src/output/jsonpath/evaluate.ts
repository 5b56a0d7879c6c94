// Runs a parsed template over a decoded JSON document as client-go's JSONPath.FindResults and
// PrintResults do (k8s.io/client-go/util/jsonpath/jsonpath.go): `{range}`/`{end}` pairing at run
// time, missing keys, slices, filters with Go's template comparisons, and printing (strings raw,
// maps and lists as compact JSON, several results of one action separated by a space).
// Differences, on purpose:
//   - maps are walked in sorted key order (`*`, `..`), where Go's order is random;
//   - work is bounded: ranges nest at most MAX_RANGE_DEPTH deep, a template may take at most
//     MAX_STEPS steps and print at most MAX_OUTPUT characters, so a hostile template ends with
//     an error instead of hanging or exhausting memory.
// `undefined` stands for Go's invalid reflect.Value (what a `{range}` over nothing, or over a
// null item, hands to its body).

import {
  JsonTooLargeError,
  GoFloat,
  compareGoStrings,
  goJson,
  goJsonCached,
  goSprint,
  isJsonObject,
  sortedKeys,
} from "../go-values.js";
import { escapeJsonText, escapeTerminal } from "../terminal-text.js";
import type { ArrayNode, FilterNode, ListNode, Node } from "./nodes.js";
import { JsonPathError } from "./parser.js";

export const MAX_RANGE_DEPTH = 100;
export const MAX_STEPS = 5_000_000;
export const MAX_OUTPUT = 64 * 1024 * 1024;

type Value = unknown;

/** An evaluation error with what the failing step returned, as Go returns both. */
class EvalError extends JsonPathError {
  constructor(
    message: string,
    readonly partial: Value[],
  ) {
    super(message);
  }
}

/** A limit of ours was reached: never swallowed, unlike Go errors inside an exists-filter. */
export class JsonPathLimitError extends JsonPathError {}

export interface EvaluateOptions {
  /** kubectl get's --allow-missing-template-keys, true by default. */
  allowMissingKeys: boolean;
}

export class Evaluator {
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode = -1;
  private steps = 0;
  /** The result lists that are the template's own text (`{"\t"}`, text between actions). */
  private readonly templateText = new WeakSet<Value[]>();

  constructor(
    private readonly root: ListNode,
    private readonly opts: EvaluateOptions,
  ) {}

  /** client-go's FindResults: one list of values per top-level node that prints. */
  findResults(data: Value, start = 0): Value[][] {
    const nodes = this.root.nodes;
    const full: Value[][] = [];
    for (let i = start; i < nodes.length; i++) {
      const results = this.walk([data], nodes[i]!);
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange -= 1;
        this.lastEndNode = i;
        break;
      }
      if (this.beginRange > 0) {
        this.beginRange -= 1;
        this.inRange += 1;
        if (this.inRange > MAX_RANGE_DEPTH) {
          throw new JsonPathLimitError(`ranges are nested more than ${MAX_RANGE_DEPTH} deep`);
        }
        this.runRange(results, i + 1, full);
        this.inRange -= 1;
        for (let k = i + 1; k < nodes.length; k++) {
          if (k === this.lastEndNode) {
            i = k;
            break;
          }
        }
        continue;
      }
      if (printsTemplateText(nodes[i]!)) this.templateText.add(results);
      full.push(results);
    }
    return full;
  }

  /** The body of a `{range}` once per value, or once over nothing to find its `{end}`. */
  private runRange(values: Value[], body: number, full: Value[][]): void {
    if (values.length === 0) {
      this.findResults(undefined, body);
      return;
    }
    for (const value of values) {
      this.spend(1);
      // Go passes value.Interface(): a null item becomes an invalid value.
      full.push(...this.findResults(value === null ? undefined : value, body));
    }
  }

  /** Whether a list of results is text of the template itself, not values from the data. */
  isTemplateText(results: Value[]): boolean {
    return this.templateText.has(results);
  }

  private spend(n: number): void {
    this.steps += n;
    if (this.steps > MAX_STEPS) {
      throw new JsonPathLimitError(`template needs more than ${MAX_STEPS} steps on this input`);
    }
  }

  walk(values: Value[], node: Node): Value[] {
    this.spend(values.length + 1);
    switch (node.type) {
      case "list":
        return this.evalList(values, node);
      case "text":
        return [node.text];
      case "field":
        return this.evalField(values, node.name);
      case "array":
        return this.evalArray(values, node);
      case "filter":
        return this.evalFilter(values, node);
      case "int":
        return values.map(() => node.value);
      case "float":
        return values.map(() => new GoFloat(node.value));
      case "bool":
        return values.map(() => node.value);
      case "wildcard":
        return values.flatMap((v) => children(v));
      case "recursive":
        return this.evalRecursive(values);
      case "union":
        return this.evalUnion(values, node.lists);
      case "identifier":
        return this.evalIdentifier(values, node.name);
    }
  }

  private evalList(values: Value[], list: ListNode): Value[] {
    let cur = values;
    for (const node of list.nodes) cur = this.walk(cur, node);
    return cur;
  }

  private evalIdentifier(input: Value[], name: string): Value[] {
    if (name === "range") {
      this.beginRange += 1;
      return input;
    }
    if (name === "end") {
      if (this.inRange > 0) {
        this.endRange += 1;
        return [];
      }
      throw new EvalError("not in range, nothing to end", []);
    }
    throw new EvalError(`unrecognized identifier ${name}`, input);
  }

  private evalField(input: Value[], name: string): Value[] {
    const results: Value[] = [];
    if (input.length === 0) return results;
    for (const v of input) {
      if (isJsonObject(v) && Object.hasOwn(v, name)) results.push(v[name]);
    }
    if (results.length === 0 && !this.opts.allowMissingKeys) {
      throw new EvalError(`${name} is not found`, results);
    }
    return results;
  }

  private evalArray(input: Value[], node: ArrayNode): Value[] {
    const result: Value[] = [];
    for (const v of input) {
      if (v === null || v === undefined) continue;
      if (!Array.isArray(v)) throw new EvalError(`${goTypeName(v)} is not array or slice`, input);
      const [p0, p1, p2] = node.params.map((p) => ({ ...p }));
      const len = v.length;
      if (!p0!.known) p0!.value = 0;
      if (p0!.value < 0) p0!.value += len;
      if (!p1!.known) p1!.value = len;
      if (p1!.value < 0 || (p1!.value === 0 && p1!.derived)) p1!.value += len;
      // "if you're requesting zero elements, allow it through" (and stop, as Go does)
      if (p1!.value === p0!.value) return result;
      if (p0!.value >= len || p0!.value < 0) {
        throw new EvalError(`array index out of bounds: index ${p0!.value}, length ${len}`, input);
      }
      if (p1!.value > len || p1!.value < 0) {
        throw new EvalError(
          `array index out of bounds: index ${p1!.value - 1}, length ${len}`,
          input,
        );
      }
      if (p0!.value > p1!.value) {
        throw new EvalError(
          `starting index ${p0!.value} is greater than ending index ${p1!.value}`,
          input,
        );
      }
      let step = 1;
      if (p2!.known) {
        if (p2!.value <= 0) throw new EvalError("step must be > 0", input);
        step = p2!.value;
      }
      for (let i = p0!.value; i < p1!.value; i += step) result.push(v[i]);
      this.spend(result.length);
    }
    return result;
  }

  private evalUnion(input: Value[], lists: ListNode[]): Value[] {
    const result: Value[] = [];
    for (const list of lists) {
      try {
        result.push(...this.evalList(input, list));
      } catch (err) {
        if (err instanceof EvalError) throw new EvalError(err.message, input);
        throw err;
      }
    }
    return result;
  }

  /** Every container under each input, in pre-order (Go's evalRecursive, without recursion). */
  private evalRecursive(input: Value[]): Value[] {
    const result: Value[] = [];
    const stack: Value[] = [...input].reverse();
    while (stack.length) {
      const v = stack.pop();
      const kids = children(v);
      this.spend(1);
      if (kids.length === 0) continue;
      result.push(v);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
    return result;
  }

  private evalFilter(input: Value[], node: FilterNode): Value[] {
    const results: Value[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) {
        throw new EvalError(`${goSprint(v)} is not array or slice and cannot be filtered`, input);
      }
      for (const item of v) {
        if (this.filterPasses(item, node, input, results)) results.push(item);
      }
    }
    return results;
  }

  private filterPasses(item: Value, node: FilterNode, input: Value[], results: Value[]): boolean {
    if (node.operator === "exists") {
      try {
        return this.evalList([item], node.left).length > 0;
      } catch (err) {
        if (err instanceof EvalError) return err.partial.length > 0;
        throw err;
      }
    }
    const left = this.single(
      this.rethrowWith(() => this.evalList([item], node.left), input),
      input,
    );
    if (left.length === 0) return false;
    const right = this.single(
      this.rethrowWith(() => this.evalList([item], node.right), input),
      input,
    );
    if (right.length === 0) return false;
    try {
      return compare(node.operator, left[0], right[0]);
    } catch (err) {
      if (err instanceof EvalError) throw new EvalError(err.message, results);
      throw err;
    }
  }

  private rethrowWith(f: () => Value[], input: Value[]): Value[] {
    try {
      return f();
    } catch (err) {
      if (err instanceof EvalError) throw new EvalError(err.message, input);
      throw err;
    }
  }

  private single(values: Value[], input: Value[]): Value[] {
    if (values.length > 1) throw new EvalError("can only compare one element at a time", input);
    return values;
  }
}

/** What `*` and `..` see under a value: map values (sorted keys), items, or a string's bytes. */
function children(v: Value): Value[] {
  if (Array.isArray(v)) return v;
  if (isJsonObject(v)) return sortedKeys(v).map((k) => v[k]);
  if (typeof v === "string") return [...Buffer.from(v, "utf8")];
  return [];
}

/** The Go type name of a decoded JSON value, for client-go's messages. */
function goTypeName(v: Value): string {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (v instanceof GoFloat) return "float64";
  if (typeof v === "number") return Number.isInteger(v) ? "int64" : "float64";
  if (isJsonObject(v)) return "map[string]interface {}";
  return "interface {}";
}

type BasicKind = "bool" | "int" | "float" | "string";

function basicKind(v: Value): BasicKind {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (v instanceof GoFloat) return "float";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  throw new EvalError("invalid type for comparison", []);
}

const numeric = (v: Value): number => (v instanceof GoFloat ? v.value : (v as number));

function goEqual(a: Value, b: Value): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb) throw new EvalError("incompatible types for comparison", []);
  if (ka === "int" || ka === "float") return numeric(a) === numeric(b);
  return a === b;
}

function goLess(a: Value, b: Value): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb) throw new EvalError("incompatible types for comparison", []);
  if (ka === "bool") throw new EvalError("invalid type for comparison", []);
  if (ka === "string") return compareGoStrings(a as string, b as string) < 0;
  return numeric(a) < numeric(b);
}

/** The comparisons of Go's text/template as client-go's fork implements them. */
function compare(operator: string, a: Value, b: Value): boolean {
  switch (operator) {
    case "<":
      return goLess(a, b);
    case ">":
      return !(goLess(a, b) || goEqual(a, b));
    case "==":
      return goEqual(a, b);
    case "!=":
      return !goEqual(a, b);
    case "<=":
      return goLess(a, b) || goEqual(a, b);
    case ">=":
      return !goLess(a, b);
    default:
      throw new EvalError(`unrecognized filter operator ${operator}`, []);
  }
}

/** client-go's evalToText for one value that is not a map or a list. */
function toText(v: Value): string {
  if (v === undefined) return "<no value>";
  if (v === null) return "null";
  return goSprint(v);
}

/** A node whose results are its own text: a text node, or a list that ends in one. */
function printsTemplateText(node: Node): boolean {
  if (node.type === "text") return true;
  if (node.type !== "list") return false;
  const last = node.nodes.at(-1);
  return last !== undefined && printsTemplateText(last);
}

/**
 * client-go's PrintResults for every result list: each value as text (maps and lists as compact
 * JSON), separated by a space; with `asJson` (-o jsonpath-as-json) each list as an indented JSON
 * array and a newline. With `fromData` (the kubectl plugin's terminal output, docs/decisions.md
 * OAK-30), what comes from the data is escaped: strings whole with escapeTerminal, JSON with
 * escapeJsonText; the template's own text is printed as written.
 */
export function printResults(
  all: Value[][],
  asJson: boolean,
  fromData?: (results: Value[]) => boolean,
): string {
  const text = (results: Value[], s: string) => (fromData?.(results) ? escapeTerminal(s) : s);
  const jsonText = (results: Value[], s: string) => (fromData?.(results) ? escapeJsonText(s) : s);
  const out: string[] = [];
  let size = 0;
  const cache = new Map<object, string>();
  const json = (v: unknown, indent = "") => {
    if (indent === "") return goJsonCached(v, cache);
    try {
      return goJson(v, indent, MAX_OUTPUT - size);
    } catch (err) {
      if (err instanceof JsonTooLargeError) {
        throw new JsonPathLimitError(`template prints more than ${MAX_OUTPUT} characters`);
      }
      throw err;
    }
  };
  const add = (text: string) => {
    size += text.length;
    if (size > MAX_OUTPUT) {
      throw new JsonPathLimitError(`template prints more than ${MAX_OUTPUT} characters`);
    }
    out.push(text);
  };
  for (const results of all) {
    if (asJson) {
      add(
        `${jsonText(
          results,
          json(
            results.map((v) => (v === undefined ? null : v)),
            "    ",
          ),
        )}\n`,
      );
      continue;
    }
    results.forEach((v, i) => {
      add(
        Array.isArray(v) || isJsonObject(v) ? jsonText(results, json(v)) : text(results, toText(v)),
      );
      if (i !== results.length - 1) add(" ");
    });
  }
  return out.join("");
}
