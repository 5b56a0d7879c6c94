// What vCluster's EndpointSlice syncer does to a virtual EndpointSlice before patches run
// (pkg/controllers/resources/endpointslices/translate.go, v0.34.0; docs/reference.md
// #endpointslice-syncer), as `vgate sync` writes it (docs/decisions.md KND-80, KND-81):
// - metadata as for every synced object (translate.HostMetadata: translate-endpoints.ts), with the
//   object-kind `discovery.k8s.io/v1, Kind=EndpointSlice`;
// - `kubernetes.io/service-name` names the host Service. vCluster writes
//   `<service>-x-<namespace>-x-<vCluster>` unhashed (translateSvcName), which is no valid label
//   value past 63 bytes and no Service at all in multi-namespace mode; vgate writes the name the
//   host Service really has (hostNameAndNamespace), which is the same string wherever vCluster's is
//   valid;
// - Pod targetRefs get the Pod's host name and namespace (mappings.VirtualToHost), the rest of the
//   endpoint as it was;
// - `endpointslice.kubernetes.io/managed-by` names vgate sync instead of the virtual mirroring
//   controller (KND-82): the host's mirroring controller deletes every slice carrying its own label
//   for Endpoints labelled skip-mirror, which vgate sync's host Endpoints are.
// Pure.

import { hostName } from "../patches/host-names.js";
import { ControllerLabel, MarkerLabel } from "../patches/labels.js";
import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";
import { ENDPOINT_SLICE_KIND } from "./endpoint-slice-view.js";
import {
  BOOKKEEPING_ANNOTATIONS,
  hostNameAndNamespace,
  translateEndpointsToHost,
  type OwnerService,
} from "./translate-endpoints.js";

/** discovery/v1 well-known labels (k8s.io/api/discovery/v1 well_known_labels.go). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
export const SLICE_MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
export const SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror";

/** The managed-by value of the host slices vgate sync writes: its own, so no controller adopts them. */
export const VGATE_SLICE_MANAGER = "vgate-sync.vgate.loft.sh";

/** The syncer's name (NewGenericTranslator): a controlled-by annotation naming it is its own. */
const ENDPOINT_SLICE_SYNCER_NAME = "endpointslice";

type SliceVCluster = Parameters<typeof translateEndpointsToHost>[1];

const own = (obj: JsonObject, key: string): Json | undefined =>
  Object.hasOwn(obj, key) ? obj[key] : undefined;
const ownObject = (obj: JsonObject, key: string): JsonObject => {
  const v = own(obj, key);
  return isObject(v) ? v : {};
};
const ownString = (obj: JsonObject, key: string): string => {
  const v = own(obj, key);
  return typeof v === "string" ? v : "";
};

/** The virtual Service a virtual slice belongs to (its service-name label), or "" without one. */
export function sliceServiceName(slice: JsonObject): string {
  return ownString(ownObject(ownObject(slice, "metadata"), "labels"), SERVICE_NAME_LABEL);
}

/**
 * Why vCluster's syncers leave the slice alone (SyncController.excludeVirtual/excludePhysical): a
 * non-empty controlled-by label, or a controlled-by annotation naming another syncer. Null when
 * they sync it.
 */
export function sliceControlledElsewhere(obj: JsonObject): string | null {
  const meta = ownObject(obj, "metadata");
  const label = ownString(ownObject(meta, "labels"), ControllerLabel);
  if (label !== "") return `it is labelled ${ControllerLabel}=${label}`;
  const annotation = ownString(ownObject(meta, "annotations"), ControllerLabel);
  if (annotation !== "" && annotation !== ENDPOINT_SLICE_SYNCER_NAME) {
    return `it is annotated ${ControllerLabel}: ${annotation}`;
  }
  return null;
}

/** The host name and namespace of a virtual slice: those of any namespaced object (EPS-2). */
export function hostSliceKey(
  key: { namespace: string; name: string },
  vc: SliceVCluster,
): { namespace: string; name: string } {
  return hostNameAndNamespace(key.name, key.namespace, vc);
}

