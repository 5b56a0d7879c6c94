// metav1.LabelSelector, evaluated as metav1.LabelSelectorAsSelector and labels.Selector do:
// matchLabels are `key=value` requirements, matchExpressions use In/NotIn/Exists/DoesNotExist, and
// every requirement must hold. "An empty label selector matches all objects. A null label selector
// matches no objects." A malformed selector is an error value, worded like kube's.

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

export interface CompiledSelector {
  /** True for `{}`: it selects everything without looking at labels. */
  empty: boolean;
  matches(labels: Labels | undefined): boolean;
}

export type SelectorResult = CompiledSelector | { error: string };

type Requirement = (labels: Labels) => boolean;

const has = (labels: Labels, key: string): boolean => Object.hasOwn(labels, key);

/** Go's %#v of a []string, as labels.NewRequirement quotes the offending values. */
const goStrings = (values: readonly string[]): string =>
  values.length === 0
    ? "[]string(nil)"
    : `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;

function requirement(expr: LabelSelectorRequirement): Requirement | { error: string } {
  const values = expr.values ?? [];
  const key = expr.key;
  switch (expr.operator) {
    case "In":
    case "NotIn": {
      if (values.length === 0) {
        return {
          error: `values: Invalid value: ${goStrings(values)}: for 'in', 'notin' operators, values set can't be empty`,
        };
      }
      const set = new Set(values);
      return expr.operator === "In"
        ? (l) => has(l, key) && set.has(l[key]!)
        : // labels.Requirement: NotIn also holds when the label is absent.
          (l) => !has(l, key) || !set.has(l[key]!);
    }
    case "Exists":
    case "DoesNotExist":
      if (values.length > 0) {
        return {
          error: `values: Invalid value: ${goStrings(values)}: values set must be empty for exists and does not exist`,
        };
      }
      return expr.operator === "Exists" ? (l) => has(l, key) : (l) => !has(l, key);
    default:
      return { error: `${JSON.stringify(expr.operator)} is not a valid label selector operator` };
  }
}

/** Compiles a selector; `null`/`undefined` is labels.Nothing() (selects no object). */
export function compileLabelSelector(selector: LabelSelector | null | undefined): SelectorResult {
  if (!selector) return { empty: false, matches: () => false };
  const matchLabels = Object.entries(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  if (matchLabels.length + expressions.length === 0) return { empty: true, matches: () => true };
  const requirements: Requirement[] = matchLabels.map(
    ([key, value]) =>
      (l) =>
        has(l, key) && l[key] === value,
  );
  for (const expr of expressions) {
    const r = requirement(expr);
    if (typeof r !== "function") return r;
    requirements.push(r);
  }
  return { empty: false, matches: (labels) => requirements.every((r) => r(labels ?? {})) };
}

/** Labels of an object (metadata.labels), or none. */
export function labelsOf(obj: { metadata?: unknown } | null | undefined): Labels | undefined {
  const metadata = obj?.metadata;
  if (!metadata || typeof metadata !== "object") return undefined;
  const labels = (metadata as { labels?: unknown }).labels;
  return labels && typeof labels === "object" ? (labels as Labels) : undefined;
}
