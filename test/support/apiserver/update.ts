// update (PUT) and patch (PATCH) of an object or its status subresource, in kube-apiserver's
// order: options, the name check (400), the stored object (404), the uid precondition (409),
// mutating admission, the resourceVersion check (409 Conflict, or 422 for a custom resource
// without one), BeforeUpdate (system metadata kept, status and generation by the type's strategy,
// immutable fields: 422), schema validation, validating admission, then storage. An update that
// empties the finalizers of an object being deleted deletes it; one that changes nothing writes
// nothing (no new resourceVersion, no watch event).

import {
  OMIT_VALUE,
  forbidden,
  invalid,
  type FieldError,
} from "../../../webhook/src/api/field-errors.js";
import { newBadRequest, newInvalid, newNotFound } from "../../../webhook/src/api/status.js";
import { OPTIMISTIC_LOCK, conflict, internalError } from "./errors.js";
import { storeNew } from "./create.js";
import { validateLabels } from "./name-validation.js";
import { validateFinalizers, validateOwnerReferences } from "./object-meta.js";
import {
  Admission,
  decodeObject,
  ensureNamespace,
  groupResource,
  wipeSystemFields,
  type ObjectRequest,
  type Reply,
} from "./object-request.js";
import { applyPatch, checkPatchType, mediaType } from "./patch.js";
import type { KubeObject } from "./store.js";
import {
  allowsCreateOnUpdate,
  allowsUnconditionalUpdate,
  deepEqual,
  prepareForUpdate,
  storageKey,
} from "./type-strategy.js";
import { parseWriteOptions, type WriteOptions } from "./write-options.js";

export async function updateObject(req: ObjectRequest): Promise<Reply> {
  const options = parseWriteOptions("UpdateOptions", req.query);
  const obj = decodeObject(req.type, req.body);
  checkName(obj, req.info.name, req.info.namespace);
  const existing = req.store.get(req.type, req.info.namespace, req.info.name);
  if (!existing) {
    if (!allowsCreateOnUpdate(req.type) || req.info.subresource) {
      throw newNotFound(groupResource(req.type), req.info.name);
    }
    wipeSystemFields(obj.metadata);
    ensureNamespace(req.type, req.info.namespace, obj);
    delete obj.metadata["resourceVersion"];
    return storeNew(req, obj, options);
  }
  checkUid(req, obj, existing);
  const admission = new Admission(req, "UPDATE", options.dryRun, options.object);
  const mutated = (await admission.mutate(req.info.name, obj, existing)) ?? obj;
  return finishUpdate(req, existing, mutated, options, admission);
}

export async function patchObject(req: ObjectRequest): Promise<Reply> {
  // The patch handler checks the media type before anything else.
  const contentType = mediaType(req.contentType);
  checkPatchType(req.type, contentType);
  const options = parseWriteOptions("PatchOptions", req.query);
  const existing = req.store.get(req.type, req.info.namespace, req.info.name);
  if (!existing) throw newNotFound(groupResource(req.type), req.info.name);
  const patched = applyPatch(req.type, contentType, existing, req.body);
  checkName(patched, req.info.name, req.info.namespace);
  const admission = new Admission(req, "UPDATE", options.dryRun, {
    ...options.object,
    kind: "UpdateOptions",
  });
  const mutated = (await admission.mutate(req.info.name, patched, existing)) ?? patched;
  return finishUpdate(req, existing, mutated, options, admission);
}

/** handlers.checkName: the object's name must be the URL's; a namespace, if set, the request's. */
function checkName(obj: KubeObject, name: string, namespace: string): void {
  const objName = typeof obj.metadata.name === "string" ? obj.metadata.name : "";
  if (objName !== name) {
    throw newBadRequest(
      `the name of the object (${objName}) does not match the name on the URL (${name})`,
    );
  }
  const objNamespace = obj.metadata.namespace;
  if (namespace && objNamespace && objNamespace !== namespace) {
    throw newBadRequest(
      `the namespace of the object (${objNamespace}) does not match the namespace on the request (${namespace})`,
    );
  }
}

/** A PUT body's uid is a storage precondition: a different one is a 409 from etcd3 storage. */
function checkUid(req: ObjectRequest, obj: KubeObject, existing: KubeObject): void {
  const uid = obj.metadata["uid"];
  if (typeof uid !== "string" || uid === "" || uid === existing.metadata["uid"]) return;
  const key = storageKey(req.type, req.info.namespace, req.info.name);
  const why = `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(existing.metadata["uid"])}`;
  throw conflict(groupResource(req.type), req.info.name, storageError(key, why));
}

/** storage.StorageError's text for an invalid-object error (code 4), as Conflict messages quote it. */
export function storageError(key: string, why: string): string {
  return `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${why}`;
}

