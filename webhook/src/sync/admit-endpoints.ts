// The mutating webhook for Endpoints (POST /mutate/endpoints): applies sync.toHost.endpoints
// patches while Endpoints move between a virtual cluster and its host.
//
// --side host:    host Endpoints that carry this vCluster's bookkeeping get `expression`s (virtual →
//                 host), but only in a host namespace the vCluster owns (host-ownership.ts,
//                 docs/decisions.md EPS-19): bookkeeping anyone can write does not make an object
//                 the vCluster's. Elsewhere the object is admitted untouched, with a warning.
// --side virtual: virtual Endpoints updates get `reverseExpression`s (host → virtual).
// On CREATE the whole object is the change set; on UPDATE only what changed (as vCluster does), so
// a transform never runs twice on a value it already rewrote.

import { KubeError, newBadRequest, newServiceUnavailable } from "../api/status.js";
import { allow, allowWithPatch, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { setOwn } from "../patches/traverse.js";
import type { Direction, Json, JsonObject } from "../patches/types.js";
import { applyChangeSet, changeSet } from "./change-set.js";
import { applyGuardedPatches, type PatchRunner } from "./guarded-patch.js";
import type { Ownership } from "./host-ownership.js";
import { MarkerLabel } from "../patches/labels.js";
import {
  isSyncedHostEndpoints,
  rebuildVirtualFromHost,
  virtualRefFromHost,
} from "./translate-endpoints.js";

export interface EndpointsAdmission {
  side: "host" | "virtual";
  enabled: boolean;
  /** The loaded config's patches in the sandbox (cli/patch-runner.ts). */
  run: PatchRunner;
  onPatchError: "deny" | "allow";
  /** Reads the virtual Endpoints (--virtual-kubeconfig); without it, it is rebuilt from bookkeeping. */
  virtualEndpoints?: (namespace: string, name: string) => Promise<JsonObject | null>;
  /** The vCluster (--vcluster-name) and which host namespaces it owns (--side host). */
  owner: {
    vclusterName: string;
    ownership(namespace: string): Ownership | "unknown";
  };
}

const KEPT = ["annotations", "labels", "finalizers"] as const;

function isEndpoints(req: AdmissionRequest): boolean {
  const r = req.resource;
  return (
    r.group === "" && r.version === "v1" && r.resource === "endpoints" && req.subResource === ""
  );
}

/** The state after an update: the old object with the patched change set, other metadata as sent. */
function mergeUpdate(oldObject: JsonObject, sent: JsonObject, patched: JsonObject): JsonObject {
  const merged = applyChangeSet(oldObject, patched);
  const sentMeta = (sent.metadata ?? {}) as JsonObject;
  const mergedMeta = (merged.metadata ?? {}) as JsonObject;
  const meta: JsonObject = {};
  for (const [key, value] of Object.entries(sentMeta)) {
    if (!(KEPT as readonly string[]).includes(key)) setOwn(meta, key, value);
  }
  for (const key of KEPT) if (Object.hasOwn(mergedMeta, key)) meta[key] = mergedMeta[key] as Json;
  return { ...merged, metadata: meta };
}

async function virtualObjectFor(host: JsonObject, deps: EndpointsAdmission): Promise<Json> {
  const ref = virtualRefFromHost(host);
  if (ref && deps.virtualEndpoints) return deps.virtualEndpoints(ref.namespace, ref.name);
  return rebuildVirtualFromHost(host);
}

async function patchObject(
  req: AdmissionRequest,
  deps: EndpointsAdmission,
): Promise<JsonObject | null> {
  const object = req.object as JsonObject;
  const old = req.oldObject as JsonObject | null;
  if (deps.side === "host" && !isSyncedHostEndpoints(object)) return null;
  if (deps.side === "virtual" && req.operation !== "UPDATE") return null;
  const direction: Direction = deps.side === "host" ? "toHost" : "toVirtual";
  const hostObject: Json = deps.side === "host" ? old : null;
  const virtualObject: Json = deps.side === "host" ? await virtualObjectFor(object, deps) : old;
  const context = {
    hostObjectJson: JSON.stringify(hostObject),
    virtualObjectJson: JSON.stringify(virtualObject),
  };
  const run = async (target: JsonObject, isChangeSet: boolean): Promise<JsonObject> => {
    const job = { direction, changeSet: isChangeSet, ...context };
    return (await applyGuardedPatches(deps.run, target, job)).object;
  };
  if (req.operation === "CREATE" || !old) return run(object, false);
  const changes = changeSet(old, object);
  if (Object.keys(changes).length === 0) return null;
  return mergeUpdate(old, object, await run(changes, true));
}

/** A host object this vCluster's sync wrote: its bookkeeping, with the managed-by label naming it. */
function isOurHostCopy(object: JsonObject, vclusterName: string): boolean {
  if (!isSyncedHostEndpoints(object)) return false;
  const meta = object.metadata;
  const labels = meta && typeof meta === "object" && !Array.isArray(meta) ? meta.labels : undefined;
  if (!labels || typeof labels !== "object" || Array.isArray(labels)) return false;
  return Object.hasOwn(labels, MarkerLabel) && labels[MarkerLabel] === vclusterName;
}

/**
 * --side host: whether the object may be patched at all. Null: go on. A response: admitted
 * untouched (another vCluster's, or not in a namespace this one owns), or refused with 503 while
 * the namespace labels cannot be trusted yet.
 */
function hostGate(req: AdmissionRequest, deps: EndpointsAdmission): AdmissionReviewResponse | null {
  const object = req.object as JsonObject;
  if (!isOurHostCopy(object, deps.owner.vclusterName)) return allow(req.uid);
  const verdict = deps.owner.ownership(req.namespace);
  if (verdict === "unknown") {
    return deny(
      req.uid,
      newServiceUnavailable(
        `endpoints ${JSON.stringify(objectRef(req))}: cannot tell whether namespace ${JSON.stringify(req.namespace)} belongs to vCluster ${JSON.stringify(deps.owner.vclusterName)}: the namespace cache is not synced`,
      ),
    );
  }
  if (verdict.owned) return null;
  return allow(req.uid, [
    `endpoints ${JSON.stringify(objectRef(req))} not patched: ${verdict.why}`,
  ]);
}

function objectRef(req: AdmissionRequest): string {
  return `${req.namespace || "default"}/${req.name}`;
}

export async function admitEndpoints(
  req: AdmissionRequest,
  deps: EndpointsAdmission,
): Promise<AdmissionReviewResponse> {
  if (!isEndpoints(req)) {
    const r = req.resource;
    return deny(
      req.uid,
      newBadRequest(
        `this endpoint admits core/v1 endpoints only, but the request is for ${r.group || "core"}/${r.version} ${r.resource}; check the webhook configuration's rules`,
      ),
    );
  }
  if (!deps.enabled || (req.operation !== "CREATE" && req.operation !== "UPDATE") || !req.object) {
    return allow(req.uid);
  }
  if (deps.side === "host") {
    const gated = hostGate(req, deps);
    if (gated !== null) return gated;
  }
  try {
    const patched = await patchObject(req, deps);
    return patched ? allowWithPatch(req.uid, req.object, patched) : allow(req.uid);
  } catch (err) {
    if (err instanceof KubeError && err.code === 503) return deny(req.uid, err);
    const message = `endpoints ${JSON.stringify(objectRef(req))}: sync patch failed: ${err instanceof Error ? err.message : String(err)}`;
    if (deps.onPatchError === "allow")
      return allow(req.uid, [`${message}; admitted unchanged (--on-patch-error=allow)`]);
    return deny(req.uid, newBadRequest(message));
  }
}
