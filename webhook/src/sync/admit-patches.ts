// The mutating webhook for every kind the config patches (POST /mutate/patches, and
// /mutate/patches/virtual for the virtual cluster): one route that dispatches by the request's
// resource, group and plural name, any version (docs/decisions.md KND-10). It serves the
// sync.toHost kinds of LoadedVCluster.patchSets, each with its own patches (runFor(kind)), and on
// the virtual side the sync.fromHost kinds too (KND-50..KND-54).
//
// --side host:    host objects that carry this vCluster's bookkeeping (host-copy.ts) get
//                 `expression`s (virtual → host), only in a host namespace the vCluster owns
//                 (host-ownership.ts); cluster-scoped ones as KND-13 says. Anything else is
//                 admitted untouched, with a warning that says why.
// --side virtual: virtual UPDATEs get `reverseExpression`s (host → virtual) on the fields vCluster
//                 carries host → virtual for that kind only (carried-fields.ts), with vgate's own
//                 patch coming back cancelled (KND-14). A sync.fromHost kind's objects that
//                 vCluster's syncer writes from the host (from-host-objects.ts) get the kind's
//                 host → virtual keyword on CREATE and UPDATE (KND-50); a kind in both sections
//                 is dispatched by the object (KND-52).
// On CREATE the whole object is the change set; on UPDATE only what changed, as for Endpoints
// (admit-endpoints.ts), so nothing is patched twice and a re-sent patched object changes nothing.
// Endpoints keep their own admission (admit-endpoints.ts): this route hands them to it.

