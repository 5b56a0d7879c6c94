// RBAC a test creates for an impersonated non-admin user, and waiting until the cluster's
// authorizer sees it (real clusters apply RBAC changes from a watch, a moment later).

import {
  AuthorizationV1Api,
  RbacAuthorizationV1Api,
  type V1ClusterRole,
  type V1PolicyRule,
} from "@kubernetes/client-node";
import type { Contract } from "./contract.js";
import { PLURAL } from "./keys.js";

/** Every verb on ownedaccesskeys: what a user managing their own keys is given. */
export const KEY_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];

export interface Grant {
  /** The ClusterRole (an object the user may not delete, unless the rules say so). */
  role: V1ClusterRole;
  /** Removes the role and its binding. */
  revoke(): Promise<void>;
}

/** A ClusterRole with `rules`, bound to `user`, in effect when this resolves. */
export async function grant(
  contract: Contract,
  user: string,
  rules: V1PolicyRule[],
): Promise<Grant> {
  const rbac = contract.cluster.admin().makeApiClient(RbacAuthorizationV1Api);
  const name = `vgate-contract-${user}`;
  const role = await rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    },
  });
  const revoke = async (): Promise<void> => {
    await rbac.deleteClusterRoleBinding({ name });
    await rbac.deleteClusterRole({ name });
  };
  const first = rules[0];
  if (first) await waitAllowed(contract, user, first);
  return { role, revoke };
}

/** The rules letting `user` manage OwnedAccessKeys (the webhook then decides whose). */
export function keyRules(group: string): V1PolicyRule[] {
  return [{ apiGroups: [group], resources: [PLURAL], verbs: KEY_VERBS }];
}

/** Polls SubjectAccessReview until `user` gets `rule`'s first verb; 10 s at most. */
async function waitAllowed(contract: Contract, user: string, rule: V1PolicyRule): Promise<void> {
  const authz = contract.cluster.admin().makeApiClient(AuthorizationV1Api);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user,
          groups: ["system:authenticated"],
          resourceAttributes: {
            group: rule.apiGroups?.[0] ?? "",
            resource: rule.resources?.[0] ?? "",
            verb: rule.verbs[0] ?? "get",
            namespace: "",
          },
        },
      },
    });
    if (review.status?.allowed) return;
    if (Date.now() > deadline) throw new Error(`RBAC for ${user} did not take effect in 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
