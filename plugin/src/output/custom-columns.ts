// kubectl's -o custom-columns=HEADER:expr,… (k8s.io/kubectl/pkg/cmd/get/customcolumn.go): each
// expression is made a JSONPath template the relaxed way (`.a.b`, `a.b`, `{.a.b}`), missing keys
// are allowed, a cell is every value found, printed with Go's %v and joined by ",", and <none>
// when nothing is found. Headers are printed as given, once, unless --no-headers. Each value is
// escaped whole for the terminal (docs/decisions.md OAK-30), so a tab or line break of a value
// stays inside its cell, where kubectl lets it move what follows.

import { OutputError } from "./format.js";
import { escapeTerminal } from "./terminal-text.js";
import { goSprint } from "./go-values.js";
import { JsonPathError, JsonPathTemplate, relaxedJsonPath } from "./jsonpath/template.js";
import { tabwrite } from "./tabwriter.js";

interface Column {
  header: string;
  template: JsonPathTemplate;
}

export function parseCustomColumns(spec: string): Column[] {
  if (spec.length === 0) {
    throw new OutputError("custom-columns format specified but no custom columns given");
  }
  return spec.split(",").map((part) => {
    const colon = part.indexOf(":");
    if (colon < 0) {
      throw new OutputError(
        `unexpected custom-columns spec: ${part}, expected <header>:<json-path-expr>`,
      );
    }
    try {
      const expression = relaxedJsonPath(part.slice(colon + 1));
      return { header: part.slice(0, colon), template: JsonPathTemplate.parse(expression) };
    } catch (err) {
      if (err instanceof JsonPathError) throw new OutputError(err.message);
      throw err;
    }
  });
}

function columnCell(template: JsonPathTemplate, object: unknown): string {
  let values: unknown[][];
  try {
    values = template.findResults(object);
  } catch (err) {
    // The message may quote a value: escaped whole, as the cells are.
    if (err instanceof JsonPathError) throw new OutputError(escapeTerminal(err.message));
    throw err;
  }
  if (values.length === 0 || values[0]!.length === 0) return "<none>";
  return values.flatMap((list) => list.map((v) => escapeTerminal(goSprint(v)))).join(",");
}

export function printCustomColumns(
  spec: string,
  objects: readonly unknown[],
  noHeaders: boolean,
): string {
  const columns = parseCustomColumns(spec);
  const rows: string[][] = [];
  if (!noHeaders) rows.push(columns.map((c) => c.header));
  for (const object of objects) rows.push(columns.map((c) => columnCell(c.template, object)));
  return tabwrite(rows.map((row) => `${row.join("\t")}\n`).join(""));
}
