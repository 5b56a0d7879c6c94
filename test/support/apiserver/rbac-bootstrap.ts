// The part of kube-apiserver's bootstrap RBAC policy that decides what ordinary users see: admins
// (system:masters) get cluster-admin, and every authenticated user may review itself
// (system:basic-user) and read discovery (system:discovery, system:public-info-viewer). Store
// these to make RBAC decisions match a fresh cluster's.

import type { KubeObject } from "./store.js";
import { RBAC_V1, type PolicyRule } from "./rbac.js";

const BOOTSTRAP = {
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
};

const DISCOVERY_URLS = [
  "/api",
  "/api/*",
  "/apis",
  "/apis/*",
  "/healthz",
  "/livez",
  "/openapi",
  "/openapi/*",
  "/readyz",
  "/version",
  "/version/",
];
const PUBLIC_INFO_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"];

export function bootstrapRbac(): KubeObject[] {
  return [
    clusterRole("cluster-admin", [
      { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
      { nonResourceURLs: ["*"], verbs: ["*"] },
    ]),
    clusterRoleBinding("cluster-admin", "cluster-admin", ["system:masters"]),
    clusterRole("system:basic-user", [
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        verbs: ["create"],
      },
      {
        apiGroups: ["authentication.k8s.io"],
        resources: ["selfsubjectreviews"],
        verbs: ["create"],
      },
    ]),
    clusterRoleBinding("system:basic-user", "system:basic-user", ["system:authenticated"]),
    clusterRole("system:discovery", [{ nonResourceURLs: DISCOVERY_URLS, verbs: ["get"] }]),
    clusterRoleBinding("system:discovery", "system:discovery", ["system:authenticated"]),
    clusterRole("system:public-info-viewer", [
      { nonResourceURLs: PUBLIC_INFO_URLS, verbs: ["get"] },
    ]),
    clusterRoleBinding("system:public-info-viewer", "system:public-info-viewer", [
      "system:authenticated",
      "system:unauthenticated",
    ]),
  ];
}

export function clusterRole(name: string, rules: PolicyRule[]): KubeObject {
  return { apiVersion: RBAC_V1, kind: "ClusterRole", metadata: { name, ...BOOTSTRAP }, rules };
}

function clusterRoleBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: RBAC_V1,
    kind: "ClusterRoleBinding",
    metadata: { name, ...BOOTSTRAP },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: groups.map((g) => ({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Group",
      name: g,
    })),
  };
}
