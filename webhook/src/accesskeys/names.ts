// Name syntax of Kubernetes objects, with kube's exact messages (k8s.io/apimachinery v0.36.0:
// pkg/util/validation/validation.go for DNS names, pkg/api/validate/content/kube.go for label keys
// and values, apiserver's path-segment rule). Custom resources such as OwnedAccessKey use
// NameIsDNSSubdomain, and OwnedAccessKey is cluster-scoped (docs/reference.md#kube-object-names).

import { forbidden, invalid, required, type FieldError } from "../shared/field-errors.js";
import type { ObjectMeta } from "../shared/ownedaccesskey.js";
import { isAbsent, wrongType } from "./json-fields.js";

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;

const LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_MAX = 63;
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MAX = 63;

/** Go measures strings in UTF-8 bytes (`len(s)`). */
const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

// kube 1.36 has two MaxLenError functions: util/validation says "characters" (object names),
// validate/content says "bytes" (label keys, label values and their DNS prefix).
const maxLenChars = (n: number): string => `must be no more than ${n} characters`;
const maxLenBytes = (n: number): string => `must be no more than ${n} bytes`;

/** apimachinery's RegexError: `msg (e.g. 'a' or 'b', regex used for validation is 're')`. */
function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  const shown = examples.map((e) => `'${e}', `).join(" or ");
  return `${msg} (e.g. ${shown}regex used for validation is '${re}')`;
}

const DNS1123_SUBDOMAIN_ERROR = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123_SUBDOMAIN_FMT,
  "example.com",
);
const DNS1123_LABEL_ERROR = regexError(
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  DNS1123_LABEL_FMT,
  "my-name",
  "123-abc",
);
const LABEL_KEY_ERROR = regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc");
const LABEL_VALUE_ERROR = regexError(
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LABEL_VALUE_FMT,
  "MyValue",
  "my_value",
  "12345",
);

function subdomainErrors(value: string, maxLen: (n: number) => string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(DNS1123_SUBDOMAIN_ERROR);
  return errs;
}

/** IsDNS1123Subdomain: at most 253 characters, lowercase labels joined by dots. */
export function dns1123SubdomainErrors(value: string): string[] {
  return subdomainErrors(value, maxLenChars);
}

export function isDNS1123Subdomain(value: string): boolean {
  return dns1123SubdomainErrors(value).length === 0;
}

/** IsDNS1123Label: at most 63 characters, no dots. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenChars(DNS1123_LABEL_MAX));
  if (!DNS1123_LABEL_RE.test(value)) {
    // "It was a valid subdomain and not a valid label. Since we already checked length, it must
    // be dots."
    errs.push(DNS1123_SUBDOMAIN_RE.test(value) ? "must not contain dots" : DNS1123_LABEL_ERROR);
  }
  return errs;
}

function prefixErrors(prefix: string): string[] {
  if (prefix === "") return ["prefix part must be non-empty"];
  return subdomainErrors(prefix, maxLenBytes).map((m) => `prefix part ${m}`);
}

/**
 * IsQualifiedName (= content.IsLabelKey): an optional DNS-subdomain prefix and `/`, then a name of
 * at most 63 bytes. Used for label keys, annotation keys and finalizers.
 */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split("/");
  if (parts.length > 2) {
    return [
      `a valid label key ${LABEL_KEY_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const errs = parts.length === 2 ? prefixErrors(parts[0]!) : [];
  if (name === "") errs.push("name part must be non-empty");
  else if (byteLength(name) > LABEL_KEY_MAX) errs.push(`name part ${maxLenBytes(LABEL_KEY_MAX)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${LABEL_KEY_ERROR}`);
  return errs;
}

/** IsValidLabelValue: empty, or at most 63 bytes of label-key characters. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenBytes(LABEL_VALUE_MAX));
  if (!LABEL_VALUE_RE.test(value)) errs.push(LABEL_VALUE_ERROR);
  return errs;
}

/**
 * kube's maskTrailingDash: a generateName may end in `-` (the random suffix follows). Quirk kept on
 * purpose: it replaces the last *two* characters with `a`, so `x.-` passes as a prefix even though
 * every name generated from it is invalid (the name itself is validated again afterwards).
 */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name;
}

/** apiserver's IsValidPathSegmentName / Prefix: the name is a URL path segment. */
export function pathSegmentErrors(name: string, prefix: boolean): string[] {
  if (!prefix && (name === "." || name === "..")) return [`may not be '${name}'`];
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/**
 * NameIsDNSSubdomain, then the path-segment rule. kube runs the latter only when the resource's own
 * name rule passed (rest.BeforeCreate), so it can only add messages for names a DNS check allows.
 */
function nameErrors(value: string, prefix: boolean): string[] {
  const dns = dns1123SubdomainErrors(prefix ? maskTrailingDash(value) : value);
  return dns.length ? dns : pathSegmentErrors(value, prefix);
}

function stringField(meta: ObjectMeta, key: "name" | "generateName" | "namespace"): unknown {
  return Object.hasOwn(meta, key) ? (meta[key] as unknown) : undefined;
}

/**
 * metadata.name, metadata.generateName and metadata.namespace (ValidateObjectMetaAccessor). On
 * CREATE a missing name is fine when generateName is set (the name is generated later); on UPDATE
 * the stored object always has one.
 */
export function validateName(meta: ObjectMeta, forCreate: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringField(meta, "name");
  const generateName = stringField(meta, "generateName");
  const namespace = stringField(meta, "namespace");
  if (!isAbsent(generateName) && typeof generateName !== "string") {
    errs.push(wrongType("metadata.generateName", generateName, "string"));
  } else if (generateName) {
    for (const msg of nameErrors(generateName, true)) {
      errs.push(invalid("metadata.generateName", generateName, msg));
    }
  }
  if (!isAbsent(name) && typeof name !== "string") {
    errs.push(wrongType("metadata.name", name, "string"));
  } else if (name) {
    for (const msg of nameErrors(name, false)) errs.push(invalid("metadata.name", name, msg));
  } else if (!forCreate || !generateName) {
    errs.push(required("metadata.name", "name or generateName is required"));
  }
  if (!isAbsent(namespace) && typeof namespace !== "string") {
    errs.push(wrongType("metadata.namespace", namespace, "string"));
  } else if (namespace) {
    // OwnedAccessKey is cluster-scoped.
    errs.push(forbidden("metadata.namespace", "not allowed on this type"));
  }
  return errs;
}
