// Every kind vCluster accepts `patches` on, and which keyword runs in which direction
// (docs/decisions.md KND-1). The list is vCluster's config schema (config/config.go of v0.34:
// SyncToHost and SyncFromHost, every field of a type with `Patches []TranslatePatch`), with the
// Gateway API kinds of v0.36 (KND-92: `sync.toHost.gatewayApi.<kind>`, `sync.fromHost.gatewayClasses`
// and `.gateways`), the custom resources aside: those are `customResources.<resource>.<group>`
// entries, made by customResourceKind.
//
// Which keyword runs is vCluster's patcher's choice, per kind: for sync.toHost kinds `expression`
// runs virtual → host and `reverseExpression` host → virtual. sync.fromHost kinds sync host →
// virtual only, with `expression`, except ConfigMaps, Secrets and custom resources, which run
// `reverseExpression` host → virtual (docs/reference.md#patch-keywords). A keyword that never runs
// for a kind is an error at load in vgate, where vCluster skips it silently.

export type SyncSection = "toHost" | "fromHost";
export type Keyword = "expression" | "reverseExpression";

export interface PatchKind {
  section: SyncSection;
  /**
   * The key under sync.<section>: `pods`, `gatewayApi.httpRoutes` (a path of keys), or
   * `customResources.<resource>.<group>`.
   */
  key: string;
  /** The API group ("" for the core group), the plural resource name and the kind. */
  group: string;
  resource: string;
  kind: string;
  /** The versions this table knows; a custom resource's come from discovery, so [] here. */
  versions: readonly string[];
  namespaced: boolean;
  /** The keyword that runs virtual → host, or null when the kind never syncs that way. */
  toHost: Keyword | null;
  /** The keyword that runs host → virtual, or null when the kind never syncs that way. */
  toVirtual: Keyword | null;
}

type Row = [key: string, group: string, resource: string, kind: string, namespaced: boolean];

const GATEWAY = "gateway.networking.k8s.io";

const TO_HOST: readonly Row[] = [
  ["pods", "", "pods", "Pod", true],
  ["secrets", "", "secrets", "Secret", true],
  ["configMaps", "", "configmaps", "ConfigMap", true],
  ["ingresses", "networking.k8s.io", "ingresses", "Ingress", true],
  // v0.36 (pkg/controllers/resources/{httproutes,gateways,tlsroutes,backendtlspolicies,referencegrants}).
  ["gatewayApi.httpRoutes", GATEWAY, "httproutes", "HTTPRoute", true],
  ["gatewayApi.gateways", GATEWAY, "gateways", "Gateway", true],
  ["gatewayApi.tlsRoutes", GATEWAY, "tlsroutes", "TLSRoute", true],
  ["gatewayApi.backendTLSPolicies", GATEWAY, "backendtlspolicies", "BackendTLSPolicy", true],
  ["gatewayApi.referenceGrants", GATEWAY, "referencegrants", "ReferenceGrant", true],
  ["services", "", "services", "Service", true],
  ["endpoints", "", "endpoints", "Endpoints", true],
  ["endpointSlices", "discovery.k8s.io", "endpointslices", "EndpointSlice", true],
  ["networkPolicies", "networking.k8s.io", "networkpolicies", "NetworkPolicy", true],
  ["persistentVolumeClaims", "", "persistentvolumeclaims", "PersistentVolumeClaim", true],
  ["persistentVolumes", "", "persistentvolumes", "PersistentVolume", false],
  ["volumeSnapshots", "snapshot.storage.k8s.io", "volumesnapshots", "VolumeSnapshot", true],
  [
    "volumeSnapshotContents",
    "snapshot.storage.k8s.io",
    "volumesnapshotcontents",
    "VolumeSnapshotContent",
    false,
  ],
  ["storageClasses", "storage.k8s.io", "storageclasses", "StorageClass", false],
  ["serviceAccounts", "", "serviceaccounts", "ServiceAccount", true],
  ["podDisruptionBudgets", "policy", "poddisruptionbudgets", "PodDisruptionBudget", true],
  ["priorityClasses", "scheduling.k8s.io", "priorityclasses", "PriorityClass", false],
  ["namespaces", "", "namespaces", "Namespace", false],
  ["resourceClaims", "resource.k8s.io", "resourceclaims", "ResourceClaim", true],
  [
    "resourceClaimTemplates",
    "resource.k8s.io",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    true,
  ],
];

