// What `kubectl get` would print on stdout for OwnedAccessKeys, in every -o format, following
// k8s.io/kubectl/pkg/cmd/get and k8s.io/cli-runtime/pkg/printers:
//   - several objects (or a list request) print as one kind: List for json, yaml and jsonpath,
//     whose template then sees {"apiVersion":"v1","items":[…],"kind":"List","metadata":{…}};
//   - --sort-by sorts a list (never a single named object; a table only from two rows on);
//   - json is Go's MarshalIndent with 4 spaces (kubectl's JSONPrinter), keys sorted;
//   - json and yaml leave out metadata.managedFields unless asked (--show-managed-fields);
//   - jsonpath runs with missing keys allowed (kubectl get's default).
// Secrets: every printed object is masked by value first (mask.ts, docs/decisions.md OAK-33), in
// every format, unless showKey; tables and describe never print spec.key; error messages are
// always built from the masked object.
// Terminals (docs/decisions.md OAK-30): text formats (tables, -o name, custom-columns, jsonpath)
// escape every string from the object with escapeTerminal where it becomes text; -o json writes
// DEL, C1 and bidirectional characters as \u escapes too, and -o yaml double-quotes and escapes
// them.

import { goQuote } from "../../../webhook/src/shared/go-quote.js";
import { OutputError, parseErrorMessage, type OutputFormat } from "./format.js";
import { TABLE_FIELDS, tableHeaders, tableRow } from "./access-key-table.js";
import { printCustomColumns } from "./custom-columns.js";
import { goJson, isJsonObject } from "./go-values.js";
import { goYaml } from "./go-yaml.js";
import { JsonPathError, JsonPathTemplate } from "./jsonpath/template.js";
import { maskSecrets, maskText, secretValues, type MaskOptions } from "./mask.js";
import { sortObjects } from "./sort-by.js";
import { formatColumns } from "./tabwriter.js";
import { escapeJsonText, escapeTerminal } from "./terminal-text.js";

export { OutputError } from "./format.js";
export { describeAccessKey } from "./describe.js";
export { keyStatus } from "./key-status.js";

export interface PrintOptions {
  format: OutputFormat;
  noHeaders?: boolean;
  /** kubectl's --sort-by, a JSONPath expression such as .metadata.name or '{.spec.ttl}'. */
  sortBy?: string;
  /** Every format masks the key wherever it appears unless this is true (--show-key). */
  showKey?: boolean;
  /** Keys the plugin generated in this run: masked like spec.key. */
  generated?: readonly string[];
  /** "now" in ms since the epoch, for AGE / EXPIRES / STATUS; defaults to Date.now(). */
  now?: number;
  /** e.g. "ownedaccesskey.management.loft.sh", for -o name (prints "<this>/<name>"). */
  kindGroup: string;
  /** kubectl's --show-managed-fields: -o json|yaml drop metadata.managedFields unless true. */
  showManagedFields?: boolean;
  /**
   * --output-watch-events: the watch event's type (ADDED, MODIFIED, DELETED). Each object is
   * printed as kubectl prints a metav1.WatchEvent: an EVENT column first in a table, else the
   * format applied to {type, object} (-o json on one line, as kubectl's JSONPrinter writes a
   * WatchEvent; managedFields kept, as kubectl's printer finds no metadata to drop them from);
   * -o name prints the object's name.
   */
  watchEvent?: string;
}

/** The kind: List kubectl prints for a list request or several names. */
export function listOf(items: readonly unknown[]): Record<string, unknown> {
  return { apiVersion: "v1", items: [...items], kind: "List", metadata: { resourceVersion: "" } };
}

/**
 * The text kubectl would print on stdout for these OwnedAccessKeys (objects as the API returns
 * them). `asList`: the request was a list or several names. Throws OutputError for a bad template
 * or sort key.
 */
export function printObjects(
  objects: readonly unknown[],
  opts: PrintOptions,
  asList: boolean,
): string {
  const list = asList || objects.length !== 1;
  const { format } = opts;
  if (format.kind === "table") return printTable(objects, opts, format.wide);
  if (opts.watchEvent !== undefined) return printWatchEvents(objects, opts, opts.watchEvent);
  const sorted = list && opts.sortBy ? sorting(objects, opts.sortBy, false, opts) : [...objects];
  const shown = sorted.map((o) => maskSecrets(o, maskOptions(opts)));
  const data = list ? listOf(shown) : shown[0];
  switch (format.kind) {
    case "json":
      return `${escapeJsonText(goJson(omitManagedFields(data, opts), "    "))}\n`;
    case "yaml":
      return goYaml(omitManagedFields(data, opts));
    case "name":
      return shown
        .map((o) => `${opts.kindGroup}/${escapeTerminal(objectName(o)) || "<unknown>"}\n`)
        .join("");
    case "jsonpath":
      return runTemplate(format.template, data, sorted, list, opts, format.asJson ?? false);
    case "custom-columns":
      return printCustomColumns(format.spec, shown, opts.noHeaders ?? false);
  }
}

