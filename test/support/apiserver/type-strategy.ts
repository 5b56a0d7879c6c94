// What differs between resource types on the write path, as kube's per-type REST strategies and
// registry stores decide it: custom resources (served from a CRD) versus built-in types, which
// types count generations, which allow unconditional updates or create-on-update, how a name must
// look, what create and update reset, and what a delete answers.

import type { ResourceType } from "./resources.js";
import type { KubeObject } from "./store.js";
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  type NameRule,
} from "./name-validation.js";

/**
 * Whether the type is served from a CRD. Built-in groups are either dotless (`apps`, `batch`) or
 * end in `.k8s.io`; a CRD's group must contain a dot, and *.k8s.io groups are reserved.
 */
export function isCustomResource(type: ResourceType): boolean {
  return type.group.includes(".") && !type.group.endsWith(".k8s.io");
}

export function hasStatusSubresource(type: ResourceType): boolean {
  return (type.subresources ?? []).some((s) => s.name === "status");
}

// Built-in kinds whose strategies set metadata.generation (1 on create, +1 on spec change).
const GENERATION_KINDS = new Set([
  "apps/Deployment",
  "apps/ReplicaSet",
  "apps/StatefulSet",
  "apps/DaemonSet",
  "batch/Job",
  "batch/CronJob",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
  "policy/PodDisruptionBudget",
]);

export function hasGeneration(type: ResourceType): boolean {
  return isCustomResource(type) || GENERATION_KINDS.has(`${type.group}/${type.kind}`);
}

/** Built-in strategies allow a PUT without resourceVersion; the custom resource strategy does not. */
export function allowsUnconditionalUpdate(type: ResourceType): boolean {
  return !isCustomResource(type);
}

// Types whose strategy has AllowCreateOnUpdate() true: a PUT of a missing object creates it.
const CREATE_ON_UPDATE = new Set([
  "/Endpoints",
  "/Event",
  "events.k8s.io/Event",
  "rbac.authorization.k8s.io/Role",
  "rbac.authorization.k8s.io/RoleBinding",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
]);

export function allowsCreateOnUpdate(type: ResourceType): boolean {
  return CREATE_ON_UPDATE.has(`${type.group}/${type.kind}`);
}

// Registries with ReturnDeletedObject: a delete answers the object, not a Success Status.
const RETURNS_DELETED = new Set(["/Pod", "/Namespace", "/Service"]);

export function returnsDeletedObject(type: ResourceType): boolean {
  return isCustomResource(type) || RETURNS_DELETED.has(`${type.group}/${type.kind}`);
}

/** The etcd key kube-apiserver stores the object under (StorageError messages quote it). */
export function storageKey(type: ResourceType, namespace: string, name: string): string {
  let prefix = type.resource;
  if (isCustomResource(type) || type.group === "apiextensions.k8s.io") {
    prefix = `${type.group}/${type.resource}`;
  } else if (type.group === "" && type.resource === "services") {
    prefix = "services/specs";
  }
  return `/registry/${prefix}/${type.namespaced ? `${namespace}/` : ""}${name}`;
}

/** The name rule of the type's ValidateObjectMeta call. */
export function nameRule(type: ResourceType): NameRule {
  if (type.group === "" && type.kind === "Namespace") return isDNS1123Label;
  if (type.group === "" && type.kind === "Service") return isDNS1035Label;
  if (type.group === "rbac.authorization.k8s.io") return isPathSegmentName;
  return isDNS1123Subdomain;
}

// The status a built-in type starts with (its PrepareForCreate resets what clients sent).
const INITIAL_STATUS: Record<string, () => unknown> = {
  "/Namespace": () => ({ phase: "Active" }),
  "/Pod": () => ({ phase: "Pending" }),
  "/Service": () => ({ loadBalancer: {} }),
};

/** PrepareForCreate: generation 1, status reset where a status subresource owns it. */
export function prepareForCreate(type: ResourceType, obj: KubeObject): void {
  if (hasGeneration(type)) obj.metadata["generation"] = 1;
  if (hasStatusSubresource(type)) {
    const initial = INITIAL_STATUS[`${type.group}/${type.kind}`];
    if (initial) obj["status"] = initial();
    else delete obj["status"];
  }
  if (type.group === "" && type.kind === "Namespace") {
    // The namespace strategy adds the immutable name label and the "kubernetes" finalizer.
    const labels = (obj.metadata["labels"] ?? {}) as Record<string, string>;
    obj.metadata["labels"] = { ...labels, "kubernetes.io/metadata.name": obj.metadata.name };
    const spec = (obj["spec"] ?? {}) as Record<string, unknown>;
    obj["spec"] = { ...spec, finalizers: spec["finalizers"] ?? ["kubernetes"] };
  }
}

/**
 * PrepareForUpdate of the main resource or of its status subresource. The main resource keeps the
 * stored status when a status subresource owns it; the status subresource changes only .status
 * (custom resources keep all old metadata too; built-ins keep new labels and annotations).
 * Generation goes up when anything but metadata and (subresource-owned) status changed.
 */
export function prepareForUpdate(
  type: ResourceType,
  obj: KubeObject,
  old: KubeObject,
  subresource: string,
): KubeObject {
  let next = obj;
  if (subresource === "status") {
    next = structuredClone(old);
    if (!isCustomResource(type)) next.metadata = obj.metadata;
    if (obj["status"] === undefined) delete next["status"];
    else next["status"] = obj["status"];
  } else if (hasStatusSubresource(type)) {
    if (old["status"] === undefined) delete next["status"];
    else next["status"] = structuredClone(old["status"]);
  }
  next.metadata["generation"] = old.metadata["generation"];
  if (next.metadata["generation"] === undefined) delete next.metadata["generation"];
  if (hasGeneration(type) && specChanged(type, next, old)) {
    next.metadata["generation"] = Number(old.metadata["generation"] ?? 0) + 1;
  }
  return next;
}

function specChanged(type: ResourceType, a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Record<string, unknown> => {
    const skip = [
      "metadata",
      "apiVersion",
      "kind",
      ...(hasStatusSubresource(type) ? ["status"] : []),
    ];
    return Object.fromEntries(Object.entries(o).filter(([k]) => !skip.includes(k)));
  };
  return !deepEqual(strip(a), strip(b));
}

/** Semantic equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual(ra[k], rb[k]));
}
