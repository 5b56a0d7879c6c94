// The mutating webhook for Endpoints (POST /mutate/endpoints): applies sync.toHost.endpoints
// patches while Endpoints move between a virtual cluster and its host.
//
// --side host:    host Endpoints that carry this vCluster's bookkeeping get `expression`s (virtual →
//                 host), but only in a host namespace the vCluster owns (host-ownership.ts,
//                 docs/decisions.md EPS-19): bookkeeping anyone can write does not make an object
//                 the vCluster's. Elsewhere the object is admitted untouched, with a warning.
//                 The EndpointSlices vCluster syncs for the same Services get the same patches
//                 through their Endpoints view (admit-endpoint-slices.ts, EPS-28).
// --side virtual: virtual Endpoints updates get `reverseExpression`s (host → virtual), on their
//                 annotations and labels only: that is all vCluster's Endpoints syncer carries host
//                 → virtual, so any other change is a user's or a controller's (EPS-29).
// On CREATE the whole object is the change set; on UPDATE only what changed (as vCluster does), so
// a transform never runs twice on a value it already rewrote.

import { KubeError, newBadRequest, newServiceUnavailable } from "../shared/status.js";
import { allow, allowWithPatch, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { setOwn } from "../patches/traverse.js";
import type { Direction, Json, JsonObject } from "../patches/types.js";
import { applyChangeSet, changeSet } from "./change-set.js";
import { applyGuardedPatches, type PatchRunner } from "./guarded-patch.js";
import type { Ownership } from "./host-ownership.js";
import { MarkerLabel } from "../patches/labels.js";
import {
  patchSliceWrite,
  sliceWriter,
  SlicePatchesError,
  type SlicePatchSets,
  type SliceWriter,
} from "./admit-endpoint-slices.js";
import { keepDropped } from "./carried-fields.js";
import { cancelEchoes } from "./virtual-echo.js";
import {
  isSyncedHostEndpoints,
  rebuildVirtualFromHost,
  virtualRefFromHost,
} from "./translate-endpoints.js";

export interface EndpointsAdmission {
  side: "host" | "virtual";
  enabled: boolean;
  /** The loaded config's patches in the sandbox (sync/patch-runner.ts). */
  run: PatchRunner;
  onPatchError: "deny" | "allow";
  /** Reads the virtual Endpoints (--virtual-kubeconfig); without it, it is rebuilt from bookkeeping. */
  virtualEndpoints?: (namespace: string, name: string) => Promise<JsonObject | null>;
  /** The vCluster (--vcluster-name) and which host namespaces it owns (--side host). */
  owner: {
    vclusterName: string;
    ownership(namespace: string): Ownership | "unknown";
  };
  /**
   * sync.toHost.endpointSlices' own patches (when the config has them and the kind is enabled):
   * every write to the host slice of one of the vCluster's Services gets them after the Endpoints
   * patches, the mirroring controller's writes included (admit-endpoint-slices.ts, KND-70).
   */
  slices?: PatchRunner;
  /** Every failing patch of `slices`, by index (undefined when no one patch is to blame). */
  onSlicePatchFailure?: (patchIndex: number | undefined) => void;
}

const KEPT = ["annotations", "labels", "finalizers"] as const;

type Kind = "endpoints" | "endpointslices";

function kindOf(req: AdmissionRequest): Kind | null {
  const r = req.resource;
  if (req.subResource !== "" || r.version !== "v1") return null;
  if (r.group === "" && r.resource === "endpoints") return "endpoints";
  if (r.group === "discovery.k8s.io" && r.resource === "endpointslices") return "endpointslices";
  return null;
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
  if (deps.side === "virtual") {
    // Only the metadata a host → virtual sync can have written is reverse-patched (EPS-29).
    if (changes.metadata === undefined) return null;
    const sent = { metadata: changes.metadata } as JsonObject;
    const job = { direction, changeSet: true, explain: true, ...context };
    const reversed = await applyGuardedPatches(deps.run, sent, job);
    // A field whose patch has no reverseExpression keeps the value sent: a tenant's own change
    // (KND-40); vgate's own patch coming back is cancelled below.
    const patched = keepDropped(sent, reversed.object, reversed.explain);
    const oldMeta = (old.metadata ?? {}) as JsonObject;
    const own = {
      metadata: { annotations: oldMeta.annotations ?? {}, labels: oldMeta.labels ?? {} },
    };
    const forward = await applyGuardedPatches(deps.run, own, { direction: "toHost", ...context });
    const metadata = cancelEchoes(
      changes.metadata as JsonObject,
      (patched.metadata ?? {}) as JsonObject,
      (forward.object.metadata ?? {}) as JsonObject,
      oldMeta,
    );
    return mergeUpdate(old, object, { ...changes, metadata });
  }
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
 * the namespace labels cannot be trusted yet. `writer` is the slice's patchedWriter (null for
 * Endpoints).
 */
function hostGate(
  req: AdmissionRequest,
  kind: Kind,
  writer: SliceWriter | null,
  deps: EndpointsAdmission,
): AdmissionReviewResponse | null {
  const ours =
    kind === "endpoints"
      ? isOurHostCopy(req.object as JsonObject, deps.owner.vclusterName)
      : writer !== null;
  if (!ours) return allow(req.uid);
  const verdict = deps.owner.ownership(req.namespace);
  if (verdict === "unknown") {
    return deny(
      req.uid,
      newServiceUnavailable(
        `${kind} ${JSON.stringify(objectRef(req))}: cannot tell whether namespace ${JSON.stringify(req.namespace)} belongs to vCluster ${JSON.stringify(deps.owner.vclusterName)}: the namespace cache is not synced`,
      ),
    );
  }
  if (verdict.owned) return null;
  return allow(req.uid, [`${kind} ${JSON.stringify(objectRef(req))} not patched: ${verdict.why}`]);
}

/**
 * Who wrote a host slice this admission patches: vCluster's syncer, or the mirroring controller
 * when the slice has patches of its own (without them its writes carry the patched Endpoints
 * already, EPS-28); null for any other slice.
 */
function patchedWriter(object: JsonObject, deps: EndpointsAdmission): SliceWriter | null {
  const writer = sliceWriter(object, deps.owner.vclusterName);
  return writer === "mirroring" && deps.slices === undefined ? null : writer;
}

function slicePatchSets(deps: EndpointsAdmission): SlicePatchSets {
  const sets: SlicePatchSets = {};
  if (deps.enabled) sets.endpoints = deps.run;
  if (deps.slices !== undefined) sets.slices = deps.slices;
  return sets;
}

function objectRef(req: AdmissionRequest): string {
  return `${req.namespace || "default"}/${req.name}`;
}

/** A host slice write by `writer` patched by the one rule (admit-endpoint-slices.ts), or null. */
async function patchSlice(
  req: AdmissionRequest,
  writer: SliceWriter | null,
  deps: EndpointsAdmission,
): Promise<JsonObject | null> {
  const object = req.object as JsonObject;
  const old = req.operation === "UPDATE" ? (req.oldObject as JsonObject | null) : null;
  return writer === null ? null : patchSliceWrite(writer, object, old, slicePatchSets(deps));
}

/** The answer to a failed patch: 503 as it came, else denied or (allow) admitted unchanged. */
function failed(
  req: AdmissionRequest,
  kind: Kind,
  deps: EndpointsAdmission,
  err: unknown,
): AdmissionReviewResponse {
  if (err instanceof KubeError && err.code === 503) return deny(req.uid, err);
  let what = "sync patch";
  if (err instanceof SlicePatchesError) {
    deps.onSlicePatchFailure?.(err.patchIndex);
    what = "sync.toHost.endpointSlices.patches";
  }
  const message = `${kind} ${JSON.stringify(objectRef(req))}: ${what} failed: ${err instanceof Error ? err.message : String(err)}`;
  if (deps.onPatchError === "allow")
    return allow(req.uid, [`${message}; admitted unchanged (--on-patch-error=allow)`]);
  return deny(req.uid, newBadRequest(message));
}

export async function admitEndpoints(
  req: AdmissionRequest,
  deps: EndpointsAdmission,
): Promise<AdmissionReviewResponse> {
  const kind = kindOf(req);
  if (kind === null) {
    const r = req.resource;
    return deny(
      req.uid,
      newBadRequest(
        `this endpoint admits core/v1 endpoints and discovery.k8s.io/v1 endpointslices only, but the request is for ${r.group || "core"}/${r.version} ${r.resource}${req.subResource ? `/${req.subResource}` : ""}; check the webhook configuration's rules`,
      ),
    );
  }
  if ((req.operation !== "CREATE" && req.operation !== "UPDATE") || !req.object) {
    return allow(req.uid);
  }
  // A slice with patches of its own gets them whether or not Endpoints are synced (KND-70).
  if (!deps.enabled && (kind === "endpoints" || deps.slices === undefined)) return allow(req.uid);
  // vCluster syncs an EndpointSlice's endpoints virtual → host only: nothing to reverse.
  if (kind === "endpointslices" && deps.side === "virtual") return allow(req.uid);
  // A slice is a host one from here on; who wrote it both gates and patches it: read it once.
  const writer = kind === "endpointslices" ? patchedWriter(req.object as JsonObject, deps) : null;
  if (deps.side === "host") {
    const gated = hostGate(req, kind, writer, deps);
    if (gated !== null) return gated;
  }
  try {
    const patched =
      kind === "endpoints" ? await patchObject(req, deps) : await patchSlice(req, writer, deps);
    return patched ? allowWithPatch(req.uid, req.object, patched) : allow(req.uid);
  } catch (err) {
    return failed(req, kind, deps, err);
  }
}
