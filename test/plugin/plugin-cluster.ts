// The shared test cluster (a real kube-apiserver wired to a real `vgate serve`) as the plugin's tests
// use it: an admin kubeconfig, and kubeconfigs of ordinary users (client certificates) who may
// manage OwnedAccessKeys through RBAC, vgate deciding whose keys they are. User names carry this
// run's id, so "your own keys" are exactly the ones a test made.

import { randomBytes } from "node:crypto";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import {
  clusterRole,
  clusterRoleBinding,
  rulesInEffect,
  type PolicyRule,
} from "../support/kube/rbac.js";

export const RUN_ID = randomBytes(3).toString("hex");
export const USERS_GROUP = "accesskey-plugin-users";

export interface PluginCluster {
  cluster: VgateCluster;
  /** A system:masters kubeconfig. */
  admin: string;
  /** A kubeconfig of an ordinary user `name` (in USERS_GROUP). */
  userKubeconfig(name: string): Promise<string>;
  /** Deletes every key named in `names` (as the admin), ignoring missing ones. */
  cleanup(names: readonly string[]): Promise<void>;
}

let prepared: Promise<PluginCluster> | undefined;

export function pluginCluster(): Promise<PluginCluster> {
  prepared ??= prepare();
  return prepared;
}

async function prepare(): Promise<PluginCluster> {
  const cluster = await sharedCluster();
  const rules: PolicyRule[] = [
    {
      apiGroups: [cluster.group],
      resources: ["ownedaccesskeys"],
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
  ];
  await cluster.admin.apply(clusterRole(USERS_GROUP, rules));
  await cluster.admin.apply(
    clusterRoleBinding(USERS_GROUP, USERS_GROUP, [
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: USERS_GROUP },
    ]),
  );
  await rulesInEffect(cluster.admin, { user: `probe-${RUN_ID}`, groups: [USERS_GROUP] }, rules);
  return {
    cluster,
    admin: cluster.kubeconfigPath,
    userKubeconfig: (name) => cluster.plane.clientCertKubeconfig(name, [USERS_GROUP]),
    cleanup: async (names) => {
      for (const name of names) {
        await cluster.admin
          .delete(
            { apiVersion: `${cluster.group}/v1`, kind: "OwnedAccessKey", metadata: { name } },
            { force: true },
          )
          .catch(() => undefined);
      }
    },
  };
}