import type { PatchKind } from "../config/patch-kinds.js";
import { allow, allowWithPatch, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { setOwn } from "../patches/traverse.js";
import { PatchError, type Json, type JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";
import { KubeError, newBadRequest, newServiceUnavailable } from "../shared/status.js";
import { applyChangeSet, changeSet } from "./change-set.js";
import { carriedFields, cancelLeafEchoes, keepDropped, pickPaths } from "./carried-fields.js";
import {
  fromHostFields,
  fromHostStatus,
  mappedFromHost,
  markedFromHost,
} from "./from-host-objects.js";
import { applyGuardedPatches, type PatchJob, type PatchRunner } from "./guarded-patch.js";
import { notOurHostCopy, virtualStubFromHost, type CopyOwner } from "./host-copy.js";
import type { Ownership } from "./host-ownership.js";

/** One kind this route serves: its patches, loaded in the sandbox under their own key. */
export interface ServedKind {
  kind: PatchKind;
  /** sync.<section>.<key>.enabled: when false the kind's objects pass untouched. */
  enabled: boolean;
  run: PatchRunner;
  /**
   * sync.fromHost.configMaps, .secrets and namespaced custom resources: the mappings that name the
   * objects synced (KND-51, KND-90).
   */
  mappings?: Readonly<Record<string, string>>;
  /** Why the kind's objects pass untouched although it has patches (KND-53). */
  notPatched?: string;
}

export interface PatchesAdmission {
  side: "host" | "virtual";
  kinds: readonly ServedKind[];
  onPatchError: "deny" | "allow";
  owner: CopyOwner & { ownership(namespace: string): Ownership | "unknown" };
  /** Every failing patch, by kind and patch index (undefined when no one patch is to blame). */
  onPatchFailure?: (kind: PatchKind, patchIndex: number | undefined) => void;
  /** Endpoints (and their EndpointSlices view) keep their own admission (admit-endpoints.ts). */
  endpoints?: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
}

/** The label a kind has in answers and in the metric: `toHost.pods`, `toHost.customResources.x`. */
export function kindLabel(kind: PatchKind): string {
  return `${kind.section}.${kind.key}`;
}

const groupResource = (group: string, resource: string): string =>
  group === "" ? resource : `${resource}.${group}`;

/** The kinds `side` serves: the host sync.toHost ones only, the virtual side both sections. */
function onSide(kinds: readonly ServedKind[], side: PatchesAdmission["side"]): ServedKind[] {
  return kinds.filter((k) => side === "virtual" || k.kind.section === "toHost");
}

/** The kinds a webhook configuration of `side` should send here, as `resource.group` names. */
export function servedResources(
  kinds: readonly ServedKind[],
  side: PatchesAdmission["side"] = "host",
): string[] {
  const names = onSide(kinds, side).map((k) => groupResource(k.kind.group, k.kind.resource));
  return [...new Set(names)];
}

function misconfigured(req: AdmissionRequest, deps: PatchesAdmission): AdmissionReviewResponse {
  const r = req.resource;
  const names = servedResources(deps.kinds, deps.side);
  const none =
    deps.side === "host" ? "sync.toHost patches" : "sync.toHost or sync.fromHost patches";
  const serves = names.length === 0 ? `no kind (the config has no ${none})` : names.join(", ");
  return deny(
    req.uid,
    newBadRequest(
      `this endpoint admits the kinds the config patches only (${serves}), but the request is for ${r.group || "core"}/${r.version} ${r.resource}${req.subResource ? `/${req.subResource}` : ""}; check the webhook configuration's rules`,
    ),
  );
}

function objectRef(req: AdmissionRequest): string {
  return req.namespace === "" ? req.name : `${req.namespace}/${req.name}`;
}

/** The state after an update: the old object with the patched change set, other metadata as sent. */
function mergeUpdate(old: JsonObject, sent: JsonObject, changes: JsonObject): JsonObject {
  const merged = applyChangeSet(old, changes);
  const sentMeta = isObject(sent["metadata"]) ? sent["metadata"] : {};
  const mergedMeta = isObject(merged["metadata"]) ? merged["metadata"] : {};
  const meta: JsonObject = {};
  for (const [key, value] of Object.entries(sentMeta)) {
    if (key !== "annotations" && key !== "labels" && key !== "finalizers") setOwn(meta, key, value);
  }
  for (const key of ["annotations", "labels", "finalizers"]) {
    if (Object.hasOwn(mergedMeta, key)) meta[key] = mergedMeta[key] as Json;
  }
  return { ...merged, metadata: meta };
}

async function patchHost(req: AdmissionRequest, served: ServedKind): Promise<JsonObject | null> {
  const object = req.object as JsonObject;
  const old = req.operation === "UPDATE" && isObject(req.oldObject) ? req.oldObject : null;
  const job: PatchJob = {
    direction: "toHost",
    changeSet: old !== null,
    hostObjectJson: JSON.stringify(old),
    virtualObjectJson: JSON.stringify(virtualStubFromHost(object)),
  };
  if (old === null) return (await applyGuardedPatches(served.run, object, job)).object;
  const changes = changeSet(old, object);
  if (Object.keys(changes).length === 0) return null;
  const patched = (await applyGuardedPatches(served.run, changes, job)).object;
  return mergeUpdate(old, object, patched);
}

async function patchVirtual(req: AdmissionRequest, served: ServedKind): Promise<JsonObject | null> {
  const object = req.object as JsonObject;
  if (req.operation !== "UPDATE" || !isObject(req.oldObject)) return null;
  const old = req.oldObject;
  const changes = changeSet(old, object);
  const fields = carriedFields(served.kind.key);
  const carried = pickPaths(changes, fields);
  if (Object.keys(carried).length === 0) return null;
  const context = {
    hostObjectJson: JSON.stringify(null),
    virtualObjectJson: JSON.stringify(old),
  };
  const job = { direction: "toVirtual" as const, changeSet: true, explain: true, ...context };
  const reversed = await applyGuardedPatches(served.run, carried, job);
  const patched = keepDropped(carried, reversed.object, reversed.explain);
  const own = pickPaths(old, fields);
  const forward = await applyGuardedPatches(served.run, own, { direction: "toHost", ...context });
  const kept = cancelLeafEchoes(carried, patched, forward.object, own) as JsonObject;
  return mergeUpdate(old, object, { ...changes, ...kept });
}

/**
 * --side virtual, a sync.fromHost kind: the syncer's copy of a host object gets the kind's host →
 * virtual keyword, the whole object on CREATE, on UPDATE the change set of the fields the syncer
 * copies from the host (KND-50).
 */
async function patchFromHost(
  req: AdmissionRequest,
  served: ServedKind,
): Promise<JsonObject | null> {
  const object = req.object as JsonObject;
  const old = req.operation === "UPDATE" && isObject(req.oldObject) ? req.oldObject : null;
  const job: PatchJob = {
    direction: "toVirtual",
    changeSet: old !== null,
    hostObjectJson: JSON.stringify(null),
    virtualObjectJson: JSON.stringify(old),
  };
  if (old === null) return (await applyGuardedPatches(served.run, object, job)).object;
  const changes = changeSet(old, object);
  const copied = pickPaths(changes, fromHostFields(served.kind.key, changes));
  if (Object.keys(copied).length === 0) return null;
  const patched = (await applyGuardedPatches(served.run, copied, job)).object;
  return mergeUpdate(old, object, { ...changes, ...patched });
}

/** Whether the virtual object is one vCluster's syncer writes for the fromHost `served` (KND-51). */
function syncedFromHost(req: AdmissionRequest, served: ServedKind): boolean {
  if (!served.enabled) return false;
  if (isObject(req.object) && !markedFromHost(served.kind.key, req.object)) return false;
  if (served.mappings === undefined) return true;
  return mappedFromHost(served.kind.key, served.mappings, req.namespace, req.name);
}

/**
 * --side host: null to go on, or the answer: untouched with a warning (not this vCluster's copy, or
 * not in a namespace it owns), or 503 while the namespace labels cannot be trusted yet.
 */
function hostGate(
  req: AdmissionRequest,
  served: ServedKind,
  deps: PatchesAdmission,
): AdmissionReviewResponse | null {
  const what = `${served.kind.kind || req.kind.kind} ${JSON.stringify(objectRef(req))}`;
  const notOurs = notOurHostCopy(req.object as JsonObject, req.kind, deps.owner);
  if (notOurs !== null) {
    return allow(req.uid, [
      `${what} not patched: not a copy of vCluster ${JSON.stringify(deps.owner.vclusterName)}: ${notOurs}`,
    ]);
  }
  if (req.namespace === "") return null;
  const verdict = deps.owner.ownership(req.namespace);
  if (verdict === "unknown") {
    return deny(
      req.uid,
      newServiceUnavailable(
        `${what}: cannot tell whether namespace ${JSON.stringify(req.namespace)} belongs to vCluster ${JSON.stringify(deps.owner.vclusterName)}: the namespace cache is not synced`,
      ),
    );
  }
  if (verdict.owned) return null;
  return allow(req.uid, [`${what} not patched: ${verdict.why}`]);
}

/**
 * The patch set for the request. On the virtual side a kind in both sections goes to its
 * sync.fromHost set when the object is one the fromHost syncer writes, else to its sync.toHost
 * set (KND-52).
 */
function find(req: AdmissionRequest, deps: PatchesAdmission): ServedKind | undefined {
  const { group, resource } = req.resource;
  const sets = onSide(deps.kinds, deps.side).filter(
    (k) => k.kind.group === group && k.kind.resource === resource,
  );
  const from = sets.find((k) => k.kind.section === "fromHost");
  const to = sets.find((k) => k.kind.section === "toHost");
  if (from !== undefined && (to === undefined || syncedFromHost(req, from))) return from;
  return to;
}

/**
 * Endpoints, and on the host side EndpointSlices when the config patches Endpoints or them, go to
 * the Endpoints admission: the same answers as /mutate/endpoints. A slice gets the Endpoints
 * patches (EPS-28) and then its own, whoever writes it (KND-70), which the Endpoints admission
 * knows (EndpointsAdmission.slices). The virtual side keeps the slice's own set (KND-14).
 */
function toEndpoints(
  req: AdmissionRequest,
  served: ServedKind | undefined,
  deps: PatchesAdmission,
): boolean {
  if (!deps.endpoints) return false;
  const { group, resource } = req.resource;
  if (group === "" && resource === "endpoints") return served !== undefined;
  if (group !== "discovery.k8s.io" || resource !== "endpointslices") return false;
  if (served !== undefined) return deps.side === "host" && served.kind.section === "toHost";
  return deps.kinds.some((k) => k.kind.section === "toHost" && k.kind.key === "endpoints");
}

/**
 * Whether `deps` has patches for the request's resource: its own set, or for an EndpointSlice the
 * Endpoints' (EPS-28). With --discover-vclusters a kind one vCluster does not patch is admitted
 * untouched, where --config refuses it as a misconfiguration (docs/decisions.md KND-31).
 */
export function patchesResource(req: AdmissionRequest, deps: PatchesAdmission): boolean {
  const served = find(req, deps);
  return served !== undefined || toEndpoints(req, served, deps);
}

/** The status subresource only where vCluster carries the status host → virtual. */
function subResourceServed(req: AdmissionRequest, served: ServedKind, deps: PatchesAdmission) {
  if (req.subResource === "") return true;
  if (req.subResource !== "status" || deps.side !== "virtual") return false;
  return served.kind.section === "fromHost"
    ? fromHostStatus(served.kind.key)
    : carriedFields(served.kind.key).includes("status");
}

/** Why a virtual-side object of a kind with patches is not patched, or null to go on. */
function virtualGate(req: AdmissionRequest, served: ServedKind): string | null {
  if (served.notPatched !== undefined) return served.notPatched;
  if (served.kind.section === "fromHost" && !syncedFromHost(req, served)) {
    if (served.mappings !== undefined) {
      return `sync.${kindLabel(served.kind)}.mappings do not bring it from the host`;
    }
    return `sync.${kindLabel(served.kind)} did not import it: it lacks vCluster's import label`;
  }
  return null;
}

async function patchFor(req: AdmissionRequest, served: ServedKind, side: PatchesAdmission["side"]) {
  if (side === "host") return patchHost(req, served);
  return served.kind.section === "fromHost"
    ? patchFromHost(req, served)
    : patchVirtual(req, served);
}

export async function admitPatches(
  req: AdmissionRequest,
  deps: PatchesAdmission,
): Promise<AdmissionReviewResponse> {
  const served = find(req, deps);
  if (toEndpoints(req, served, deps)) return deps.endpoints!(req);
  if (served === undefined || !subResourceServed(req, served, deps)) {
    return misconfigured(req, deps);
  }
  if (
    !served.enabled ||
    (req.operation !== "CREATE" && req.operation !== "UPDATE") ||
    !req.object
  ) {
    return allow(req.uid);
  }
  if (deps.side === "host") {
    const gated = hostGate(req, served, deps);
    if (gated !== null) return gated;
  }
  const what = `${served.kind.kind || req.kind.kind} ${JSON.stringify(objectRef(req))}`;
  const why = virtualGate(req, served);
  if (why !== null) return allow(req.uid, [`${what} not patched: ${why}`]);
  try {
    const patched = await patchFor(req, served, deps.side);
    return patched ? allowWithPatch(req.uid, req.object, patched) : allow(req.uid);
  } catch (err) {
    if (err instanceof KubeError && err.code === 503) return deny(req.uid, err);
    const index = err instanceof PatchError ? err.patchIndex : undefined;
    deps.onPatchFailure?.(served.kind, index);
    const message = `${what}: sync.${kindLabel(served.kind)}.patches failed: ${err instanceof Error ? err.message : String(err)}`;
    if (deps.onPatchError === "allow")
      return allow(req.uid, [`${message}; admitted unchanged (--on-patch-error=allow)`]);
    return deny(req.uid, newBadRequest(message));
  }
}
