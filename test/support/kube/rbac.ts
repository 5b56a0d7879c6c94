// RBAC for tests on the real API server: roles, bindings, and waiting until they apply.
// kube-apiserver's RBAC authorizer reads roles and bindings through an informer, so a binding just
// written takes effect a moment later; tests that grant something wait until the server's own
// SubjectAccessReview gives the answer they expect.

import { until } from "../until.js";
import type { KubeObject, KubeTestClient } from "./kube-client.js";

const RBAC = "rbac.authorization.k8s.io/v1";
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

export interface PolicyRule {
  apiGroups: string[];
  /** `resource` or `resource/subresource`. */
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** What vgate's service account may do: read keys, and ask the API server about permissions. */
export function vgateRules(group: string): PolicyRule[] {
  return [
    { apiGroups: [group], resources: ["ownedaccesskeys"], verbs: ["get", "list", "watch"] },
    // status.lastActivity, written by the token webhook at most once a minute per key.
    { apiGroups: [group], resources: ["ownedaccesskeys/status"], verbs: ["patch"] },
    // Namespace labels map projects, spaces and virtual clusters for the authorization webhook.
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ];
}

export function clusterRole(name: string, rules: readonly PolicyRule[]): KubeObject {
  return { apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules: [...rules] };
}

export function clusterRoleBinding(
  name: string,
  role: string,
  subjects: Record<string, unknown>[],
): KubeObject {
  return {
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  };
}

/** A namespaced Role. */
export function role(name: string, namespace: string, rules: readonly PolicyRule[]): KubeObject {
  return { apiVersion: RBAC, kind: "Role", metadata: { name, namespace }, rules: [...rules] };
}

/** A RoleBinding of the Role `role` in `namespace` to one user. */
export function roleBindingToUser(name: string, namespace: string, role: string, user: string) {
  return {
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
  } satisfies KubeObject;
}

export interface Access {
  user: string;
  groups?: readonly string[];
  resourceAttributes: Record<string, string>;
}

/** kube's own answer to "may this user do this?", asked by the admin. */
export async function mayDo(admin: KubeTestClient, access: Access): Promise<boolean> {
  const res = await admin.request<{ status?: { allowed?: boolean } }>("POST", SAR_PATH, {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: access.user,
      groups: [...(access.groups ?? [])],
      resourceAttributes: access.resourceAttributes,
    },
  });
  if (res.status !== 201) throw new Error(`SubjectAccessReview: ${res.status}`);
  return res.body.status?.allowed === true;
}

/** Waits until RBAC gives `expected` for `access`. */
export async function waitForAccess(
  admin: KubeTestClient,
  access: Access,
  expected: boolean,
): Promise<void> {
  await until(
    async () => (await mayDo(admin, access)) === expected,
    `RBAC answering ${String(expected)} for ${JSON.stringify(access)}`,
  );
}

/** Waits until `subject` is allowed the first verb on the first resource (and name) of each rule. */
export async function rulesInEffect(
  admin: KubeTestClient,
  subject: { user: string; groups: readonly string[] },
  rules: readonly PolicyRule[],
): Promise<void> {
  for (const rule of rules) {
    const [resource = "", subresource] = (rule.resources[0] ?? "").split("/");
    const resourceAttributes: Record<string, string> = {
      group: rule.apiGroups[0] ?? "",
      resource,
      verb: rule.verbs[0] ?? "",
      ...(subresource ? { subresource } : {}),
      ...(rule.resourceNames?.[0] ? { name: rule.resourceNames[0] } : {}),
    };
    await waitForAccess(admin, { ...subject, resourceAttributes }, true);
  }
}
