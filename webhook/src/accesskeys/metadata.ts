// All ObjectMeta rules for an OwnedAccessKey write (docs/decisions.md OAK-5; the rules are the
// kube-* sections of docs/reference.md, docs/reference.md#kube-object-names to
// docs/reference.md#kube-deletion-timestamp): what kube's ValidateObjectMetaAccessor (CREATE, and
// UPDATE through the generic registry) and ValidateObjectMetaAccessorUpdate (UPDATE) check, plus
// the deletionTimestamp lifecycle.

import { required, type FieldError } from "../shared/field-errors.js";
import type { ObjectMeta } from "../shared/ownedaccesskey.js";
import { validateDeletionTimestamp } from "./deletion.js";
import { finalizerWarnings, validateFinalizers } from "./finalizers.js";
import { validateGeneration, validateImmutableMetadata } from "./immutable.js";
import { isAbsent, isObject, own, wrongType, type JsonObject } from "./json-fields.js";
import { validateAnnotations, validateLabels } from "./labels-annotations.js";
import { validateManagedFields } from "./managed-fields.js";
import { validateName } from "./names.js";
import { ownerReferenceDuplicatesWarning, validateOwnerReferences } from "./owner-references.js";
import type { KeyRequest } from "./request.js";

const rawMetadata = (obj: unknown): unknown => (isObject(obj) ? own(obj, "metadata") : undefined);

/** The object's metadata when it is a JSON object, else null. */
function metadataOf(obj: unknown): ObjectMeta | null {
  const meta = rawMetadata(obj);
  return isObject(meta) ? (meta as ObjectMeta) : null;
}

const isWrite = (req: KeyRequest): boolean =>
  req.operation === "CREATE" || req.operation === "UPDATE";

/** Rules that read only the new object and are the same on CREATE and UPDATE. */
function contentErrors(meta: JsonObject): FieldError[] {
  return [
    ...validateLabels(own(meta, "labels")),
    ...validateAnnotations(own(meta, "annotations")),
    ...validateOwnerReferences(own(meta, "ownerReferences")),
    ...validateManagedFields(own(meta, "managedFields")),
  ];
}

/** Field errors (all 422 Invalid) for the metadata of a CREATE or UPDATE; none for other verbs. */
export function validateMetadata(req: KeyRequest): FieldError[] {
  if (!isWrite(req)) return [];
  const raw = rawMetadata(req.object);
  if (isAbsent(raw)) return [required("metadata")];
  if (!isObject(raw)) return [wrongType("metadata", raw, "object")];
  const meta = raw as ObjectMeta;
  if (req.operation === "CREATE") {
    return [
      ...validateName(meta, true),
      ...validateGeneration(meta, null),
      ...contentErrors(raw),
      ...validateFinalizers(meta, null),
      ...validateDeletionTimestamp(meta, null),
    ];
  }
  // The stored object is the API server's; if it ever lacks metadata, compare against nothing.
  const old = metadataOf(req.oldObject) ?? {};
  return [
    ...validateName(meta, false),
    ...validateFinalizers(meta, old),
    ...validateImmutableMetadata(meta, old),
    ...validateDeletionTimestamp(meta, old),
    ...contentErrors(raw),
  ];
}

/** AdmissionResponse warnings: finalizers without a domain, duplicate ownerReferences. */
export function metadataWarnings(req: KeyRequest): string[] {
  if (!isWrite(req)) return [];
  const raw = rawMetadata(req.object);
  if (!isObject(raw)) return [];
  const old = req.operation === "UPDATE" ? metadataOf(req.oldObject) : null;
  const duplicates = ownerReferenceDuplicatesWarning(own(raw, "ownerReferences"));
  return [...finalizerWarnings(raw as ObjectMeta, old), ...(duplicates ? [duplicates] : [])];
}
