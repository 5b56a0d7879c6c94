// What vCluster's Endpoints syncer does to a virtual Endpoints object before patches run
// (docs/reference.md#endpoints-syncer-create steps 1-5; docs/decisions.md EPS-2), and the way back
// from a host object's bookkeeping annotations.
import { hostName, mapNamespaceToHost } from "../patches/host-names.js";
import {
  ControllerLabel,
  hostLabelsMap,
  type LabelScope,
  MarkerLabel,
  virtualLabelsMap,
} from "../patches/labels.js";
import type { Json, JsonObject, VClusterInfo } from "../patches/types.js";
import { isObject } from "../shared/json.js";

/** vCluster's bookkeeping annotations (pkg/util/translate/types.go). */
export const BOOKKEEPING_ANNOTATIONS = Object.freeze({
  name: "vcluster.loft.sh/object-name",
  namespace: "vcluster.loft.sh/object-namespace",
  uid: "vcluster.loft.sh/object-uid",
  kind: "vcluster.loft.sh/object-kind",
  hostName: "vcluster.loft.sh/object-host-name",
  hostNamespace: "vcluster.loft.sh/object-host-namespace",
  managedAnnotations: "vcluster.loft.sh/managed-annotations",
  managedLabels: "vcluster.loft.sh/managed-labels",
});

/** Go's GroupVersionKind.String() for core/v1 Endpoints. */
export const ENDPOINTS_KIND = "/v1, Kind=Endpoints";

/** Stripped by the Endpoints syncer: leader election state must not leak to the host. */
export const EXCLUDED_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";

/**
 * Never copied from the virtual object: only vCluster itself sets them on the host. `managed-labels`
 * is not among them: HostAnnotations keeps the virtual object's value (applyAnnotations copies its
 * excluded keys from the target map, which on create is the virtual object's copy), without
 * listing it in `managed-annotations`.
 */
const NOT_COPIED = new Set<string>([
  ...Object.values(BOOKKEEPING_ANNOTATIONS).filter(
    (key) => key !== BOOKKEEPING_ANNOTATIONS.managedLabels,
  ),
  EXCLUDED_ANNOTATION,
]);

/** The syncer's name (NewGenericTranslator): a controlled-by annotation naming it is its own. */
export const ENDPOINTS_SYNCER_NAME = "endpoints";

/** Reset on the host copy (translate.HostMetadata): they belong to the virtual object. */
export const RESET_METADATA: readonly string[] = [
  "generateName",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
  "finalizers",
  "managedFields",
];

type EndpointsVCluster = VClusterInfo & { targetNamespace?: string };

/** The uid of vCluster's own Service on the host (`<vCluster name>` in its namespace). */
export interface OwnerService {
  uid: string;
}

export interface TranslateOptions {
  /**
   * The virtual object's GroupVersionKind as Go prints it (`/v1, Kind=Pod`), for the object-kind
   * annotation; Endpoints when absent. Pod targetRefs are translated for Endpoints only.
   */
  kind?: string;
  /**
   * vCluster's Service, when it exists: the host copy names it as owner where vCluster's syncer
   * does (ownerServiceFor). Without it the copy has no ownerReferences.
   */
  owner?: OwnerService;
}

