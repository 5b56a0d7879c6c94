// --side host, EndpointSlices: one rule for every write to the host slice of a vCluster's
// selector-less Service, whoever writes it (docs/decisions.md EPS-28, KND-70..KND-72;
// docs/reference.md#endpointslices-and-patched-endpoints). The slice must end up as the virtual
// slice's endpoints with the Endpoints patches applied (through the slice's Endpoints view,
// endpoint-slice-view.ts) and then the slice's own sync.toHost.endpointSlices.patches:
//
// - vCluster's EndpointSlice syncer writes the virtual slice's endpoints (its bookkeeping names an
//   EndpointSlice): they get both, in that order;
// - the host's EndpointSlice mirroring controller writes what it derives from the host Endpoints,
//   which vgate patched already (its writes carry the Endpoints' bookkeeping, which it copies):
//   they get the slice's own patches only.
//
// On UPDATE only the change set is patched, so a writer that sends again what it derives sends, once
// patched, what is stored: kube-apiserver writes nothing and the two writers fall quiet.

import type { Json, JsonObject } from "../patches/types.js";
import { MarkerLabel } from "../patches/labels.js";
import { changeSet, mergeUpdate } from "./change-set.js";
import {
  applyEndpointsView,
  endpointsView,
  ENDPOINT_SLICE_KIND,
  keepStoredOrder,
} from "./endpoint-slice-view.js";
import { applyGuardedPatches, type PatchRunner } from "./guarded-patch.js";
import { virtualStubFromHost } from "./host-copy.js";
import {
  BOOKKEEPING_ANNOTATIONS,
  ENDPOINTS_KIND,
  isSyncedHostEndpoints,
  rebuildVirtualFromHost,
} from "./translate-endpoints.js";
import { SERVICE_NAME_LABEL, SLICE_MANAGED_BY_LABEL } from "./translate-endpoint-slices.js";
import { isObject } from "../shared/json.js";
import { KubeError } from "../shared/status.js";

/** Mirroring only ever makes IP slices; an FQDN slice has no Endpoints form. */
const IP_ADDRESS_TYPES = new Set(["IPv4", "IPv6"]);

/** The managed-by label value of kube-controller-manager's EndpointSlice mirroring controller. */
const MIRRORING_CONTROLLER = "endpointslicemirroring-controller.k8s.io";

/**
 * Who wrote a host slice of one of the vCluster's selector-less Services:
 * - "vcluster": vCluster's EndpointSlice syncer (bookkeeping kind EndpointSlice);
 * - "mirroring": the host's mirroring controller, from the host Endpoints vCluster's Endpoints
 *   syncer wrote: their bookkeeping (kind Endpoints, marker label) copied, its own managed-by label,
 *   and the Service-name label naming the Endpoints the bookkeeping's host name names, when set.
 */
export type SliceWriter = "vcluster" | "mirroring";

const own = (map: JsonObject, key: string): string =>
  Object.hasOwn(map, key) && typeof map[key] === "string" ? map[key] : "";

/**
 * The writer of `object` for `vclusterName`, or null when it is no slice of that vCluster's. Only
 * bookkeeping and labels: the caller checks the namespace is the vCluster's (EPS-19), which is what
 * keeps another vCluster's objects out of reach.
 */
export function sliceWriter(object: JsonObject, vclusterName: string): SliceWriter | null {
  if (!isSyncedHostEndpoints(object) || !IP_ADDRESS_TYPES.has(object["addressType"] as string))
    return null;
  const meta = object["metadata"] as JsonObject;
  const labels = isObject(meta["labels"]) ? meta["labels"] : {};
  const annotations = isObject(meta["annotations"]) ? meta["annotations"] : {};
  if (own(labels, MarkerLabel) !== vclusterName) return null;
  const kind = own(annotations, BOOKKEEPING_ANNOTATIONS.kind);
  if (kind === ENDPOINT_SLICE_KIND) return "vcluster";
  const service = own(labels, SERVICE_NAME_LABEL);
  const hostName = own(annotations, BOOKKEEPING_ANNOTATIONS.hostName);
  const mirrored =
    kind === ENDPOINTS_KIND &&
    own(labels, SLICE_MANAGED_BY_LABEL) === MIRRORING_CONTROLLER &&
    service !== "" &&
    (hostName === "" || hostName === service);
  return mirrored ? "mirroring" : null;
}

