// metadata.finalizers (docs/reference.md#kube-finalizers): apimachinery's ValidateFinalizers and
// ValidateNoNewFinalizers, and the warnings the custom-resource strategy gives for newly added
// finalizers without a domain (apiextensions-apiserver customresource/validator.go).

import { forbidden, invalid, type FieldError } from "../shared/field-errors.js";
import { goQuote } from "../shared/go-quote.js";
import type { ObjectMeta } from "../shared/ownedaccesskey.js";
import { isAbsent, wrongType } from "./json-fields.js";
import { qualifiedNameErrors } from "./names.js";

const PATH = "metadata.finalizers";
const ORPHAN = "orphan";
const FOREGROUND = "foregroundDeletion";
/** metav1.FinalizerOrphanDependents, FinalizerDeleteDependents, corev1.FinalizerKubernetes. */
const STANDARD_FINALIZERS = new Set([ORPHAN, FOREGROUND, "kubernetes"]);

/** Go sorts strings by bytes; UTF-16 order differs for characters above U+FFFF. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

const ownFinalizers = (meta: ObjectMeta | null): unknown =>
  meta && Object.hasOwn(meta, "finalizers") ? meta.finalizers : undefined;

/** The string items of a finalizer list; wrong types are reported by validateFinalizers. */
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((f): f is string => typeof f === "string") : [];

const finalizerList = (meta: ObjectMeta | null): string[] => strings(ownFinalizers(meta));

function addedFinalizers(meta: ObjectMeta, oldMeta: ObjectMeta | null): string[] {
  const old = new Set(finalizerList(oldMeta));
  return [...new Set(finalizerList(meta))].filter((f) => !old.has(f)).sort(byBytes);
}

function isBeingDeleted(meta: ObjectMeta | null): boolean {
  const ts: unknown =
    meta && Object.hasOwn(meta, "deletionTimestamp") ? meta.deletionTimestamp : null;
  return !isAbsent(ts) && ts !== "";
}

function listErrors(value: unknown): FieldError[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return [wrongType(PATH, value, "array")];
  const errs: FieldError[] = [];
  (value as unknown[]).forEach((f, i) => {
    if (typeof f !== "string") errs.push(wrongType(`${PATH}[${i}]`, f, "string"));
    else for (const msg of qualifiedNameErrors(f)) errs.push(invalid(PATH, f, msg));
  });
  const names = strings(value);
  if (names.includes(ORPHAN) && names.includes(FOREGROUND)) {
    errs.push(invalid(PATH, value, `finalizer ${ORPHAN} and ${FOREGROUND} cannot be both set`));
  }
  return errs;
}

/**
 * Qualified names, not both orphan and foregroundDeletion, and (on UPDATE of an object that is
 * being deleted) no new finalizers: "no new finalizers can be added if the object is being
 * deleted". Removing finalizers is always allowed.
 */
export function validateFinalizers(meta: ObjectMeta, oldMeta: ObjectMeta | null): FieldError[] {
  const errs = listErrors(ownFinalizers(meta));
  if (oldMeta && isBeingDeleted(oldMeta)) {
    const added = addedFinalizers(meta, oldMeta);
    if (added.length) {
      // Go's %#v of a []string.
      const shown = `[]string{${added.map(goQuote).join(", ")}}`;
      errs.push(
        forbidden(
          PATH,
          `no new finalizers can be added if the object is being deleted, found new finalizers ${shown}`,
        ),
      );
    }
  }
  return errs;
}

/**
 * kube warns (does not fail) about newly added finalizers without a domain and path; the standard
 * finalizers are exempt. Names that are not qualified names are errors, not warnings, here.
 */
export function finalizerWarnings(meta: ObjectMeta, oldMeta: ObjectMeta | null): string[] {
  return addedFinalizers(meta, oldMeta)
    .filter((f) => !f.includes("/") && !STANDARD_FINALIZERS.has(f))
    .filter((f) => qualifiedNameErrors(f).length === 0)
    .map((f) =>
      f.includes(".")
        ? `${PATH}: ${goQuote(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`
        : `${PATH}: ${goQuote(f)}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`,
    );
}
