// The EndpointSlice reconciler of `vgate sync` (docs/decisions.md KND-80..KND-83), next to the
// Endpoints one (reconcile.ts): given what the caches know of one virtual EndpointSlice, it answers
// the writes that make its host copy. It never writes itself (contracts.ts).
//
// The flow, in order (vCluster's EndpointSlice syncer, pkg/controllers/resources/endpointslices/
// syncer.go ReconcileStart and Sync, with the project's overrides as for Endpoints):
// 1. Slice sync off (`sync.toHost.endpointSlices.enabled: false`, without --alongside-vcluster):
//    nothing; host copies are left alone (as EPS-10 for Endpoints).
// 2. A virtual slice another syncer controls is left alone, its copy included.
// 3. No virtual slice: our host copy is deleted.
// 4. The Service gate: the slice's `kubernetes.io/service-name` names the Service; none, or
//    `default/kubernetes`, nothing; a Service with a selector, our host copy is deleted (the host's
//    EndpointSlice controller makes that Service's slices).
// 5. A host object at the copy's name that is not our copy is never touched: SyncError (EPS-11;
//    vCluster deletes it).
// 6. The copy is a function of the virtual slice: vCluster's translation
//    (translate-endpoint-slices.ts), then the Endpoints patches through the slice's Endpoints view
//    (EPS-28, admit-endpoint-slices.ts patchEndpointSlice), then `sync.toHost.endpointSlices.patches`.
//    Create writes it; update writes it over the copy when endpoints, ports, labels or the copied
//    annotations differ, keeping the host's own annotations. Nothing flows back to the virtual
//    slice: its writer is the virtual cluster's mirroring controller, which would undo it.

import { isDeepStrictEqual } from "node:util";
import type { Direction, JsonObject } from "../../patches/types.js";
import { PatchError } from "../../patches/types.js";
import { isSandboxUnavailable } from "../../patches/sandbox/sandbox-unavailable.js";
import { patchEndpointSlice } from "../admit-endpoint-slices.js";
import { keepStoredOrder } from "../endpoint-slice-view.js";
import { applyGuardedPatches } from "../guarded-patch.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import {
  sliceControlledElsewhere,
  sliceServiceName,
  translateEndpointSliceToHost,
  virtualSliceKeyFromHost,
} from "../translate-endpoint-slices.js";
import {
  keyString,
  SyncError,
  type EndpointSliceState,
  type ObjectRef,
  type ReconcileDeps,
  type SyncKey,
  type SyncPlan,
} from "./contracts.js";
import { field, str } from "./object-fields.js";
import { hasSelector, ownerService } from "./reconcile.js";

/** The queue key of a virtual EndpointSlice, beside the Endpoints keys (`namespace/name`). */
export const SLICE_KEY_PREFIX = "endpointslice:";

export const sliceKeyString = (key: SyncKey): string => `${SLICE_KEY_PREFIX}${keyString(key)}`;

export function parseSliceKey(key: string): SyncKey | null {
  if (!key.startsWith(SLICE_KEY_PREFIX)) return null;
  const rest = key.slice(SLICE_KEY_PREFIX.length);
  const slash = rest.indexOf("/");
  return { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
}

const meta = (obj: JsonObject): JsonObject => field(obj, "metadata");
const nothing = (): SyncPlan => ({ actions: [], warnings: [] });

const sliceRef = (obj: JsonObject): ObjectRef => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  namespace: str(meta(obj).namespace),
  name: str(meta(obj).name),
});

function deleteHost(host: JsonObject, reason: string): SyncPlan {
  const ref = sliceRef(host);
  return {
    actions: [{ type: "delete", side: "host", ref, uid: str(meta(host).uid), reason }],
    warnings: [],
  };
}

function isManagedFor(host: JsonObject, key: SyncKey, deps: ReconcileDeps): boolean {
  const owner = virtualSliceKeyFromHost(host, deps.vcluster);
  return owner !== null && owner.namespace === key.namespace && owner.name === key.name;
}

export async function reconcileEndpointSlice(
  state: EndpointSliceState,
  deps: ReconcileDeps,
): Promise<SyncPlan> {
  if (deps.slices?.enabled !== true) return nothing();
  const { key, virtual, service, host } = state;
  if (virtual !== null && sliceControlledElsewhere(virtual) !== null) return nothing();
  const managed = host !== null && isManagedFor(host, key, deps);
  if (virtual === null) return managed ? deleteHost(host, "virtual object was deleted") : nothing();
  const serviceName = sliceServiceName(virtual);
  if (serviceName === "" || service === null) return nothing();
  if (key.namespace === "default" && serviceName === "kubernetes") return nothing();
  if (hasSelector(service)) {
    return managed
      ? deleteHost(
          host,
          "the virtual Service has a selector: the host's EndpointSlice controller manages its slices",
        )
      : nothing();
  }
  if (host !== null && !managed) {
    const ref = sliceRef(host);
    throw new SyncError(
      `host endpointslice ${ref.namespace}/${ref.name} exists and is not managed by vgate for this virtual cluster; not touching it (remove it to let vgate sync this EndpointSlice)`,
    );
  }
  if (host !== null && str(meta(host).deletionTimestamp) !== "") {
    return {
      actions: [],
      warnings: ["the host copy is being deleted; it is created again once it is gone"],
    };
  }
  if (
    host !== null &&
    str(field(meta(host), "annotations")[BOOKKEEPING_ANNOTATIONS.uid]) !== str(meta(virtual).uid)
  ) {
    return deleteHost(
      host,
      "the host copy belongs to an earlier virtual object with the same name (object-uid differs); it is created again",
    );
  }
  const owner = host === null ? await ownerService(deps) : { warnings: [] };
  const desired = await desiredHostSlice(key, virtual, host, deps, owner.uid);
  if (host === null) {
    return {
      actions: [
        {
          type: "create",
          side: "host",
          object: desired,
          reason: "virtual object has no host copy",
        },
      ],
      warnings: owner.warnings,
    };
  }
  const updated = mergeOntoHost(host, desired);
  if (isDeepStrictEqual(updated, host)) return nothing();
  return {
    actions: [{ type: "update", side: "host", object: updated, reason: "virtual object changed" }],
    warnings: [],
  };
}

