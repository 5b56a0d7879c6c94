// --side host, EndpointSlices: the slices vCluster's EndpointSlice syncer writes for this vCluster
// get the Endpoints patches, applied through the slice's Endpoints view (endpoint-slice-view.ts),
// so that the one host slice kube-proxy reads carries the patched addresses, and vCluster and the
// host's EndpointSlice mirroring controller write the same endpoints into it
// (docs/decisions.md EPS-28; docs/reference.md#endpointslices-and-patched-endpoints).
//
// Only vCluster's own writes are patched: their bookkeeping names an EndpointSlice. The mirroring
// controller's writes to the same slice carry the host Endpoints' bookkeeping instead (it copies
// the Endpoints' annotations) and are mirrored from Endpoints that are patched already.

import type { Json, JsonObject } from "../patches/types.js";
import { MarkerLabel } from "../patches/labels.js";
import { changeSet } from "./change-set.js";
import {
  applyEndpointsView,
  endpointsView,
  ENDPOINT_SLICE_KIND,
  keepStoredOrder,
} from "./endpoint-slice-view.js";
import { applyGuardedPatches, type PatchRunner } from "./guarded-patch.js";
import {
  BOOKKEEPING_ANNOTATIONS,
  isSyncedHostEndpoints,
  rebuildVirtualFromHost,
} from "./translate-endpoints.js";
import { isObject } from "../shared/json.js";

/** Mirroring only ever makes IP slices; an FQDN slice has no Endpoints form. */
const IP_ADDRESS_TYPES = new Set(["IPv4", "IPv6"]);

/** A slice vCluster's EndpointSlice syncer wrote for `vclusterName`. */
export function isOurSliceCopy(object: JsonObject, vclusterName: string): boolean {
  if (!isSyncedHostEndpoints(object) || !IP_ADDRESS_TYPES.has(object["addressType"] as string))
    return false;
  const meta = object["metadata"] as JsonObject;
  const labels = isObject(meta["labels"]) ? meta["labels"] : {};
  const annotations = isObject(meta["annotations"]) ? meta["annotations"] : {};
  return (
    labels[MarkerLabel] === vclusterName &&
    annotations[BOOKKEEPING_ANNOTATIONS.kind] === ENDPOINT_SLICE_KIND
  );
}

/** The slice as Endpoints, for context.hostObject and context.virtualObject. */
function asEndpoints(slice: JsonObject): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: slice["metadata"] ?? {},
    ...endpointsView({ endpoints: slice["endpoints"], ports: slice["ports"] }).view,
  };
}

function pick(object: JsonObject): { endpoints?: Json; ports?: Json } {
  const part: { endpoints?: Json; ports?: Json } = {};
  if (Object.hasOwn(object, "endpoints")) part.endpoints = object["endpoints"] as Json;
  if (Object.hasOwn(object, "ports")) part.ports = object["ports"] as Json;
  return part;
}

/**
 * The patched slice, or null when nothing is to be patched: on CREATE its endpoints and ports, on
 * UPDATE the endpoints and ports of the change set (so no value is patched twice), with the stored
 * order kept when the endpoints are the same set.
 */
export async function patchEndpointSlice(
  object: JsonObject,
  old: JsonObject | null,
  deps: { run: PatchRunner },
): Promise<JsonObject | null> {
  const part = old ? pick(changeSet(old, object)) : pick(object);
  if (part.endpoints === undefined && part.ports === undefined) return null;
  const from = endpointsView(part);
  const job = {
    direction: "toHost" as const,
    changeSet: old !== null,
    hostObjectJson: JSON.stringify(old ? asEndpoints(old) : null),
    virtualObjectJson: JSON.stringify(rebuildVirtualFromHost(asEndpoints(object))),
  };
  const patched = (await applyGuardedPatches(deps.run, from.view, job)).object;
  const back = applyEndpointsView(part as JsonObject, from, patched);
  // The patched parts replace the sent ones; a part the patches removed is removed.
  const replaced = (key: string) => key === "endpoints" || key === "ports";
  const out: JsonObject = Object.fromEntries(
    Object.entries(object).filter(([key]) => !replaced(key) || !Object.hasOwn(part, key)),
  );
  for (const key of ["endpoints", "ports"] as const) {
    const value = back[key];
    if (Object.hasOwn(part, key) && value !== undefined && value !== null) out[key] = value;
  }
  const endpoints = keepStoredOrder(old?.["endpoints"] ?? undefined, out["endpoints"]);
  if (endpoints !== undefined) out["endpoints"] = endpoints;
  return out;
}