const FROM_HOST: readonly Row[] = [
  ["nodes", "", "nodes", "Node", false],
  ["events", "", "events", "Event", true],
  ["ingressClasses", "networking.k8s.io", "ingressclasses", "IngressClass", false],
  // v0.36 (pkg/controllers/resources/{gatewayclasses,gateways}).
  ["gatewayClasses", GATEWAY, "gatewayclasses", "GatewayClass", false],
  ["gateways", GATEWAY, "gateways", "Gateway", true],
  ["runtimeClasses", "node.k8s.io", "runtimeclasses", "RuntimeClass", false],
  ["priorityClasses", "scheduling.k8s.io", "priorityclasses", "PriorityClass", false],
  ["storageClasses", "storage.k8s.io", "storageclasses", "StorageClass", false],
  ["csiNodes", "storage.k8s.io", "csinodes", "CSINode", false],
  ["csiDrivers", "storage.k8s.io", "csidrivers", "CSIDriver", false],
  ["csiStorageCapacities", "storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", true],
  [
    "volumeSnapshotClasses",
    "snapshot.storage.k8s.io",
    "volumesnapshotclasses",
    "VolumeSnapshotClass",
    false,
  ],
  ["configMaps", "", "configmaps", "ConfigMap", true],
  ["secrets", "", "secrets", "Secret", true],
  ["deviceClasses", "resource.k8s.io", "deviceclasses", "DeviceClass", false],
];

/** The fromHost kinds whose host → virtual keyword is `reverseExpression`. */
const FROM_HOST_REVERSE = new Set(["configMaps", "secrets"]);

function kindOf(section: SyncSection, [key, group, resource, kind, namespaced]: Row): PatchKind {
  const core = { section, key, group, resource, kind, namespaced, versions: ["v1"] };
  if (section === "toHost")
    return { ...core, toHost: "expression", toVirtual: "reverseExpression" };
  const keyword: Keyword = FROM_HOST_REVERSE.has(key) ? "reverseExpression" : "expression";
  return { ...core, toHost: null, toVirtual: keyword };
}

/** Every built-in kind with patches, sync.toHost first, in vCluster's field order. */
export const PATCH_KINDS: readonly PatchKind[] = [
  ...TO_HOST.map((row) => kindOf("toHost", row)),
  ...FROM_HOST.map((row) => kindOf("fromHost", row)),
];

/**
 * Where vCluster's schema accepts `patches` that no syncer applies to any kind (v0.36:
 * `sync.toHost.gatewayApi.patches`, validated by pkg/config/validation.go:415 but read by none of
 * the Gateway API syncers, which read their own kind's list). vgate refuses them (KND-93).
 */
export const PATCHES_OF_NO_KIND: readonly string[] = ["toHost.gatewayApi"];

/**
 * The kind of a `sync.<section>.customResources.<name>` entry. vCluster names an entry
 * `<resource>.<group>` (a CRD's name); its kind and versions come from discovery, so `kind` is ""
 * until the caller knows it.
 */
export function customResourceKind(
  section: SyncSection,
  name: string,
  namespaced: boolean,
): PatchKind {
  const dot = name.indexOf(".");
  const resource = dot < 0 ? name : name.slice(0, dot);
  const group = dot < 0 ? "" : name.slice(dot + 1);
  const base = {
    section,
    key: `customResources.${name}`,
    group,
    resource,
    kind: "",
    versions: [],
    namespaced,
  };
  return section === "toHost"
    ? { ...base, toHost: "expression", toVirtual: "reverseExpression" }
    : { ...base, toHost: null, toVirtual: "reverseExpression" };
}

/** The config path of a kind's patches, as vCluster's messages name it. */
export function patchesPath(kind: PatchKind): string {
  return `sync.${kind.section}.${kind.key}.patches`;
}
