// A compiled kubectl JSONPath template: parse once, run on documents.

import { Evaluator, printResults } from "./evaluate.js";
import type { ListNode } from "./nodes.js";
import { JsonPathError, parseTemplate } from "./parser.js";

export interface RunOptions {
  /** kubectl get's --allow-missing-template-keys (true unless told otherwise). */
  allowMissingKeys?: boolean;
}

export interface ExecuteOptions extends RunOptions {
  /** -o jsonpath-as-json: each result list as an indented JSON array. */
  asJson?: boolean;
  /** Escape what comes from the data for a terminal (printResults' `fromData`). */
  escapeData?: boolean;
}

export class JsonPathTemplate {
  private constructor(
    readonly text: string,
    private readonly root: ListNode,
  ) {}

  /** Throws JsonPathError with client-go's message for a template it refuses. */
  static parse(text: string): JsonPathTemplate {
    return new JsonPathTemplate(text, parseTemplate(text));
  }

  /** client-go's FindResults: a list of values per top-level action. */
  findResults(data: unknown, opts: RunOptions = {}): unknown[][] {
    const evaluator = new Evaluator(this.root, { allowMissingKeys: opts.allowMissingKeys ?? true });
    return evaluator.findResults(data);
  }

  /** client-go's Execute: the printed text. */
  execute(data: unknown, opts: ExecuteOptions = {}): string {
    const evaluator = new Evaluator(this.root, { allowMissingKeys: opts.allowMissingKeys ?? true });
    const results = evaluator.findResults(data);
    const fromData = opts.escapeData
      ? (list: unknown[]) => !evaluator.isTemplateText(list)
      : undefined;
    return printResults(results, opts.asJson ?? false, fromData);
  }
}

const RELAXED = /^\{\.?([^{}]+)\}$|^\.?([^{}]+)$/;

/**
 * kubectl's RelaxedJSONPathExpression (custom-columns, --sort-by): `a.b`, `.a.b`, `{a.b}` and
 * `{.a.b}` all become `{.a.b}`.
 */
export function relaxedJsonPath(expression: string): string {
  if (expression.length === 0) return expression;
  const m = RELAXED.exec(expression);
  if (!m) {
    throw new JsonPathError(
      "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
    );
  }
  return `{.${m[1] || m[2]}}`;
}

export { JsonPathError };
