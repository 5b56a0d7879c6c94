// The metav1.Status errors the test API server answers with, worded as kube-apiserver words them.
// Object errors (NotFound, AlreadyExists, Invalid) come from the webhook's own status.ts.

import type { StatusCause } from "../../../webhook/src/api/field-errors.js";
import { KubeError } from "../../../webhook/src/api/status.js";

export const unauthorized = (): KubeError => new KubeError(401, "Unauthorized", "Unauthorized");

export const pathNotFound = (): KubeError =>
  new KubeError(404, "NotFound", "the server could not find the requested resource");

export const methodNotAllowed = (): KubeError =>
  new KubeError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );

export const serviceUnavailable = (): KubeError =>
  new KubeError(503, "ServiceUnavailable", "the server is currently unable to handle the request");

export interface ForbiddenFor {
  user: string;
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/**
 * RBAC's denial, e.g. `pods "x" is forbidden: User "bob" cannot get resource "pods" in API group ""
 * in the namespace "default"` (no quoted name on list/create; `at the cluster scope` without one).
 */
export function forbidden(a: ForbiddenFor): KubeError {
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
  const what = a.name ? `${qualified} ${JSON.stringify(a.name)}` : qualified;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : "at the cluster scope";
  const why = `User "${a.user}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`;
  return new KubeError(403, "Forbidden", `${what} is forbidden: ${why}`, {
    ...(a.name ? { name: a.name } : {}),
    group: a.group,
    kind: a.resource,
  });
}

export interface QualifiedResource {
  group: string;
  resource: string;
}

const qualified = (gr: QualifiedResource): string =>
  gr.group ? `${gr.resource}.${gr.group}` : gr.resource;

/** The optimistic-lock text of the generic registry (OptimisticLockErrorMsg). */
export const OPTIMISTIC_LOCK =
  "the object has been modified; please apply your changes to the latest version and try again";

/** 409 Conflict, as apierrors.NewConflict: `Operation cannot be fulfilled on R "name": why`. */
export function conflict(gr: QualifiedResource, name: string, why: string): KubeError {
  return new KubeError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(gr)} ${JSON.stringify(name)}: ${why}`,
    {
      name,
      group: gr.group,
      kind: gr.resource,
    },
  );
}

/** negotiation.NewUnsupportedMediaTypeError. */
export function unsupportedMediaType(accepted: readonly string[]): KubeError {
  return new KubeError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
}

/**
 * apierrors.NewGenericServerResponse(422, ...) with no resource: what a failing JSON patch
 * operation answers (the patch library's own text is not part of it).
 */
export function unprocessable(): KubeError {
  return new KubeError(
    422,
    "Invalid",
    "the server rejected our request due to an error in our request",
    {},
  );
}

/** A plain error from storage that kube passes up as 500 `Internal error occurred: ...`. */
export function internalError(message: string): KubeError {
  return new KubeError(500, "InternalError", `Internal error occurred: ${message}`, {
    // kube's cause carries only the message (reason and field are omitted).
    causes: [{ message } as unknown as StatusCause],
  });
}
