// The value of -o/--output, parsed once at the edge as kubectl's PrintFlags do
// (k8s.io/cli-runtime/pkg/genericclioptions), with kubectl's error texts.

import { MAX_TEMPLATE_LENGTH } from "./jsonpath/parser.js";
import { JsonPathError, JsonPathTemplate } from "./jsonpath/template.js";

export type OutputFormat =
  | { kind: "table"; wide: boolean }
  | { kind: "json" }
  | { kind: "yaml" }
  | { kind: "name" }
  /** -o jsonpath=…; `asJson` for -o jsonpath-as-json=… (results as indented JSON arrays). */
  | { kind: "jsonpath"; template: string; asJson?: boolean }
  | { kind: "custom-columns"; spec: string };

/** A client-side printing error; the command prints it as `error: <message>` and exits 1. */
export class OutputError extends Error {
  override name = "OutputError";
}

/** The formats we print, in kubectl's order for its "allowed formats are" message. */
export const ALLOWED_FORMATS = [
  "custom-columns",
  "json",
  "jsonpath",
  "jsonpath-as-json",
  "name",
  "wide",
  "yaml",
] as const;

/** Parses the value of -o/--output; undefined (or "") means the table. */
export function parseOutput(value: string | undefined): OutputFormat {
  if (value === undefined || value === "") return { kind: "table", wide: false };
  switch (value) {
    case "wide":
      return { kind: "table", wide: true };
    case "json":
    case "yaml":
    case "name":
      return { kind: value };
  }
  const eq = value.indexOf("=");
  const name = eq < 0 ? value : value.slice(0, eq);
  const arg = eq < 0 ? "" : value.slice(eq + 1);
  if (name === "jsonpath" || name === "jsonpath-as-json") {
    if (arg === "") throw new OutputError("template format specified but no template given");
    checkTemplate(arg);
    return name === "jsonpath"
      ? { kind: "jsonpath", template: arg }
      : { kind: "jsonpath", template: arg, asJson: true };
  }
  if (name === "custom-columns") {
    if (arg === "") {
      throw new OutputError("custom-columns format specified but no custom columns given");
    }
    return { kind: "custom-columns", spec: arg };
  }
  throw new OutputError(
    `unable to match a printer suitable for the output format "${value}", allowed formats are: ${ALLOWED_FORMATS.join(",")}`,
  );
}

/**
 * kubectl's `error parsing jsonpath <template>, <reason>`; a template over the length limit is not
 * echoed back (it may be megabytes).
 */
export function parseErrorMessage(template: string, err: JsonPathError): string {
  if (template.length > MAX_TEMPLATE_LENGTH) return `error parsing jsonpath: ${err.message}`;
  return `error parsing jsonpath ${template}, ${err.message}`;
}

/** kubectl refuses a template it cannot parse before it sends any request; so do we. */
function checkTemplate(template: string): void {
  try {
    JsonPathTemplate.parse(template);
  } catch (err) {
    if (err instanceof JsonPathError) throw new OutputError(parseErrorMessage(template, err));
    throw err;
  }
}
