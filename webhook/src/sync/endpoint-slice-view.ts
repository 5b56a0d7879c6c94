// An EndpointSlice seen as the Endpoints it mirrors, so the Endpoints patches apply to it unchanged
// (docs/decisions.md EPS-28; docs/reference.md#endpointslices-and-patched-endpoints).
//
// The host's EndpointSlice mirroring controller and vCluster's EndpointSlice syncer both write the
// one host slice of a selector-less Service: the controller from the (patched) host Endpoints,
// vCluster from the virtual slice. The slice must therefore carry what the mirroring controller
// makes of the patched Endpoints, or the two rewrite each other for ever. The view is the
// controller's mapping read backwards (pkg/controller/endpointslicemirroring, addressToEndpoint):
// one subset whose `addresses` are the ready endpoints and `notReadyAddresses` the others, each
// address `{ip: addresses[0], hostname, nodeName, targetRef}`, and the slice's ports. Pure.

import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";

/** Go's GroupVersionKind.String() for discovery/v1 EndpointSlice (vCluster's object-kind value). */
export const ENDPOINT_SLICE_KIND = "discovery.k8s.io/v1, Kind=EndpointSlice";

/** The fields an Endpoints address has; the rest of a slice endpoint is kept as it was. */
const ADDRESS_FIELDS = ["hostname", "nodeName", "targetRef"] as const;

export class SliceViewError extends Error {}

/** Where each view address came from: the index of its endpoint in the slice. */
export interface SliceView {
  view: JsonObject;
  ready: number[];
  notReady: number[];
}

function isReady(endpoint: JsonObject): boolean {
  // Mirrored endpoints always say; a nil ready condition means ready (discovery/v1 docs).
  const conditions = endpoint["conditions"];
  return !(isObject(conditions) && conditions["ready"] === false);
}

/**
 * A Pod targetRef as vCluster's Endpoints syncer writes it to the host: without the virtual Pod's
 * uid and resourceVersion (pkg/controllers/resources/endpoints/translate.go). Its EndpointSlice
 * syncer keeps them, so the mirroring controller, which compares targetRefs with the uid, finds
 * vCluster's slice different from the host Endpoints on every pass.
 */
function hostTargetRef(ref: Json): Json {
  if (!isObject(ref) || ref["kind"] !== "Pod") return ref;
  return Object.fromEntries(
    Object.entries(ref).filter(([key]) => key !== "uid" && key !== "resourceVersion"),
  );
}

function toAddress(endpoint: JsonObject): JsonObject {
  const address: JsonObject = {};
  const addresses = endpoint["addresses"];
  if (Array.isArray(addresses) && typeof addresses[0] === "string") address["ip"] = addresses[0];
  for (const field of ADDRESS_FIELDS) {
    if (!Object.hasOwn(endpoint, field)) continue;
    const value = endpoint[field] as Json;
    address[field] = field === "targetRef" ? hostTargetRef(value) : value;
  }
  return address;
}

/**
 * The Endpoints view of a slice's `endpoints` and `ports`; either may be absent or null (a change
 * set, or a deletion in one), and the view then lacks that part, so no patch runs on it.
 */
export function endpointsView(part: { endpoints?: Json; ports?: Json }): SliceView {
  const subset: JsonObject = {};
  const ready: number[] = [];
  const notReady: number[] = [];
  if (part.endpoints !== undefined && part.endpoints !== null) {
    const endpoints = Array.isArray(part.endpoints) ? part.endpoints : [];
    const addresses: Json[] = [];
    const notReadyAddresses: Json[] = [];
    endpoints.forEach((endpoint, i) => {
      if (!isObject(endpoint)) throw new SliceViewError(`endpoints[${i}] is not an object`);
      (isReady(endpoint) ? ready : notReady).push(i);
      (isReady(endpoint) ? addresses : notReadyAddresses).push(toAddress(endpoint));
    });
    subset["addresses"] = addresses;
    subset["notReadyAddresses"] = notReadyAddresses;
  }
  if (part.ports !== undefined && part.ports !== null) subset["ports"] = part.ports;
  return { view: { subsets: [subset] }, ready, notReady };
}