function ownField(obj: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function ownObject(obj: JsonObject, key: string): JsonObject {
  const value = ownField(obj, key);
  return isObject(value) ? value : {};
}

function ownString(obj: JsonObject, key: string): string {
  const value = ownField(obj, key);
  return typeof value === "string" ? value : "";
}

/** The string entries of a label or annotation map; anything else is not a label. */
function stringMap(value: Json | undefined): Record<string, string> | null {
  if (!isObject(value)) return null;
  const entries = Object.entries(value).filter(
    (e): e is [string, string] => typeof e[1] === "string",
  );
  return Object.fromEntries(entries);
}

function deepCopy(value: JsonObject): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** Empty is equivalent to `default` for namespaced objects. */
function namespaceOf(meta: JsonObject): string {
  return ownString(meta, "namespace") || "default";
}

function targetNamespaceOf(vc: EndpointsVCluster): string {
  return vc.targetNamespace ?? vc.namespace;
}

/**
 * The host name and namespace of a namespaced object: the same name in the mapped namespace when
 * sync.toHost.namespaces maps it, otherwise `name-x-ns-x-vc` in the target namespace.
 */
export function hostNameAndNamespace(
  name: string,
  ns: string,
  vc: EndpointsVCluster,
): { name: string; namespace: string } {
  const mapped = vc.namespaceMappings ? mapNamespaceToHost(ns, vc.namespaceMappings) : null;
  if (mapped !== null) return { name, namespace: mapped };
  return { name: hostName(name, ns, vc.name), namespace: targetNamespaceOf(vc) };
}

/**
 * Why vCluster's syncers leave `obj` alone (SyncController.excludeVirtual and excludePhysical): a
 * non-empty `vcluster.loft.sh/controlled-by` label, or a `vcluster.loft.sh/controlled-by`
 * annotation that names another syncer than the Endpoints syncer. Null when they sync it.
 */
export function controlledElsewhere(obj: JsonObject): string | null {
  const meta = ownObject(obj, "metadata");
  const label = ownString(ownObject(meta, "labels"), ControllerLabel);
  if (label !== "") return `it is labelled ${ControllerLabel}=${label}`;
  const annotation = ownString(ownObject(meta, "annotations"), ControllerLabel);
  if (annotation !== "" && annotation !== ENDPOINTS_SYNCER_NAME) {
    return `it is annotated ${ControllerLabel}: ${annotation}`;
  }
  return null;
}

function configFlag(config: Json, path: readonly string[]): Json | undefined {
  let value: Json | undefined = config;
  for (const key of path) value = isObject(value) ? ownField(value, key) : undefined;
  return value;
}

/**
 * The Service vCluster names as the owner of the host objects it creates (translate.Owner, set at
 * start by SetGlobalOwner): its own Service, `<vCluster name>` in its namespace. None when
 * `experimental.syncSettings.setOwner` is false (the chart's default is true) or in multi-namespace
 * mode (`sync.toHost.namespaces.enabled`), where owner references would cross namespaces.
 */
export function ownerServiceFor(vc: EndpointsVCluster): { namespace: string; name: string } | null {
  if (configFlag(vc.config, ["experimental", "syncSettings", "setOwner"]) === false) return null;
  if (configFlag(vc.config, ["sync", "toHost", "namespaces", "enabled"]) === true) return null;
  return { namespace: vc.namespace, name: vc.name };
}

/** GetControllerOf: whether one of the object's owner references is its controller. */
function hasController(meta: JsonObject): boolean {
  const refs = ownField(meta, "ownerReferences");
  return Array.isArray(refs) && refs.some((r) => isObject(r) && ownField(r, "controller") === true);
}

/**
 * translate.GetOwnerReference: vCluster's Service as the only owner, a controller when the
 * virtual object has a controller. Only in the owner's namespace: the garbage collector resolves an
 * owner in its dependent's namespace, and would delete a copy elsewhere as orphaned.
 */
function hostOwnerReferences(
  virtualMeta: JsonObject,
  hostNamespace: string,
  vc: EndpointsVCluster,
  owner: OwnerService | undefined,
): JsonObject[] | null {
  const service = ownerServiceFor(vc);
  if (owner === undefined || owner.uid === "" || service === null) return null;
  if (service.namespace !== hostNamespace) return null;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      name: service.name,
      uid: owner.uid,
      controller: hasController(virtualMeta),
    },
  ];
}