/** mappings.VirtualToHost for a Pod targetRef; uid and resourceVersion stay, as vCluster keeps them. */
function translatePodRef(ref: JsonObject, vc: SliceVCluster): void {
  const name = ownString(ref, "name");
  const namespace = ownString(ref, "namespace");
  if (name === "") {
    delete ref["name"];
    delete ref["namespace"];
    return;
  }
  const pod =
    namespace === ""
      ? { name: hostName(name, "", vc.name), namespace: "" }
      : hostNameAndNamespace(name, namespace, vc);
  ref["name"] = pod.name;
  if (pod.namespace === "") delete ref["namespace"];
  else ref["namespace"] = pod.namespace;
}

/** The slice's endpoints with Pod targetRefs translated (translateSpec); the input is not modified. */
function hostSliceEndpoints(endpoints: Json | undefined, vc: SliceVCluster): Json | undefined {
  if (!Array.isArray(endpoints)) return endpoints;
  return endpoints.map((endpoint) => {
    if (!isObject(endpoint)) return endpoint;
    const copy = structuredClone(endpoint);
    const ref = own(copy, "targetRef");
    if (isObject(ref) && ownString(ref, "kind") === "Pod") translatePodRef(ref, vc);
    return copy;
  });
}

/**
 * translateEndpointSliceToHost: the host slice vgate sync creates for `virtual`, before patches
 * run. The input is not modified.
 */
export function translateEndpointSliceToHost(
  virtual: JsonObject,
  vc: SliceVCluster,
  opts: { owner?: OwnerService } = {},
): JsonObject {
  const out = translateEndpointsToHost(virtual, vc, { kind: ENDPOINT_SLICE_KIND, ...opts });
  const meta = ownObject(out, "metadata");
  const labels = { ...ownObject(meta, "labels") };
  const vNamespace = ownString(ownObject(virtual, "metadata"), "namespace") || "default";
  const service = sliceServiceName(virtual);
  // vCluster sets the label whatever the virtual slice says; without a Service there is no sync.
  if (service !== "")
    labels[SERVICE_NAME_LABEL] = hostNameAndNamespace(service, vNamespace, vc).name;
  labels[SLICE_MANAGED_BY_LABEL] = VGATE_SLICE_MANAGER;
  out["metadata"] = { ...meta, labels };
  const endpoints = hostSliceEndpoints(own(out, "endpoints"), vc);
  if (endpoints !== undefined) out["endpoints"] = endpoints;
  return out;
}

/**
 * The virtual slice a host slice is the copy of, or null when it is not one of this vCluster's
 * copies (vCluster's IsManaged, as virtualKeyFromHost checks it for Endpoints, with the slice kind).
 */
export function virtualSliceKeyFromHost(
  host: JsonObject,
  vc: SliceVCluster,
): { namespace: string; name: string } | null {
  if (sliceControlledElsewhere(host) !== null) return null;
  const meta = ownObject(host, "metadata");
  if (ownString(ownObject(meta, "labels"), MarkerLabel) !== vc.name) return null;
  const annotations = ownObject(meta, "annotations");
  const A = BOOKKEEPING_ANNOTATIONS;
  const name = ownString(annotations, A.name);
  const kind = ownString(annotations, A.kind);
  if (name === "" || (kind !== "" && kind !== ENDPOINT_SLICE_KIND)) return null;
  const key = { namespace: ownString(annotations, A.namespace) || "default", name };
  const expected = hostSliceKey(key, vc);
  const hostName_ = ownString(meta, "name");
  const hostNamespace = ownString(meta, "namespace");
  if (hostName_ !== expected.name || hostNamespace !== expected.namespace) return null;
  const hn = ownString(annotations, A.hostName);
  const hns = ownString(annotations, A.hostNamespace);
  if ((hn !== "" && hn !== hostName_) || (hns !== "" && hns !== hostNamespace)) return null;
  return key;
}