/** Whether the config's Endpoints patches exist (a slice without them is vCluster's copy as is). */
function hasEndpointsPatches(deps: ReconcileDeps): boolean {
  const endpoints = field(
    field(field(deps.vcluster.config as JsonObject, "sync"), "toHost"),
    "endpoints",
  );
  const patches = endpoints["patches"];
  return Array.isArray(patches) && patches.length > 0;
}

function hasSlicePatches(deps: ReconcileDeps): boolean {
  const slices = field(
    field(field(deps.vcluster.config as JsonObject, "sync"), "toHost"),
    "endpointSlices",
  );
  const patches = slices["patches"];
  return Array.isArray(patches) && patches.length > 0;
}

function failure(key: SyncKey, which: string, err: unknown): unknown {
  if (isSandboxUnavailable(err)) return err;
  let where = which;
  if (err instanceof PatchError && err.patchIndex !== undefined) {
    where = `${which}[${err.patchIndex}] (${err.path ?? "?"})`;
  }
  const detail =
    err instanceof PatchError ? err.detail : err instanceof Error ? err.message : String(err);
  const direction: Direction = "toHost";
  return new SyncError(
    `endpointslice ${keyString(key)}: ${where} failed going toHost (expression): ${detail}`,
    direction,
  );
}

/**
 * The host copy the virtual slice makes now: translated, then the Endpoints patches through the
 * slice's Endpoints view, then the slice's own patches, each on the whole slice (it is derived
 * from the virtual slice alone, so running them again on the same input gives the same copy).
 */
async function desiredHostSlice(
  key: SyncKey,
  virtual: JsonObject,
  host: JsonObject | null,
  deps: ReconcileDeps,
  ownerUid: string | undefined,
): Promise<JsonObject> {
  let slice = translateEndpointSliceToHost(
    virtual,
    deps.vcluster,
    ownerUid === undefined ? {} : { owner: { uid: ownerUid } },
  );
  if (hasEndpointsPatches(deps)) {
    try {
      slice = (await patchEndpointSlice(slice, null, { run: deps.run })) ?? slice;
    } catch (err) {
      throw failure(key, "sync.toHost.endpoints.patches", err);
    }
  }
  const run = deps.slices?.run;
  if (run !== undefined && hasSlicePatches(deps)) {
    try {
      const patched = await applyGuardedPatches(run, slice, {
        direction: "toHost",
        hostObjectJson: JSON.stringify(host),
        virtualObjectJson: JSON.stringify(virtual),
      });
      slice = patched.object;
    } catch (err) {
      throw failure(key, "sync.toHost.endpointSlices.patches", err);
    }
  }
  for (const map of ["annotations", "labels"] as const) {
    for (const [k, v] of Object.entries(field(meta(slice), map))) {
      if (typeof v !== "string") {
        throw new SyncError(
          `endpointslice ${keyString(key)}: the patches going toHost made ${map.slice(0, -1)} ${JSON.stringify(k)} a ${v === null ? "null" : typeof v}; annotation and label values must be strings`,
          "toHost",
        );
      }
    }
  }
  return slice;
}

const CONTENT = ["addressType", "endpoints", "ports"] as const;

/**
 * `desired` written over the stored copy: its content and labels, its annotations over the host's
 * own (a key the copy had from the virtual slice, per managed-annotations, and no longer has is
 * removed), the stored endpoints' order kept when they are the same set.
 */
function mergeOntoHost(host: JsonObject, desired: JsonObject): JsonObject {
  const out: JsonObject = Object.fromEntries(
    Object.entries(structuredClone(host)).filter(
      ([k]) => !(CONTENT as readonly string[]).includes(k),
    ),
  );
  for (const k of CONTENT) if (Object.hasOwn(desired, k)) out[k] = desired[k]!;
  const endpoints = keepStoredOrder(host["endpoints"], out["endpoints"]);
  if (endpoints !== undefined) out["endpoints"] = endpoints;
  const hostMeta = { ...meta(out) };
  const wanted = field(meta(desired), "annotations");
  const before = str(field(hostMeta, "annotations")[BOOKKEEPING_ANNOTATIONS.managedAnnotations]);
  const dropped = new Set(before === "" ? [] : before.split("\n"));
  const annotations: JsonObject = {};
  for (const [k, v] of Object.entries(field(hostMeta, "annotations"))) {
    if (!dropped.has(k) && k !== BOOKKEEPING_ANNOTATIONS.managedAnnotations) annotations[k] = v;
  }
  Object.assign(annotations, wanted);
  hostMeta["annotations"] = annotations;
  hostMeta["labels"] = { ...field(meta(desired), "labels") };
  // ownerReferences are set at create only, as vCluster's syncer sets them; an update keeps them.
  out["metadata"] = hostMeta;
  return out;
}
