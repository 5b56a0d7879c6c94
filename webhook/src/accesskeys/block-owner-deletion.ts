// docs/decisions.md OAK-2: setting blockOwnerDeletion on an ownerReference needs `delete`
// permission on the owner. We ask the API server (SubjectAccessReview for the requesting user),
// mapping the owner's apiVersion/kind to its resource through discovery. A denial is 422 Invalid
// with a FieldValueForbidden cause, keeping kube's wording so people can search for it.

import { forbidden, type FieldError } from "../shared/field-errors.js";
import type { OwnerReference } from "../shared/ownedaccesskey.js";
import type { KubeApi } from "../kube/ports.js";
import { newlyBlockingOwnerReferences } from "./owner-references.js";
import type { KeyRequest } from "./request.js";

export const BLOCK_OWNER_DELETION_DENIED =
  "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete";

function refsOf(obj: KeyRequest["object"]): unknown {
  return obj?.metadata?.ownerReferences;
}

async function checkOne(
  req: KeyRequest,
  api: KubeApi,
  index: number,
  ref: OwnerReference,
): Promise<FieldError | null> {
  const field = `metadata.ownerReferences[${index}].blockOwnerDeletion`;
  const mapping = await api.resourceFor(ref.apiVersion, ref.kind);
  if (!mapping) {
    return forbidden(
      field,
      `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}`,
    );
  }
  const decision = await api.subjectAccessReview(req.userInfo, {
    group: mapping.group,
    version: mapping.version,
    resource: mapping.resource,
    name: ref.name,
    // OwnedAccessKey is cluster-scoped, so a namespaced owner can only be asked about across all
    // namespaces: the stricter question.
    namespace: "",
    verb: "delete",
  });
  return decision.allowed ? null : forbidden(field, BLOCK_OWNER_DELETION_DENIED);
}

/** Field errors for every newly blocking ownerReference the user may not delete. */
export async function checkBlockOwnerDeletion(
  req: KeyRequest,
  api: KubeApi,
): Promise<FieldError[]> {
  const blocking = newlyBlockingOwnerReferences(refsOf(req.oldObject), refsOf(req.object));
  const results = await Promise.all(blocking.map((b) => checkOne(req, api, b.index, b.ref)));
  return results.filter((e): e is FieldError => e !== null);
}
