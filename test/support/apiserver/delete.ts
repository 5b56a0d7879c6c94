// delete and deletecollection, as kube's generic registry does them for types without graceful
// deletion: DeleteOptions (body, else query) validated, preconditions checked against the stored
// object (409 Conflict), admission (mutating then validating, with the stored object as
// oldObject), then either the object is removed or, while it has finalizers, it only gets
// deletionTimestamp and deletionGracePeriodSeconds 0 (and stays: 200 with the object).

import { newNotFound } from "../../../webhook/src/api/status.js";
import { conflict } from "./errors.js";
import { Admission, groupResource, now, type ObjectRequest, type Reply } from "./object-request.js";
import { apiVersionOf } from "./resources.js";
import { parseSelectors, selects } from "./selectors.js";
import type { KubeObject } from "./store.js";
import { deepEqual, returnsDeletedObject } from "./type-strategy.js";
import { finalizersOf } from "./update.js";
import { parseDeleteOptions, type DeleteOptions } from "./write-options.js";

export async function deleteObject(req: ObjectRequest): Promise<Reply> {
  const options = parseDeleteOptions(req.body, req.query);
  const existing = req.store.get(req.type, req.info.namespace, req.info.name);
  if (!existing) throw newNotFound(groupResource(req.type), req.info.name);
  return deleteExisting(req, existing, options);
}

async function deleteExisting(
  req: ObjectRequest,
  existing: KubeObject,
  options: DeleteOptions,
): Promise<Reply> {
  const { type, store } = req;
  const name = existing.metadata.name;
  const namespace = existing.metadata.namespace ?? "";
  checkPreconditions(req, existing, options);
  const admission = new Admission(req, "DELETE", options.dryRun, options.object);
  await admission.mutate(name, null, existing);
  await admission.validate(name, null, existing);
  const reply = (body: unknown): Reply => ({ status: 200, body, warnings: admission.warnings });
  if (finalizersOf(existing).length > 0) {
    const marked = markAsDeleting(existing);
    if (options.dryRun || deepEqual(marked, existing)) return reply(marked);
    return reply(store.put(type, marked));
  }
  if (!options.dryRun) store.remove(type, namespace, name);
  return reply(returnsDeletedObject(type) ? existing : deletedStatus(req, existing));
}

/**
 * rest.BeforeDelete's early precondition check. Its Conflict names the kind, not the resource
 * (`Operation cannot be fulfilled on OwnedAccessKey.management.loft.sh "x": ...`).
 */
function checkPreconditions(req: ObjectRequest, obj: KubeObject, options: DeleteOptions): void {
  const gk = { group: req.type.group, resource: req.type.kind };
  const { uid, resourceVersion } = options.preconditions;
  const haveUid = String(obj.metadata["uid"] ?? "");
  const haveRv = String(obj.metadata["resourceVersion"] ?? "");
  if (uid !== undefined && uid !== haveUid) {
    throw conflict(
      gk,
      obj.metadata.name,
      `the UID in the precondition (${uid}) does not match the UID in record (${haveUid}). The object might have been deleted and then recreated`,
    );
  }
  if (resourceVersion !== undefined && resourceVersion !== haveRv) {
    throw conflict(
      gk,
      obj.metadata.name,
      `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${haveRv}). The object might have been modified`,
    );
  }
}

/** registry.markAsDeleting: generation +1 on the first request, deletionTimestamp, grace 0. */
function markAsDeleting(obj: KubeObject): KubeObject {
  const out = structuredClone(obj);
  const meta = out.metadata;
  const generation = Number(meta["generation"] ?? 0);
  if (!meta["deletionTimestamp"] && generation > 0) meta["generation"] = generation + 1;
  if (!meta["deletionTimestamp"]) meta["deletionTimestamp"] = now();
  meta["deletionGracePeriodSeconds"] = 0;
  return out;
}

/** What a registry without ReturnDeletedObject answers: Success with the object's identity. */
function deletedStatus(req: ObjectRequest, obj: KubeObject): object {
  const details: Record<string, unknown> = { name: obj.metadata.name };
  if (req.type.group) details["group"] = req.type.group;
  details["kind"] = req.type.resource;
  details["uid"] = obj.metadata["uid"];
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
}

/** deletecollection: every selected object is deleted as above; the answer lists them. */
export async function deleteCollection(req: ObjectRequest): Promise<Reply> {
  const options = parseDeleteOptions(req.body, req.query);
  const selectors = parseSelectors(req.query, req.type);
  const items = req.store.list(req.type, req.info.namespace).filter((o) => selects(selectors, o));
  const revision = req.store.currentRevision();
  const warnings: string[] = [];
  for (const item of items) {
    const current = req.store.get(req.type, item.metadata.namespace ?? "", item.metadata.name);
    if (!current) continue; // deleted meanwhile: kube ignores NotFound here
    const reply = await deleteExisting(req, current, options);
    warnings.push(...(reply.warnings ?? []));
  }
  const list = {
    apiVersion: apiVersionOf(req.type.group, req.type.version),
    kind: `${req.type.kind}List`,
    metadata: { resourceVersion: revision },
    items,
  };
  return { status: 200, body: list, warnings };
}
