// Field errors with the exact text shapes of k8s.io/apimachinery/pkg/util/validation/field, so
// that messages read the same as kube-apiserver's and people can search for them.

export type FieldErrorType =
  | "NotFound"
  | "Required"
  | "Duplicate"
  | "Invalid"
  | "NotSupported"
  | "Forbidden"
  | "TooLong"
  | "TooMany"
  | "Internal"
  | "TypeInvalid";

/** A value that must not be echoed in messages (secrets, or values too large to be useful). */
export const OMIT_VALUE: unique symbol = Symbol("omit-value");

export interface FieldError {
  readonly type: FieldErrorType;
  /** JSON-path-like field, e.g. `metadata.ownerReferences[0].uid`. */
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail: string;
}

/** metav1.StatusCause */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

const typeText: Record<FieldErrorType, string> = {
  NotFound: "Not found",
  Required: "Required value",
  Duplicate: "Duplicate value",
  Invalid: "Invalid value",
  NotSupported: "Unsupported value",
  Forbidden: "Forbidden",
  TooLong: "Too long",
  TooMany: "Too many",
  Internal: "Internal error",
  TypeInvalid: "Invalid value",
};

const causeType: Record<FieldErrorType, string> = {
  NotFound: "FieldValueNotFound",
  Required: "FieldValueRequired",
  Duplicate: "FieldValueDuplicate",
  Invalid: "FieldValueInvalid",
  NotSupported: "FieldValueNotSupported",
  Forbidden: "FieldValueForbidden",
  TooLong: "FieldValueTooLong",
  TooMany: "FieldValueTooMany",
  Internal: "InternalError",
  TypeInvalid: "FieldValueTypeInvalid",
};

/** Types whose message never carries the bad value (as in apimachinery). */
const valueless = new Set<FieldErrorType>(["Required", "Forbidden", "TooLong", "Internal"]);

export const required = (field: string, detail = ""): FieldError => ({
  type: "Required",
  field,
  detail,
});
export const forbidden = (field: string, detail: string): FieldError => ({
  type: "Forbidden",
  field,
  detail,
});
export const invalid = (field: string, badValue: unknown, detail: string): FieldError => ({
  type: "Invalid",
  field,
  badValue,
  detail,
});
export const typeInvalid = (field: string, badValue: unknown, detail: string): FieldError => ({
  type: "TypeInvalid",
  field,
  badValue,
  detail,
});
export const duplicate = (field: string, badValue: unknown): FieldError => ({
  type: "Duplicate",
  field,
  badValue,
  detail: "",
});
export const tooLong = (field: string, maxLength: number): FieldError => ({
  type: "TooLong",
  field,
  detail: `may not be more than ${maxLength} bytes`,
});
export const notSupported = (
  field: string,
  badValue: unknown,
  supported: readonly string[],
): FieldError => ({
  type: "NotSupported",
  field,
  badValue,
  detail: supported.length ? `supported values: ${supported.map(quote).join(", ")}` : "",
});

function quote(s: string): string {
  return JSON.stringify(s);
}

/** Renders a bad value the way Go's %v / %q would, bounded so a huge value cannot flood a message. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return quote(truncate(value));
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return truncate(text);
}

const MAX_VALUE_CHARS = 256;
function truncate(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}...` : s;
}

/** The error text without the field path (apimachinery's ErrorBody). */
export function errorBody(e: FieldError): string {
  let s = typeText[e.type];
  if (!valueless.has(e.type) && e.badValue !== OMIT_VALUE) s += `: ${formatValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `field: body`, as apimachinery's field.Error.Error(). */
export function fieldErrorText(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

export function toCause(e: FieldError): StatusCause {
  return { reason: causeType[e.type], message: errorBody(e), field: e.field };
}

/** utilerrors.Aggregate: one message alone, several as `[a, b]`, duplicates folded. */
export function aggregateText(errors: readonly FieldError[]): string {
  const texts = [...new Set(errors.map(fieldErrorText))];
  return texts.length === 1 ? texts[0]! : `[${texts.join(", ")}]`;
}