function sortedKeys(map: Record<string, string>): string[] {
  return Object.keys(map).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function hostAnnotations(
  virtual: { name: string; namespace: string; uid: string; annotations: Json | undefined },
  host: { name: string; namespace: string },
  kind: string,
): Record<string, string> {
  const copied = Object.entries(stringMap(virtual.annotations) ?? {}).filter(
    ([key]) => !NOT_COPIED.has(key),
  );
  const out = new Map<string, string>(copied);
  const managed = sortedKeys(Object.fromEntries(copied)).filter(
    (key) => key !== BOOKKEEPING_ANNOTATIONS.managedLabels,
  );
  if (managed.length > 0) out.set(BOOKKEEPING_ANNOTATIONS.managedAnnotations, managed.join("\n"));
  out.set(BOOKKEEPING_ANNOTATIONS.name, virtual.name);
  out.set(BOOKKEEPING_ANNOTATIONS.namespace, virtual.namespace);
  out.set(BOOKKEEPING_ANNOTATIONS.uid, virtual.uid);
  out.set(BOOKKEEPING_ANNOTATIONS.kind, kind);
  out.set(BOOKKEEPING_ANNOTATIONS.hostName, host.name);
  out.set(BOOKKEEPING_ANNOTATIONS.hostNamespace, host.namespace);
  return Object.fromEntries(out);
}

/** Applies `rewrite` to every `targetRef` of Kind Pod in addresses and notReadyAddresses. */
function forEachPodTargetRef(endpoints: JsonObject, rewrite: (ref: JsonObject) => void): void {
  const subsets = ownField(endpoints, "subsets");
  if (!Array.isArray(subsets)) return;
  for (const subset of subsets) {
    if (!isObject(subset)) continue;
    for (const list of ["addresses", "notReadyAddresses"]) {
      const addresses = ownField(subset, list);
      if (Array.isArray(addresses)) addresses.forEach((a) => podTargetRef(a, rewrite));
    }
  }
}

function podTargetRef(address: Json, rewrite: (ref: JsonObject) => void): void {
  if (!isObject(address)) return;
  const ref = ownField(address, "targetRef");
  if (isObject(ref) && ownString(ref, "kind") === "Pod") rewrite(ref);
}

/**
 * mappings.VirtualToHost for a Pod: its host name and namespace. A targetRef without a namespace
 * keeps none (HostNamespace("") is ""), and its name is still made with the empty namespace
 * (`pod-x--x-vc`); one without a name gets neither (HostName of "" is empty). Go's empty strings
 * are omitted on the wire, so the keys are removed.
 */
function translatePodRef(ref: JsonObject, vc: EndpointsVCluster): void {
  const name = ownString(ref, "name");
  const namespace = ownString(ref, "namespace");
  const pod =
    name === ""
      ? { name: "", namespace: "" }
      : namespace === ""
        ? { name: hostName(name, "", vc.name), namespace: "" }
        : hostNameAndNamespace(name, namespace, vc);
  if (pod.name === "") delete ref["name"];
  else ref["name"] = pod.name;
  if (pod.namespace === "") delete ref["namespace"];
  else ref["namespace"] = pod.namespace;
  delete ref["uid"];
  delete ref["resourceVersion"];
}

/**
 * translateEndpointsToHost: the host Endpoints vCluster creates for `virtual`
 * (docs/reference.md#endpoints-syncer-create steps 1-5), before patches run. The input is not
 * modified. Whether vCluster syncs the object at all is controlledElsewhere's to say.
 */
export function translateEndpointsToHost(
  virtual: JsonObject,
  vc: EndpointsVCluster,
  opts: TranslateOptions = {},
): JsonObject {
  const out = deepCopy(virtual);
  const meta = ownObject(out, "metadata");
  const vName = ownString(meta, "name");
  const vNamespace = namespaceOf(meta);
  const host = hostNameAndNamespace(vName, vNamespace, vc);
  const uid = ownString(meta, "uid");
  const vLabels = stringMap(ownField(meta, "labels")) ?? {};
  const annotations = hostAnnotations(
    { name: vName, namespace: vNamespace, uid, annotations: ownField(meta, "annotations") },
    host,
    opts.kind ?? ENDPOINTS_KIND,
  );
  const scope: LabelScope = { name: vc.name, namespace: targetNamespaceOf(vc) };
  const kept = Object.entries(meta).filter(([key]) => !RESET_METADATA.includes(key));
  const hostMeta = new Map<string, Json>(kept);
  hostMeta.set("name", host.name);
  hostMeta.set("namespace", host.namespace);
  hostMeta.set("annotations", annotations);
  // An unlabelled virtual object still gets the marker: IsManaged needs it on the host.
  hostMeta.set("labels", hostLabelsMap(vLabels, null, vNamespace, true, scope) ?? {});
  const owners = hostOwnerReferences(meta, host.namespace, vc, opts.owner);
  if (owners !== null) hostMeta.set("ownerReferences", owners);
  out["metadata"] = Object.fromEntries(hostMeta);
  const endpoints = opts.kind === undefined || opts.kind === ENDPOINTS_KIND;
  if (endpoints) forEachPodTargetRef(out, (ref) => translatePodRef(ref, vc));
  return out;
}

/** A host Endpoints object that vCluster's syncer (or translateEndpointsToHost) made. */
export function isSyncedHostEndpoints(host: JsonObject): boolean {
  const meta = ownObject(host, "metadata");
  const name = ownString(ownObject(meta, "annotations"), BOOKKEEPING_ANNOTATIONS.name);
  return name !== "" && ownString(ownObject(meta, "labels"), MarkerLabel) !== "";
}

/** The virtual object a synced host object was made from, by its bookkeeping annotations. */
export function virtualRefFromHost(
  host: JsonObject,
): { name: string; namespace: string; uid?: string } | null {
  const annotations = ownObject(ownObject(host, "metadata"), "annotations");
  const name = ownString(annotations, BOOKKEEPING_ANNOTATIONS.name);
  if (name === "") return null;
  const namespace = ownString(annotations, BOOKKEEPING_ANNOTATIONS.namespace);
  const uid = ownString(annotations, BOOKKEEPING_ANNOTATIONS.uid);
  return uid === "" ? { name, namespace } : { name, namespace, uid };
}

function managedAnnotations(annotations: JsonObject): Record<string, string> {
  const managed = ownString(annotations, BOOKKEEPING_ANNOTATIONS.managedAnnotations);
  const keys = new Set(managed === "" ? [] : managed.split("\n"));
  const kept = Object.entries(stringMap(annotations) ?? {}).filter(([key]) => keys.has(key));
  return Object.fromEntries(kept);
}

/** How the host object was named, which tells how to reverse its Pod targetRefs. */
function reversePodRef(
  hostMeta: JsonObject,
  ref: { name: string; namespace: string },
  vcName: string,
): (targetRef: JsonObject) => void {
  const hostNs = ownString(hostMeta, "namespace");
  const multiNamespace = ownString(hostMeta, "name") === ref.name && hostNs !== ref.namespace;
  const suffix = `-x-${ref.namespace}-x-${vcName}`;
  return (targetRef) => {
    if (ownString(targetRef, "namespace") !== hostNs) return;
    const name = ownString(targetRef, "name");
    if (multiNamespace) {
      targetRef["namespace"] = ref.namespace;
    } else if (name.length > suffix.length && name.endsWith(suffix)) {
      // Hashed (over 63 bytes) names cannot be reversed; they are left as they are.
      targetRef["name"] = name.slice(0, name.length - suffix.length);
      targetRef["namespace"] = ref.namespace;
    }
  };
}

/**
 * The virtual Endpoints as far as the host object's bookkeeping tells: name, namespace and uid
 * from the annotations, only the managed annotations, labels mapped back, and Pod targetRefs
 * reversed where the host name is not hashed. Null-free: a host object without bookkeeping gives
 * an object without name. `vc` defaults to the managed-by label and the host namespace.
 */
export function rebuildVirtualFromHost(host: JsonObject, vc?: LabelScope): JsonObject {
  const out = deepCopy(host);
  const hostMeta = ownObject(out, "metadata");
  const annotations = ownObject(hostMeta, "annotations");
  const hostLabels = stringMap(ownField(hostMeta, "labels"));
  const scope = vc ?? {
    name: hostLabels === null ? "" : (hostLabels[MarkerLabel] ?? ""),
    namespace: ownString(hostMeta, "namespace"),
  };
  const ref = virtualRefFromHost(out) ?? { name: "", namespace: "" };
  const meta = new Map<string, Json>([
    ["name", ref.name],
    ["namespace", ref.namespace],
  ]);
  if (ref.uid !== undefined) meta.set("uid", ref.uid);
  const kept = managedAnnotations(annotations);
  if (Object.keys(kept).length > 0) meta.set("annotations", kept);
  const labels = virtualLabelsMap(hostLabels, null, scope);
  if (labels !== null && Object.keys(labels).length > 0) meta.set("labels", labels);
  forEachPodTargetRef(out, reversePodRef(hostMeta, ref, scope.name));
  out["metadata"] = Object.fromEntries(meta);
  return out;
}
