// kubectl's --sort-by (k8s.io/kubectl/pkg/cmd/get/sorter.go): the first value the JSONPath
// expression finds in each object, compared as kubectl compares decoded JSON values:
//   - an object where the expression finds nothing sorts before the others (kubectl's Less
//     answers true for it even against another such object, which with Go's sort.Sort reverses
//     their order among themselves; go-sort.ts replays Go's algorithm, so we do the same);
//   - null before anything else; numbers numerically; strings that are both Kubernetes
//     quantities (`10`, `1.5Gi`, `100m`) as quantities, other strings byte-wise;
//   - booleans, maps, lists, or a whole number against a fraction are "unsortable", an error;
//   - the expression must find a value in at least one object, else kubectl's
//     `couldn't find any field with path "{.x}" in the list of objects`. (For its table, kubectl
//     1.32 then prints no rows and "No resources found", with exit code 0; we give the error.)
//   - kubectl exits through klog.Fatal for an unsortable value; we throw an OutputError with its
//     message.

import { OutputError } from "./format.js";
import { compareGoStrings, goSprint, isJsonObject } from "./go-values.js";
import { goSort } from "./go-sort.js";
import { JsonPathError, JsonPathTemplate, relaxedJsonPath } from "./jsonpath/template.js";

const QUANTITY =
  /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const SUFFIX: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** A Kubernetes resource.Quantity's value, or undefined when the string is not one. */
export function quantityValue(s: string): number | undefined {
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const number = Number(m[1]);
  const suffix = m[2] ?? "";
  if (suffix === "") return number;
  if (/^[eE]/.test(suffix)) return number * 10 ** Number(suffix.slice(1));
  return number * SUFFIX[suffix]!;
}

class UnsortableError extends Error {}

function goKindName(v: unknown): string {
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "[]interface {}";
  if (isJsonObject(v)) return "map[string]interface {}";
  return "interface";
}

/** kubectl's isLess for two decoded JSON values (Go's reflect.Interface case). */
function isLess(a: unknown, b: unknown): boolean {
  if (a === null && b === null) return false;
  if (a === null) return true;
  if (b === null) return false;
  if (typeof a === "number") {
    if (typeof b === "number" && Number.isInteger(a) === Number.isInteger(b)) return a < b;
    throw new UnsortableError("unsortable interface: interface");
  }
  if (typeof a === "string") {
    if (typeof b !== "string") throw new UnsortableError("unsortable interface: interface");
    const qa = quantityValue(a);
    const qb = qa === undefined ? undefined : quantityValue(b);
    if (qa !== undefined && qb !== undefined) return qa < qb;
    return compareGoStrings(a, b) < 0;
  }
  throw new UnsortableError(`unsortable type: ${goKindName(a)}`);
}

/**
 * The objects in kubectl's --sort-by order. `table`: the human-readable path, where kubectl falls
 * back to the expression as given when it is not a relaxed one.
 */
export function sortObjects(
  objects: readonly unknown[],
  sortBy: string,
  table: boolean,
): unknown[] {
  let field: string;
  try {
    field = relaxedJsonPath(sortBy);
  } catch (err) {
    if (!table || !(err instanceof JsonPathError)) throw asOutputError(err);
    field = sortBy;
  }
  let template: JsonPathTemplate;
  try {
    template = JsonPathTemplate.parse(field);
  } catch (err) {
    throw asOutputError(err, table ? "sorting error: " : "");
  }
  const items = [...objects];
  if (items.length === 0) return items;
  let keys: unknown[][];
  try {
    keys = items.map((o) => template.findResults(o)[0] ?? []);
  } catch (err) {
    throw asOutputError(err);
  }
  if (!keys.some((k) => k.length > 0)) {
    throw new OutputError(`couldn't find any field with path "${field}" in the list of objects`);
  }
  try {
    goSort({
      len: items.length,
      less: (i, j) => {
        const a = keys[i]!;
        const b = keys[j]!;
        if (a.length === 0) return true;
        if (b.length === 0) return false;
        return isLess(a[0], b[0]);
      },
      swap: (i, j) => {
        [items[i], items[j]] = [items[j], items[i]];
        [keys[i], keys[j]] = [keys[j]!, keys[i]!];
      },
    });
  } catch (err) {
    if (err instanceof UnsortableError) {
      // kubectl names the Go type it sorts (%T): the rows' values for a table, else the objects.
      const type = table ? "[][][]reflect.Value" : "*unstructured.Unstructured";
      throw new OutputError(
        `Field ${field} in ${type} is an unsortable type: interface, err: ${err.message}`,
      );
    }
    throw err;
  }
  return items;
}

function asOutputError(err: unknown, prefix = ""): Error {
  if (err instanceof JsonPathError) return new OutputError(`${prefix}${err.message}`);
  return err instanceof Error ? err : new OutputError(goSprint(err));
}