function fromAddress(address: Json, base: JsonObject | undefined, ready: boolean): JsonObject {
  if (!isObject(address)) throw new SliceViewError("a patched address is not an object");
  // A new endpoint is what the mirroring controller makes of an address.
  const from: JsonObject = base ? structuredClone(base) : { conditions: { ready } };
  const endpoint: JsonObject = Object.fromEntries(
    Object.entries(from).filter(([key]) => !(ADDRESS_FIELDS as readonly string[]).includes(key)),
  );
  const rest = base && Array.isArray(base["addresses"]) ? base["addresses"].slice(1) : [];
  endpoint["addresses"] = typeof address["ip"] === "string" ? [address["ip"], ...rest] : rest;
  for (const field of ADDRESS_FIELDS) {
    if (Object.hasOwn(address, field) && address[field] !== null)
      endpoint[field] = address[field] as Json;
  }
  return endpoint;
}

/** The patched view's endpoints: each address over the endpoint it came from, in slice order. */
function patchedEndpoints(
  source: Json[],
  from: SliceView,
  addresses: Json[],
  notReadyAddresses: Json[],
): Json[] {
  // Same counts: every address maps back onto its endpoint, which keeps the fields Endpoints lack
  // (zone, hints, serving, terminating). A patch that added or removed addresses gets fresh
  // endpoints, as the mirroring controller would make them.
  const mapsBack =
    addresses.length === from.ready.length && notReadyAddresses.length === from.notReady.length;
  if (!mapsBack) {
    return [
      ...addresses.map((a) => fromAddress(a, undefined, true)),
      ...notReadyAddresses.map((a) => fromAddress(a, undefined, false)),
    ];
  }
  const out: Json[] = source.map((e) => structuredClone(e));
  from.ready.forEach(
    (at, i) => (out[at] = fromAddress(addresses[i]!, source[at] as JsonObject, true)),
  );
  from.notReady.forEach(
    (at, i) => (out[at] = fromAddress(notReadyAddresses[i]!, source[at] as JsonObject, false)),
  );
  return out;
}

/**
 * `part` (a slice, or a change set of one) with its `endpoints` and `ports` taken from the patched
 * view; only the parts the view was made from are written back.
 */
export function applyEndpointsView(
  part: JsonObject,
  from: SliceView,
  patched: JsonObject,
): JsonObject {
  const subsets = patched["subsets"];
  if (!Array.isArray(subsets) || subsets.length !== 1 || !isObject(subsets[0])) {
    throw new SliceViewError("an EndpointSlice is one subset: the patches must leave exactly one");
  }
  const subset = subsets[0];
  const out: JsonObject = { ...part };
  if (part["endpoints"] !== undefined && part["endpoints"] !== null) {
    const list = (key: string): Json[] => {
      const v = subset[key];
      return Array.isArray(v) ? v : [];
    };
    const source = Array.isArray(part["endpoints"]) ? part["endpoints"] : [];
    out["endpoints"] = patchedEndpoints(source, from, list("addresses"), list("notReadyAddresses"));
  }
  // A null part is a change set's deletion: it passes through, as on Endpoints.
  if (part["ports"] !== undefined && part["ports"] !== null) {
    if (subset["ports"] === undefined || subset["ports"] === null) delete out["ports"];
    else out["ports"] = subset["ports"];
  }
  return out;
}

const canonical = (v: Json): string =>
  JSON.stringify(v, (_k, value: unknown) =>
    isObject(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );

/**
 * `after`, or `before` when the two hold the same endpoints in another order. An EndpointSlice's
 * endpoints are a set (the mirroring controller compares them as one, and writes them in map
 * order); a write that only reorders them would bump the slice's generation and wake the mirroring
 * controller, which writes them in its own order again.
 */
export function keepStoredOrder(
  before: Json | undefined,
  after: Json | undefined,
): Json | undefined {
  if (!Array.isArray(before) || !Array.isArray(after) || before.length !== after.length)
    return after;
  const a = before.map(canonical).sort();
  const b = after.map(canonical).sort();
  return a.every((v, i) => v === b[i]) ? before : after;
}