async function finishUpdate(
  req: ObjectRequest,
  existing: KubeObject,
  obj: KubeObject,
  options: WriteOptions,
  admission: Admission,
): Promise<Reply> {
  const { type, store, info } = req;
  checkResourceVersion(req, obj, existing);
  ensureNamespace(type, info.namespace, obj);
  let next = prepareForUpdate(type, obj, existing, info.subresource);
  keepSystemFields(next, existing);
  const errs = metadataUpdateErrors(next, existing);
  if (errs.length) throw newInvalid({ group: type.group, kind: type.kind }, info.name, errs);
  next = await req.validateObject(type, next, existing);
  await admission.validate(info.name, next, existing);
  const reply = (body: unknown): Reply => ({ status: 200, body, warnings: admission.warnings });
  if (emptiedFinalizers(next, existing)) {
    if (!options.dryRun) store.remove(type, info.namespace, info.name);
    return reply(next);
  }
  if (deepEqual(next, existing) || options.dryRun) return reply(next);
  return reply(store.put(type, next));
}

/** Unconditional updates take the stored version; otherwise it must match (Conflict). */
function checkResourceVersion(req: ObjectRequest, obj: KubeObject, existing: KubeObject): void {
  const rv = obj.metadata["resourceVersion"];
  if (rv === undefined || rv === null || rv === "") {
    if (!allowsUnconditionalUpdate(req.type)) {
      // The registry reports the parsed uint64 0 with Go's %#v: 0x0.
      const err: FieldError = {
        type: "Invalid",
        field: "metadata.resourceVersion",
        badValue: OMIT_VALUE,
        detail: "0x0: must be specified for an update",
      };
      throw newInvalid({ group: req.type.group, kind: req.type.resource }, req.info.name, [err]);
    }
    obj.metadata["resourceVersion"] = existing.metadata["resourceVersion"];
    return;
  }
  if (typeof rv !== "string" || !/^\d+$/.test(rv)) {
    throw internalError(`strconv.ParseUint: parsing ${JSON.stringify(String(rv))}: invalid syntax`);
  }
  if (rv !== existing.metadata["resourceVersion"]) {
    throw conflict(groupResource(req.type), req.info.name, OPTIMISTIC_LOCK);
  }
}

/** rest.BeforeUpdate: uid if unset, creationTimestamp and deletion fields come from storage. */
function keepSystemFields(next: KubeObject, old: KubeObject): void {
  const meta = next.metadata;
  const was = old.metadata;
  if (!meta["uid"]) meta["uid"] = was["uid"];
  if (was["creationTimestamp"]) meta["creationTimestamp"] = was["creationTimestamp"];
  if (was["deletionTimestamp"]) meta["deletionTimestamp"] = was["deletionTimestamp"];
  if (
    was["deletionGracePeriodSeconds"] !== undefined &&
    meta["deletionGracePeriodSeconds"] === undefined
  ) {
    meta["deletionGracePeriodSeconds"] = was["deletionGracePeriodSeconds"];
  }
}

/** ValidateObjectMetaAccessorUpdate, the parts a client can get wrong. */
function metadataUpdateErrors(next: KubeObject, old: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const meta = next.metadata;
  const was = old.metadata;
  if (was["deletionTimestamp"]) {
    const before = new Set(finalizersOf(old));
    const added = [...new Set(finalizersOf(next))].filter((f) => !before.has(f)).sort();
    if (added.length) {
      const list = `[]string{${added.map((f) => JSON.stringify(f)).join(", ")}}`;
      errs.push(
        forbidden(
          "metadata.finalizers",
          `no new finalizers can be added if the object is being deleted, found new finalizers ${list}`,
        ),
      );
    }
  }
  for (const field of ["name", "namespace", "uid"]) {
    if ((meta[field] ?? "") !== (was[field] ?? "")) {
      errs.push(invalid(`metadata.${field}`, meta[field] ?? "", "field is immutable"));
    }
  }
  errs.push(
    ...validateLabels(meta["labels"]),
    ...validateOwnerReferences(meta["ownerReferences"]),
    ...validateFinalizers(meta["finalizers"]),
  );
  return errs;
}

export function finalizersOf(obj: KubeObject): string[] {
  const f = obj.metadata["finalizers"];
  return Array.isArray(f) ? f.map(String) : [];
}

/** registry.ShouldDeleteDuringUpdate: no finalizers left on an object whose deletion was asked. */
function emptiedFinalizers(next: KubeObject, old: KubeObject): boolean {
  if (finalizersOf(next).length > 0 || !old.metadata["deletionTimestamp"]) return false;
  const grace = old.metadata["deletionGracePeriodSeconds"];
  return grace === undefined || grace === null || grace === 0;
}
