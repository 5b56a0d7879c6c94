// An identity as a pod has one: a service account of its own with exactly the RBAC rules a test
// grants, and a bound token from the TokenRequest API in a kubeconfig (for the API server, or for
// a fault proxy in front of it).

import { randomBytes } from "node:crypto";
import type { ControlPlane } from "./control-plane.js";
import { clusterRole, clusterRoleBinding, rulesInEffect, type PolicyRule } from "./rbac.js";

/** Where these service accounts live unless told; namespaces never finish deleting here. */
export const TEST_NAMESPACE = "vgate-tests";

export interface TestServiceAccount {
  name: string;
  namespace: string;
  /** system:serviceaccount:<namespace>:<name>, as kube authenticates the token. */
  username: string;
  token: string;
  /** A kubeconfig with the token, for the API server, or for `server` when given. */
  kubeconfig(server?: string): Promise<string>;
  /** Deletes the service account and its RBAC. */
  remove(): Promise<void>;
}

/**
 * A service account `<prefix>-<random>` allowed `rules` cluster-wide (and no more); returns once
 * the API server's RBAC applies them.
 */
export async function serviceAccountWith(
  plane: ControlPlane,
  prefix: string,
  rules: PolicyRule[],
  namespace = TEST_NAMESPACE,
): Promise<TestServiceAccount> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const { admin } = plane;
  const token = await plane.serviceAccountToken(namespace, name);
  const role = clusterRole(name, rules);
  const binding = clusterRoleBinding(name, name, [{ kind: "ServiceAccount", name, namespace }]);
  const username = `system:serviceaccount:${namespace}:${name}`;
  if (rules.length > 0) {
    await admin.apply(role);
    await admin.apply(binding);
    const groups = ["system:serviceaccounts", `system:serviceaccounts:${namespace}`];
    await rulesInEffect(admin, { user: username, groups }, rules);
  }
  return {
    name,
    namespace,
    username,
    token,
    kubeconfig: (server) => plane.tokenKubeconfig(token, name, server),
    remove: async () => {
      await admin.delete(binding);
      await admin.delete(role);
      await admin.delete({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace },
      });
    },
  };
}
