// metadata.labels and metadata.annotations (docs/reference.md#kube-labels-annotations):
// metav1validation.ValidateLabels and apimachinery's ValidateAnnotations. Keys come from the
// client, so the maps are only read through Object.entries: a `__proto__` key is an ordinary
// (invalid) key here.

import { invalid, tooLong, type FieldError } from "../shared/field-errors.js";
import { isAbsent, isObject, wrongType } from "./json-fields.js";
import { labelValueErrors, qualifiedNameErrors } from "./names.js";

/** apimachinery's TotalAnnotationSizeLimitB: 256 KiB over all keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

/** Label keys are qualified names; values are at most 63 bytes of label characters. */
export function validateLabels(labels: unknown): FieldError[] {
  const path = "metadata.labels";
  if (isAbsent(labels)) return [];
  if (!isObject(labels)) return [wrongType(path, labels, "object")];
  return Object.entries(labels).flatMap(([key, value]) => [
    ...qualifiedNameErrors(key).map((msg) => invalid(path, key, msg)),
    ...(typeof value === "string"
      ? labelValueErrors(value).map((msg) => invalid(path, value, msg))
      : [wrongType(`${path}[${key}]`, value, "string")]),
  ]);
}

/**
 * Annotation keys are qualified names checked lower-cased ("case doesn't matter"); all keys and
 * values together may not exceed 262144 bytes.
 */
export function validateAnnotations(annotations: unknown): FieldError[] {
  const path = "metadata.annotations";
  if (isAbsent(annotations)) return [];
  if (!isObject(annotations)) return [wrongType(path, annotations, "object")];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const msg of qualifiedNameErrors(key.toLowerCase())) errs.push(invalid(path, key, msg));
    if (typeof value !== "string") errs.push(wrongType(`${path}[${key}]`, value, "string"));
    total += byteLength(key) + (typeof value === "string" ? byteLength(value) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}
