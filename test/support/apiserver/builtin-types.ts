// The built-in resource types of a small kube-apiserver (1.31): their verbs, short names and
// categories as its discovery documents list them, so `kubectl api-resources`, `kubectl get all`
// and short names (`kubectl get cm`) behave as on a real cluster.

import { resourceType, type ResourceType } from "./resources.js";

const NO_DELETECOLLECTION = ["create", "delete", "get", "list", "patch", "update", "watch"];

function withNames(
  type: ResourceType,
  extra: { shortNames?: string[]; categories?: string[]; verbs?: string[] },
): ResourceType {
  return { ...type, ...extra };
}

/** A type that only takes `create` (reviews: nothing is stored, the answer is computed). */
const createOnly = (t: ResourceType): ResourceType => ({ ...t, verbs: ["create"] });

const ALL = ["all"];
const API_EXTENSIONS = ["api-extensions"];

function core(): ResourceType[] {
  return [
    withNames(resourceType("v1", "Namespace", "namespaces", false, ["finalize", "status"]), {
      shortNames: ["ns"],
      verbs: NO_DELETECOLLECTION,
    }),
    withNames(resourceType("v1", "Node", "nodes", false, ["status"]), { shortNames: ["no"] }),
    withNames(
      resourceType("v1", "Pod", "pods", true, ["binding:Binding", "eviction:Eviction", "status"]),
      { shortNames: ["po"], categories: ALL },
    ),
    withNames(resourceType("v1", "ConfigMap", "configmaps", true), { shortNames: ["cm"] }),
    resourceType("v1", "Secret", "secrets", true),
    withNames(resourceType("v1", "Service", "services", true, ["status"]), {
      shortNames: ["svc"],
      categories: ALL,
    }),
    withNames(
      resourceType("v1", "ServiceAccount", "serviceaccounts", true, ["token:TokenRequest"]),
      { shortNames: ["sa"] },
    ),
    withNames(resourceType("v1", "Endpoints", "endpoints", true), { shortNames: ["ep"] }),
    withNames(resourceType("v1", "Event", "events", true), { shortNames: ["ev"] }),
  ];
}

function apps(): ResourceType[] {
  const scaled = ["scale:Scale", "status"];
  return [
    withNames(resourceType("apps/v1", "Deployment", "deployments", true, scaled), {
      shortNames: ["deploy"],
      categories: ALL,
    }),
    withNames(resourceType("apps/v1", "ReplicaSet", "replicasets", true, scaled), {
      shortNames: ["rs"],
      categories: ALL,
    }),
    withNames(resourceType("apps/v1", "StatefulSet", "statefulsets", true, scaled), {
      shortNames: ["sts"],
      categories: ALL,
    }),
    withNames(resourceType("apps/v1", "DaemonSet", "daemonsets", true, ["status"]), {
      shortNames: ["ds"],
      categories: ALL,
    }),
  ];
}

function extensionPoints(): ResourceType[] {
  const admission = "admissionregistration.k8s.io/v1";
  return [
    withNames(
      resourceType(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        ["status"],
      ),
      { shortNames: ["crd", "crds"], categories: API_EXTENSIONS },
    ),
    withNames(
      resourceType(
        admission,
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
      ),
      { categories: API_EXTENSIONS },
    ),
    withNames(
      resourceType(
        admission,
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
      ),
      { categories: API_EXTENSIONS },
    ),
  ];
}

function access(): ResourceType[] {
  const rbac = "rbac.authorization.k8s.io/v1";
  const authn = "authentication.k8s.io/v1";
  const authz = "authorization.k8s.io/v1";
  return [
    resourceType(rbac, "ClusterRoleBinding", "clusterrolebindings", false),
    resourceType(rbac, "ClusterRole", "clusterroles", false),
    resourceType(rbac, "RoleBinding", "rolebindings", true),
    resourceType(rbac, "Role", "roles", true),
    createOnly(resourceType(authn, "SelfSubjectReview", "selfsubjectreviews", false)),
    createOnly(resourceType(authn, "TokenReview", "tokenreviews", false)),
    createOnly(resourceType(authz, "LocalSubjectAccessReview", "localsubjectaccessreviews", true)),
    createOnly(resourceType(authz, "SelfSubjectAccessReview", "selfsubjectaccessreviews", false)),
    createOnly(resourceType(authz, "SelfSubjectRulesReview", "selfsubjectrulesreviews", false)),
    createOnly(resourceType(authz, "SubjectAccessReview", "subjectaccessreviews", false)),
  ];
}

/** Built-in types of a kube-apiserver, without any custom resources. */
export function builtinResources(): ResourceType[] {
  return [
    ...core(),
    ...apps(),
    ...extensionPoints(),
    ...access(),
    resourceType("coordination.k8s.io/v1", "Lease", "leases", true),
  ];
}

/**
 * True for the types kube-apiserver compiles in (they take strategic merge patches): their groups
 * are dotless (`apps`) or end in `.k8s.io`; a CRD's group must contain a dot.
 */
export function isBuiltin(type: ResourceType): boolean {
  return type.crd === undefined && (!type.group.includes(".") || type.group.endsWith(".k8s.io"));
}
