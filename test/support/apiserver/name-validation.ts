// Name, label-key and label-value rules with the texts of apimachinery's util/validation, so a
// rejected name reads exactly as kube-apiserver words it (`metadata.name: Invalid value: "Foo": a
// lowercase RFC 1123 subdomain must consist of ...`).

import { invalid, required, type FieldError } from "../../../webhook/src/api/field-errors.js";

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const whole = (fmt: string): RegExp => new RegExp(`^${fmt}$`);
const dns1123Label = whole(DNS1123_LABEL_FMT);
const dns1123Subdomain = whole(DNS1123_SUBDOMAIN_FMT);
const dns1035Label = whole(DNS1035_LABEL_FMT);
const labelKey = whole(LABEL_KEY_FMT);
const labelValue = whole(LABEL_VALUE_FMT);

/** validation.RegexError, including its `',  or '` double space between examples. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const eg = examples.map((e, i) => `${i > 0 ? " or " : ""}'${e}', `).join("");
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

const maxLen = (n: number): string => `must be no more than ${n} characters`;

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLen(253));
  if (!dns1123Subdomain.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  }
  return errs;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLen(63));
  if (!dns1123Label.test(value)) {
    // A valid subdomain that is not a valid label (length already checked) has dots.
    errs.push(
      dns1123Subdomain.test(value)
        ? "must not contain dots"
        : regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLen(63));
  if (!dns1035Label.test(value)) {
    errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  }
  return errs;
}

/** path.ValidatePathSegmentName: what RBAC objects' names must satisfy. */
export function isPathSegmentName(value: string): string[] {
  if (value === "." || value === "..") return [`may not be '${value}'`];
  const errs: string[] = [];
  for (const bad of ["/", "%"]) if (value.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** content.IsLabelKey: an optional DNS-subdomain prefix and '/', then a name part. */
export function isLabelKey(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const name = parts[parts.length - 1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === "") errs.push("prefix part must be non-empty");
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === "") errs.push("name part must be non-empty");
  else if (name.length > 63) errs.push(`name part ${maxLen(63)}`);
  if (!labelKey.test(name)) {
    errs.push(
      `name part ${regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")}`,
    );
  }
  return errs;
}

export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLen(63));
  if (!labelValue.test(value)) {
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  }
  return errs;
}

export type NameRule = (name: string) => string[];

/**
 * ValidateObjectMeta's name checks: generateName (its trailing dash masked, as kube's prefix mode
 * does) and then the name, one field error per message.
 */
export function validateObjectName(
  meta: { name?: unknown; generateName?: unknown },
  rule: NameRule,
): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = typeof meta.generateName === "string" ? meta.generateName : "";
  if (generateName) {
    const masked = generateName.endsWith("-") ? `${generateName.slice(0, -1)}a` : generateName;
    for (const msg of rule(masked)) errs.push(invalid("metadata.generateName", generateName, msg));
  }
  const name = typeof meta.name === "string" ? meta.name : "";
  if (!name) errs.push(required("metadata.name", "name or generateName is required"));
  else for (const msg of rule(name)) errs.push(invalid("metadata.name", name, msg));
  return errs;
}

/** ValidateLabels: every key a label key and every value a label value. */
export function validateLabels(labels: unknown): FieldError[] {
  if (typeof labels !== "object" || labels === null) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    for (const msg of isLabelKey(k)) errs.push(invalid("metadata.labels", k, msg));
    const value = typeof v === "string" ? v : String(v);
    for (const msg of isLabelValue(value)) errs.push(invalid(`metadata.labels[${k}]`, value, msg));
  }
  return errs;
}
