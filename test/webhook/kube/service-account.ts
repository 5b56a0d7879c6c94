// An identity for vgate's kube client on the real cluster, as a pod has one: a service account of
// its own with exactly the RBAC rules a test grants, and a bound token from the TokenRequest API
// in a kubeconfig (for the API server, or for a fault proxy in front of it).

import { randomBytes } from "node:crypto";
import type { ControlPlane } from "../../support/kube/control-plane.js";
import { rulesInEffect, type PolicyRule } from "./rbac.js";

/** Where these service accounts live; namespaces never finish deleting here, so it is kept. */
export const TEST_NAMESPACE = "vgate-kube-client-tests";

const RBAC = "rbac.authorization.k8s.io/v1";

export interface TestServiceAccount {
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
): Promise<TestServiceAccount> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const { admin } = plane;
  const token = await plane.serviceAccountToken(TEST_NAMESPACE, name);
  const role = { apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules };
  const binding = {
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name, namespace: TEST_NAMESPACE }],
  };
  const username = `system:serviceaccount:${TEST_NAMESPACE}:${name}`;
  if (rules.length > 0) {
    await admin.apply(role);
    await admin.apply(binding);
    const groups = ["system:serviceaccounts", `system:serviceaccounts:${TEST_NAMESPACE}`];
    await rulesInEffect(admin, { user: username, groups }, rules);
  }
  return {
    username,
    token,
    kubeconfig: (server) => plane.tokenKubeconfig(token, name, server),
    remove: async () => {
      await admin.delete(binding);
      await admin.delete(role);
      await admin.delete({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace: TEST_NAMESPACE },
      });
    },
  };
}