/** A failure of the slice's own patches (sync.toHost.endpointSlices), not of the Endpoints'. */
export class SlicePatchesError extends Error {
  override readonly name = "SlicePatchesError";
  constructor(
    readonly error: unknown,
    readonly patchIndex: number | undefined,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** The patch sets a host slice gets. */
export interface SlicePatchSets {
  /** sync.toHost.endpoints' patches, through the Endpoints view; absent: the view alone. */
  endpoints?: PatchRunner;
  /** sync.toHost.endpointSlices' own patches; absent: none. */
  slices?: PatchRunner;
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
 * `object` with the endpoints and ports it brings (on UPDATE: those of its change set) seen
 * through the Endpoints view, patched by `run` when given, and mapped back; null when it brings
 * none. Without `run` the view still turns Pod targetRefs into what the controller writes.
 */
async function throughView(
  object: JsonObject,
  old: JsonObject | null,
  run: PatchRunner | undefined,
): Promise<JsonObject | null> {
  const part = old ? pick(changeSet(old, object)) : pick(object);
  if (part.endpoints === undefined && part.ports === undefined) return null;
  const from = endpointsView(part);
  let patched = from.view;
  if (run !== undefined) {
    const job = {
      direction: "toHost" as const,
      changeSet: old !== null,
      hostObjectJson: JSON.stringify(old ? asEndpoints(old) : null),
      virtualObjectJson: JSON.stringify(rebuildVirtualFromHost(asEndpoints(object))),
    };
    patched = (await applyGuardedPatches(run, from.view, job)).object;
  }
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
  return out;
}

/**
 * The slice's own patches, as for any kind (KND-12): the whole object on CREATE, on UPDATE the
 * change set against the stored slice; metadata included, vCluster's bookkeeping out of reach.
 */
async function ownPatches(
  object: JsonObject,
  old: JsonObject | null,
  run: PatchRunner,
): Promise<JsonObject> {
  const job = {
    direction: "toHost" as const,
    changeSet: old !== null,
    hostObjectJson: JSON.stringify(old),
    virtualObjectJson: JSON.stringify(virtualStubFromHost(object)),
  };
  try {
    if (old === null) return (await applyGuardedPatches(run, object, job)).object;
    const changes = changeSet(old, object);
    if (Object.keys(changes).length === 0) return object;
    return mergeUpdate(old, object, (await applyGuardedPatches(run, changes, job)).object);
  } catch (err) {
    // The sandbox's 503 (no worker answered) is no patch's failure.
    if (err instanceof KubeError) throw err;
    const index = (err as { patchIndex?: unknown }).patchIndex;
    throw new SlicePatchesError(err, typeof index === "number" ? index : undefined);
  }
}

/** `out` with the stored order of its endpoints kept when they are the stored ones. */
function inStoredOrder(out: JsonObject, old: JsonObject | null): JsonObject {
  const endpoints = keepStoredOrder(old?.["endpoints"] ?? undefined, out["endpoints"]);
  return endpoints === undefined ? out : { ...out, endpoints };
}

/**
 * A write of `writer` to a host slice, patched by the one rule: vCluster's writes get the
 * Endpoints patches through the view, then the slice's own; the mirroring controller's the slice's
 * own only. Null when nothing is to be patched.
 */
export async function patchSliceWrite(
  writer: SliceWriter,
  object: JsonObject,
  old: JsonObject | null,
  sets: SlicePatchSets,
): Promise<JsonObject | null> {
  const viewed = writer === "vcluster" ? await throughView(object, old, sets.endpoints) : null;
  if (sets.slices === undefined) return viewed === null ? null : inStoredOrder(viewed, old);
  return inStoredOrder(await ownPatches(viewed ?? object, old, sets.slices), old);
}

/**
 * vCluster's write of a host slice, patched: on CREATE its endpoints and ports, on UPDATE the
 * endpoints and ports of the change set (so no value is patched twice) get the Endpoints patches
 * (`deps.run`) through the view, then the whole change set the slice's own (`deps.slices`, when
 * given); the stored order is kept when the endpoints are the same set. Null when nothing is to be
 * patched.
 */
export async function patchEndpointSlice(
  object: JsonObject,
  old: JsonObject | null,
  deps: { run: PatchRunner; slices?: PatchRunner },
): Promise<JsonObject | null> {
  const sets: SlicePatchSets = { endpoints: deps.run };
  if (deps.slices !== undefined) sets.slices = deps.slices;
  return patchSliceWrite("vcluster", object, old, sets);
}
