// The rest of apimachinery's ValidateObjectMeta that applies to every type, custom resources
// included: owner references (objectmeta.go ValidateOwnerReferences) and finalizer names
// (ValidateFinalizers). kube-apiserver runs these after mutating and before validating admission.

import { invalid, type FieldError } from "../../../webhook/src/api/field-errors.js";
import { isLabelKey } from "./name-validation.js";

const REFS = "metadata.ownerReferences";
const FINALIZERS = "metadata.finalizers";
const ORPHAN = "orphan";
const FOREGROUND = "foregroundDeletion";

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/** Each reference names a version, kind, name and uid; at most one is the controller. */
export function validateOwnerReferences(refs: unknown): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let firstController = "";
  for (const raw of refs as unknown[]) {
    const ref = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    errs.push(...referenceErrors(ref));
    if (ref["controller"] !== true) continue;
    const current = `${text(ref["kind"])}/${text(ref["name"])}`;
    if (!firstController) {
      firstController = current;
      continue;
    }
    errs.push(
      invalid(
        REFS,
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
      ),
    );
  }
  return errs;
}

/** validateOwnerReference: the path is the list's, not the entry's, as in kube. */
function referenceErrors(ref: Record<string, unknown>): FieldError[] {
  const apiVersion = text(ref["apiVersion"]);
  // schema.FromAPIVersionAndKind: "g/v" or "v"; the version is what follows the last "/".
  const version = apiVersion.includes("/")
    ? apiVersion.slice(apiVersion.indexOf("/") + 1)
    : apiVersion;
  const errs: FieldError[] = [];
  if (!version) errs.push(invalid(`${REFS}.apiVersion`, apiVersion, "version must not be empty"));
  if (!text(ref["kind"]))
    errs.push(invalid(`${REFS}.kind`, text(ref["kind"]), "kind must not be empty"));
  if (!text(ref["name"]))
    errs.push(invalid(`${REFS}.name`, text(ref["name"]), "name must not be empty"));
  if (!text(ref["uid"]))
    errs.push(invalid(`${REFS}.uid`, text(ref["uid"]), "uid must not be empty"));
  return errs;
}

/**
 * IsQualifiedName: the label-key rules, but apimachinery words the "too many slashes" case for a
 * qualified name rather than a label key.
 */
function isQualifiedName(value: string): string[] {
  return isLabelKey(value).map((m) => m.replace(/^a valid label key /, "a qualified name "));
}

/** Every finalizer is a qualified name; orphan and foregroundDeletion exclude each other. */
export function validateFinalizers(finalizers: unknown): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const names = (finalizers as unknown[]).map(text);
  const errs = names.flatMap((f) => isQualifiedName(f).map((msg) => invalid(FINALIZERS, f, msg)));
  if (names.includes(ORPHAN) && names.includes(FOREGROUND)) {
    errs.push(
      invalid(FINALIZERS, finalizers, `finalizer ${ORPHAN} and ${FOREGROUND} cannot be both set`),
    );
  }
  return errs;
}
