// The metav1.Status errors the test API server answers with, worded as kube-apiserver words them.
// Object errors (NotFound, AlreadyExists, Invalid) come from the webhook's own status.ts.

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