/** Every object as a watch event of `type`, in the format of `opts` (not a table). */
function printWatchEvents(objects: readonly unknown[], opts: PrintOptions, type: string): string {
  const { format } = opts;
  return objects
    .map((o) => {
      const object = maskSecrets(o, maskOptions(opts));
      const event = { type, object };
      switch (format.kind) {
        case "json":
          // Go's struct order (type, then object), on one line.
          return `${escapeJsonText(`{"type":${goJson(type)},"object":${goJson(object)}}`)}\n`;
        case "yaml":
          return goYaml(event);
        case "name":
          return `${opts.kindGroup}/${escapeTerminal(objectName(object)) || "<unknown>"}\n`;
        case "jsonpath":
          return runTemplate(format.template, event, [o], false, opts, format.asJson ?? false);
        case "custom-columns":
          return printCustomColumns(format.spec, [event], opts.noHeaders ?? false);
        case "table":
          throw new Error("tables print watch events in printTable");
      }
    })
    .join("");
}

/** kubectl's tableprinter pads the event types to one width. */
const EVENT_TYPES: Readonly<Record<string, string>> = {
  ADDED: "ADDED   ",
  MODIFIED: "MODIFIED",
  DELETED: "DELETED ",
  ERROR: "ERROR   ",
};

/**
 * sortObjects on the objects as stored; its error may quote a value (a filter on a map prints the
 * map), so the message is masked and escaped whole (OAK-33, OAK-30).
 */
function sorting(
  objects: readonly unknown[],
  sortBy: string,
  table: boolean,
  opts: PrintOptions,
): unknown[] {
  try {
    return sortObjects(objects, sortBy, table);
  } catch (err) {
    if (!(err instanceof OutputError)) throw err;
    const secrets = [...new Set(objects.flatMap((o) => secretValues(o, maskOptions(opts))))].sort(
      (a, b) => b.length - a.length,
    );
    throw new OutputError(escapeTerminal(maskText(err.message, secrets)));
  }
}

function maskOptions(opts: PrintOptions): MaskOptions {
  return { showKey: opts.showKey ?? false, generated: opts.generated ?? [] };
}

/** cli-runtime's OmitManagedFieldsPrinter, which kubectl puts in front of -o json and -o yaml. */
function omitManagedFields(data: unknown, opts: PrintOptions): unknown {
  if (opts.showManagedFields || !isJsonObject(data)) return data;
  const omit = (o: unknown) => {
    if (!isJsonObject(o) || !isJsonObject(o["metadata"]) || !("managedFields" in o["metadata"])) {
      return o;
    }
    const metadata = { ...o["metadata"] };
    delete metadata["managedFields"];
    return { ...o, metadata };
  };
  if (data["kind"] === "List" && Array.isArray(data["items"])) {
    return { ...data, items: data["items"].map(omit) };
  }
  return omit(data);
}

function objectName(o: unknown): string {
  const meta = (o as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof meta?.name === "string" ? meta.name : "";
}

function printTable(objects: readonly unknown[], opts: PrintOptions, wide: boolean): string {
  // kubectl sorts the table only when it has more than one row.
  const sorted =
    opts.sortBy && objects.length > 1 ? sorting(objects, opts.sortBy, true, opts) : objects;
  // kubectl prints nothing, not even the headers, for no rows ("No resources found" is stderr's).
  if (sorted.length === 0) return "";
  const now = opts.now ?? Date.now();
  // The status is read from the object as stored (a weak key is Weak), the cells from the masked one.
  const event = opts.watchEvent;
  const rows = sorted.map((o) => {
    const row = tableRow(o, wide, now, maskSecrets(o, maskOptions(opts), TABLE_FIELDS));
    return event === undefined ? row : [EVENT_TYPES[event] ?? escapeTerminal(event), ...row];
  });
  const headers = event === undefined ? tableHeaders(wide) : ["EVENT", ...tableHeaders(wide)];
  return formatColumns(opts.noHeaders ? rows : [headers, ...rows]);
}

function runTemplate(
  text: string,
  data: unknown,
  sorted: readonly unknown[],
  list: boolean,
  opts: PrintOptions,
  asJson: boolean,
): string {
  let template: JsonPathTemplate;
  try {
    template = JsonPathTemplate.parse(text);
  } catch (err) {
    if (err instanceof JsonPathError) throw new OutputError(parseErrorMessage(text, err));
    throw err;
  }
  try {
    return template.execute(data, { asJson, escapeData: true });
  } catch (err) {
    if (!(err instanceof JsonPathError)) throw err;
    // With --show-key the message could quote the key (filters print the value they refuse):
    // take it from a run over the masked object instead.
    let message = err.message;
    if (opts.showKey) {
      const masked = sorted.map((o) => maskSecrets(o, { ...maskOptions(opts), showKey: false }));
      try {
        template.execute(list ? listOf(masked) : masked[0], { asJson });
      } catch (again) {
        message = again instanceof JsonPathError ? again.message : "the template failed";
      }
    }
    // kubectl also prints the whole object it gave the engine; that would show the key.
    throw new OutputError(
      `error executing jsonpath ${goQuote(text)}: Error executing template: ${escapeTerminal(message)}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t${text}`,
    );
  }
}
