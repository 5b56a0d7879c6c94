// The reconciler of `vgate sync`: given what the informers know of one virtual Endpoints key, it
// reads what else it needs (deps.get / deps.list, for references), runs the patches in the sandbox,
// and answers the writes to make. It never writes itself (contracts.ts).
//
// The flow, in order (vCluster's Endpoints syncer, docs/reference.md#endpoints-syncer-gate and the
// sections after it, with the project's overrides):
// 1. `sync.toHost.endpoints.enabled: false` plans nothing: host copies are left alone
//    (docs/decisions.md#eps-10).
// 2. `default/kubernetes` is vCluster's own Service, never synced here.
// 3. A host object that is not vgate's/vCluster's copy of this key (IsManaged, see
//    virtualKeyFromHost) is never touched: where the sync would have to write it, the key fails
//    with a SyncError instead (the issue overrides vCluster's take-over of PR #1608).
// 4. Deletion follows the virtual object: no virtual Endpoints, our host copy is deleted.
// 5. The Service gate: no virtual Service, nothing; a Service with a selector (even `{}`), our
//    host copy is deleted so the host's endpoints controller takes over.
// 6. Create: vCluster's translation, then `expression` patches on the whole object.
// 7. Update: a host copy of an older virtual object (other uid) is deleted and recreated on the
//    next pass; otherwise subsets follow the virtual object, and annotations and labels sync both
//    ways against the snapshot (metadata-sync.ts, snapshot.ts), each direction's patches running on
//    that direction's change set only.
// A host copy deleted while the virtual object exists is simply created again (step 6): the spec
// suggests this instead of vCluster's deletion of the virtual object
// (docs/reference.md#endpoints-syncer-delete).

import { isDeepStrictEqual } from "node:util";
import { KubeError } from "../../shared/status.js";
import { MarkerLabel, NamespaceLabel, type LabelScope } from "../../patches/labels.js";
import type { ResolvedReference } from "../../patches/reference.js";
import { patchMode } from "../../patches/engine.js";
import {
  PatchError,
  type Direction,
  type JsonObject,
  type PatchSpec,
  type VClusterInfo,
} from "../../patches/types.js";
import { isSandboxUnavailable } from "../../patches/sandbox/sandbox-unavailable.js";
import { applyChangeSet } from "../change-set.js";
import { applyGuardedPatches, type GuardedResult, type PatchJob } from "../guarded-patch.js";
import {
  BOOKKEEPING_ANNOTATIONS,
  controlledElsewhere,
  ENDPOINTS_KIND,
  hostNameAndNamespace,
  ownerServiceFor,
  translateEndpointsToHost,
  type OwnerService,
} from "../translate-endpoints.js";
import {
  keyString,
  SyncError,
  type ObjectRef,
  type Reconcile,
  type ReconcileDeps,
  type SyncAction,
  type SyncKey,
  type SyncPlan,
} from "./contracts.js";
import {
  hostMaps,
  isEmpty,
  managedAnnotationKeys,
  metadataChangeSet,
  planChanges,
  snapshotOf,
  virtualMaps,
  type Changes,
} from "./metadata-sync.js";
import {
  copyReferencesToHost,
  importReferencesToVirtual,
  referenceKinds,
  resolvableHostObjects,
} from "./references.js";
import {
  formatSnapshot,
  hashValue,
  readSnapshot,
  SNAPSHOT_ANNOTATION,
  type HashPair,
  type Snapshot,
} from "./snapshot.js";
import { field, isObject, str } from "./object-fields.js";
import { SKIP_MIRROR_LABEL } from "../translate-endpoint-slices.js";

type SyncVCluster = ReconcileDeps["vcluster"];

const meta = (obj: JsonObject): JsonObject => field(obj, "metadata");
const annotationsOf = (obj: JsonObject): JsonObject => field(meta(obj), "annotations");
const labelsOf = (obj: JsonObject): JsonObject => field(meta(obj), "labels");

/** The label scope of host objects: the vCluster name and the namespace host copies go to. */
export function scopeOf(vc: SyncVCluster): LabelScope {
  return { name: vc.name, namespace: vc.targetNamespace ?? vc.namespace };
}

const isKubernetesService = (key: SyncKey): boolean =>
  key.namespace === "default" && key.name === "kubernetes";

/**
 * Where the host copy of virtual Endpoints `key` lives: `name-x-namespace-x-vc` in the target
 * namespace, or the same name in a mapped namespace (docs/decisions.md#eps-2). `default/kubernetes`
 * is the vCluster's own Service (name = vCluster name, in its namespace), which is never synced.
 */
export function hostKeyFor(key: SyncKey, vc: SyncVCluster): { namespace: string; name: string } {
  if (isKubernetesService(key)) return { namespace: vc.namespace, name: vc.name };
  return hostNameAndNamespace(key.name, key.namespace, vc);
}

/** A non-empty annotation that differs from `expected` (vCluster tolerates an empty one). */
const contradicts = (annotations: JsonObject, key: string, expected: string): boolean =>
  str(annotations[key]) !== "" && str(annotations[key]) !== expected;

/**
 * The virtual key a host Endpoints object is the copy of, or null when it is not vgate's or
 * vCluster's copy for this vCluster: vCluster's IsManaged (docs/reference.md#endpoints-syncer-create,
 * last paragraph): the managed-by label names this vCluster, object-name is set and maps to the
 * object's own name and namespace, and the kind, host-name and host-namespace annotations (where
 * set) match. Objects controlled by something else (a controlled-by label, or a controlled-by
 * annotation naming another syncer: controlledElsewhere) are never ours.
 */
export function virtualKeyFromHost(host: JsonObject, vc: SyncVCluster): SyncKey | null {
  if (controlledElsewhere(host) !== null || str(labelsOf(host)[MarkerLabel]) !== vc.name) {
    return null;
  }
  const annotations = annotationsOf(host);
  const name = str(annotations[BOOKKEEPING_ANNOTATIONS.name]);
  const namespace = str(annotations[BOOKKEEPING_ANNOTATIONS.namespace]) || "default";
  if (name === "" || contradicts(annotations, BOOKKEEPING_ANNOTATIONS.kind, ENDPOINTS_KIND)) {
    return null;
  }
  const key = { namespace, name };
  if (isKubernetesService(key)) return null;
  const expected = hostKeyFor(key, vc);
  const hostName = str(meta(host).name);
  const hostNamespace = str(meta(host).namespace);
  if (hostName !== expected.name || hostNamespace !== expected.namespace) return null;
  if (contradicts(annotations, BOOKKEEPING_ANNOTATIONS.hostName, hostName)) return null;
  if (contradicts(annotations, BOOKKEEPING_ANNOTATIONS.hostNamespace, hostNamespace)) return null;
  return key;
}

function isManagedFor(host: JsonObject, key: SyncKey, vc: SyncVCluster): boolean {
  const owner = virtualKeyFromHost(host, vc);
  return owner !== null && owner.namespace === key.namespace && owner.name === key.name;
}

const endpointsRef = (obj: JsonObject): ObjectRef => ({
  apiVersion: "v1",
  kind: "Endpoints",
  namespace: str(meta(obj).namespace),
  name: str(meta(obj).name),
});

function deleteHost(host: JsonObject, reason: string): SyncPlan {
  const ref = endpointsRef(host);
  return {
    actions: [{ type: "delete", side: "host", ref, uid: str(meta(host).uid), reason }],
    warnings: [],
  };
}

const nothing = (): SyncPlan => ({ actions: [], warnings: [] });

/** A Service with a selector (non-null, even `{}`) has its Endpoints managed by Kubernetes. */
export function hasSelector(service: JsonObject): boolean {
  const spec = field(service, "spec");
  return Object.hasOwn(spec, "selector") && spec.selector !== null && spec.selector !== undefined;
}

function unmanaged(host: JsonObject): SyncError {
  const ref = endpointsRef(host);
  return new SyncError(
    `host endpoints ${ref.namespace}/${ref.name} exists and is not managed by vgate for this virtual cluster; not touching it (remove it, or rename the virtual Service, to let vgate sync these Endpoints)`,
  );
}

export const reconcileEndpoints: Reconcile = async (state, deps) => {
  if (!deps.enabled || isKubernetesService(state.key)) return nothing();
  const { key, virtual, service, host } = state;
  // vCluster's syncer leaves a virtual object another controller controls alone, host copy
  // included (SyncController.excludeVirtual).
  if (virtual !== null && controlledElsewhere(virtual) !== null) return nothing();
  const managed = host !== null && isManagedFor(host, key, deps.vcluster);
  if (virtual === null) {
    return managed ? deleteHost(host, "virtual object was deleted") : nothing();
  }
  if (service === null) return nothing();
  if (hasSelector(service)) {
    return managed
      ? deleteHost(
          host,
          "the virtual Service has a selector: the host's endpoints controller manages these Endpoints",
        )
      : nothing();
  }
  if (host === null) return planCreate(key, virtual, deps);
  if (!managed) throw unmanaged(host);
  if (str(meta(host).deletionTimestamp) !== "") {
    return {
      actions: [],
      warnings: ["the host copy is being deleted; it is created again once it is gone"],
    };
  }
  if (str(annotationsOf(host)[BOOKKEEPING_ANNOTATIONS.uid]) !== str(meta(virtual).uid)) {
    return deleteHost(
      host,
      "the host copy belongs to an earlier virtual object with the same name (object-uid differs); it is created again",
    );
  }
  return planUpdate(key, virtual, host, deps);
};

// ---- patches ----

/**
 * Runs the patches; a failure (a throwing expression, a deadline, the memory limit, a broken
 * sandbox) fails this key only, as a SyncError naming the object, the patch and the direction.
 */
async function runPatches(
  deps: ReconcileDeps,
  key: SyncKey,
  object: JsonObject,
  job: PatchJob,
): Promise<GuardedResult> {
  // No patch acts in this direction (`patches: []`; an `expression` without `reverseExpression`
  // does act going back: it drops its field): the sandbox would hand the object back as it is.
  // Not asking it saves a round trip to a child process on every such sync.
  if (!actsIn(deps.vcluster, job.direction)) {
    return { object, warnings: [], explain: [], references: [] };
  }
  try {
    return await applyGuardedPatches(deps.run, object, job);
  } catch (err) {
    // A closed or broken pool is the controller's trouble, not this object's: retried, no Event.
    if (isSandboxUnavailable(err)) throw err;
    throw patchFailure(key, job.direction, err);
  }
}

function patchFailure(key: SyncKey, direction: Direction, err: unknown): SyncError {
  const message = err instanceof Error ? err.message : String(err);
  const which = direction === "toHost" ? "expression" : "reverseExpression";
  let where = "patches";
  if (err instanceof PatchError && err.patchIndex !== undefined) {
    where = `patches[${err.patchIndex}] (${err.path ?? "?"})`;
  }
  // The engine and the pool name the patch themselves; say it once.
  const detail = err instanceof PatchError ? err.detail : message;
  return new SyncError(
    `endpoints ${keyString(key)}: ${where} failed going ${direction} (${which}): ${detail}`,
    direction,
  );
}

const acting = new WeakMap<object, Record<Direction, boolean>>();

/** Whether any of the config's patches does something going `direction` (engine.ts patchMode). */
function actsIn(vc: VClusterInfo, direction: Direction): boolean {
  const config = vc.config;
  if (!isObject(config)) return true;
  let known = acting.get(config);
  if (known === undefined) {
    const endpoints = field(field(field(config, "sync"), "toHost"), "endpoints");
    const list = Object.hasOwn(endpoints, "patches") ? endpoints.patches : undefined;
    const patches = (Array.isArray(list) ? list : []) as unknown as PatchSpec[];
    const acts = (d: Direction) => patches.some((p) => patchMode(p, d) !== "skip");
    known = { toHost: acts("toHost"), toVirtual: acts("toVirtual") };
    acting.set(config, known);
  }
  return known[direction];
}

const configHashes = new WeakMap<object, string>();

/** The config the patches run with, hashed once per loaded config (snapshot.ts, `config`). */
function configHash(vc: VClusterInfo): string {
  const config = vc.config;
  if (!isObject(config)) return hashValue(config ?? null);
  let hash = configHashes.get(config);
  if (hash === undefined) {
    hash = hashValue(config);
    configHashes.set(config, hash);
  }
  return hash;
}

/** The virtual object without a snapshot annotation: it is the host's alone, never copied over. */
function withoutSnapshot(virtual: JsonObject): JsonObject {
  const annotations = annotationsOf(virtual);
  if (!Object.hasOwn(annotations, SNAPSHOT_ANNOTATION)) return virtual;
  const kept = Object.fromEntries(
    Object.entries(annotations).filter(([k]) => k !== SNAPSHOT_ANNOTATION),
  );
  return { ...virtual, metadata: { ...meta(virtual), annotations: kept } };
}

/** Every annotation and label value must be a string (Kubernetes rejects anything else). */
function checkStringMaps(key: SyncKey, direction: Direction, object: JsonObject): void {
  for (const map of ["annotations", "labels"] as const) {
    for (const [k, v] of Object.entries(field(meta(object), map))) {
      if (typeof v !== "string") {
        throw new SyncError(
          `endpoints ${keyString(key)}: the patches going ${direction} made ${map.slice(0, -1)} ${JSON.stringify(k)} a ${v === null ? "null" : typeof v}; annotation and label values must be strings`,
          direction,
        );
      }
    }
  }
}

function setSnapshot(host: JsonObject, snapshot: Snapshot): void {
  const m = meta(host);
  m.annotations = { ...field(m, "annotations"), [SNAPSHOT_ANNOTATION]: formatSnapshot(snapshot) };
  host.metadata = m;
}

// ---- create ----

async function planCreate(
  key: SyncKey,
  virtual: JsonObject,
  deps: ReconcileDeps,
): Promise<SyncPlan> {
  const source = withoutSnapshot(virtual);
  const owner = await ownerService(deps);
  const translated = translateEndpointsToHost(
    source,
    deps.vcluster,
    owner.uid === undefined ? {} : { owner: { uid: owner.uid } },
  );
  // On create the whole object is the change set (docs/reference.md#patch-change-sets).
  const patched = await runPatches(deps, key, translated, {
    direction: "toHost",
    hostObjectJson: "null",
    virtualObjectJson: JSON.stringify(virtual),
  });
  const host = patched.object;
  checkStringMaps(key, "toHost", host);
  markSkipMirror(host, source, deps);
  const scope = scopeOf(deps.vcluster);
  const subsets: HashPair = [hashValue(translated.subsets), hashValue(host.subsets)];
  setSnapshot(
    host,
    snapshotOf(
      virtualMaps(source, scope),
      hostMaps(host, scope),
      subsets,
      configHash(deps.vcluster),
    ),
  );
  const refs = await copyReferencesToHost(patched.references, deps, scope);
  return {
    actions: [
      ...refs.actions,
      { type: "create", side: "host", object: host, reason: "virtual object has no host copy" },
    ],
    warnings: [...owner.warnings, ...patched.warnings, ...refs.warnings],
  };
}

/**
 * vCluster's own Service on the host, which its syncer names as the owner of every copy it makes
 * (docs/decisions.md#eps-31), read at each create. A Service that does not exist (vgate sync
 * without a vCluster) gives no owner; one vgate may not read gives none, with a warning.
 */
export async function ownerService(
  deps: ReconcileDeps,
): Promise<{ uid?: OwnerService["uid"]; warnings: string[] }> {
  const ref = ownerServiceFor(deps.vcluster);
  if (ref === null) return { warnings: [] };
  try {
    const service = await deps.get("host", { apiVersion: "v1", kind: "Service", ...ref });
    const uid = service === null ? "" : str(meta(service).uid);
    return uid === "" ? { warnings: [] } : { uid, warnings: [] };
  } catch (err) {
    if (!(err instanceof KubeError) || err.code !== 403) throw err;
    return {
      warnings: [
        `cannot read the vCluster's Service ${ref.namespace}/${ref.name} on the host (forbidden): the host copy gets no owner reference; grant get on services (manifests/sync/rbac-host.yaml)`,
      ],
    };
  }
}

// ---- update ----

interface UpdateContext {
  key: SyncKey;
  virtual: JsonObject;
  host: JsonObject;
  deps: ReconcileDeps;
  scope: LabelScope;
  warnings: string[];
  actions: SyncAction[];
}

async function planUpdate(
  key: SyncKey,
  virtual: JsonObject,
  host: JsonObject,
  deps: ReconcileDeps,
): Promise<SyncPlan> {
  const scope = scopeOf(deps.vcluster);
  const ctx: UpdateContext = { key, virtual, host, deps, scope, warnings: [], actions: [] };
  const read = readSnapshot(host);
  if (read.warning !== undefined)
    ctx.warnings.push(
      `host endpoints ${endpointsRef(host).namespace}/${endpointsRef(host).name}: ${read.warning}`,
    );
  const config = configHash(deps.vcluster);
  // A new patch config re-runs `expression` on every key: the virtual side wins, as without one.
  const snapshot = read.snapshot !== null && read.snapshot.config === config ? read.snapshot : null;
  const source = withoutSnapshot(virtual);
  const changes = planChanges(
    virtualMaps(source, scope),
    hostMaps(host, scope),
    snapshot,
    managedAnnotationKeys(host),
  );
  const translated = translateEndpointsToHost(source, deps.vcluster);
  const subsetsBefore: HashPair = [hashValue(translated.subsets), hashValue(host.subsets)];
  const subsetsChanged = snapshot === null || !isDeepStrictEqual(snapshot.subsets, subsetsBefore);
  const newVirtual = await syncToVirtual(ctx, changes.toVirtual);
  const newHost = await syncToHost(ctx, changes.toHost, { translated, subsetsChanged, newVirtual });
  const subsets: HashPair = [subsetsBefore[0], hashValue(newHost.subsets)];
  const next = snapshotOf(
    virtualMaps(newVirtual, scope),
    hostMaps(newHost, scope),
    subsets,
    config,
  );
  // The virtual object is written first, then the host copy with the snapshot of both, in the same
  // host write as any content change. A host write that carries only a new snapshot is made only
  // when the snapshot's virtual side is out of date (a host edit flowed back to the virtual
  // object, or a virtual edit had nothing to change on the host): without it the next pass would
  // see that virtual value as a new edit, and the virtual side would win over later host edits.
  // A snapshot whose host side alone is stale is not worth a write: the next pass derives the same
  // (empty) plan from it. After these writes the next pass finds both sides equal to the snapshot
  // and plans nothing. Should the host write fail (409), the next pass sees the virtual edit as
  // new and sends it through `expression`: the virtual side wins, and the sides converge.
  const contentChanged = hostChanged(host, newHost);
  if (metadataChanged(virtual, newVirtual)) {
    ctx.actions.push({
      type: "update",
      side: "virtual",
      object: newVirtual,
      reason: "host-side annotation or label changes",
    });
  }
  if (contentChanged || virtualSideStale(snapshot, next)) {
    setSnapshot(newHost, next);
    ctx.actions.push({
      type: "update",
      side: "host",
      object: newHost,
      reason: contentChanged ? "virtual object changed" : "sync snapshot update",
    });
  }
  return { actions: ctx.actions, warnings: ctx.warnings };
}

/** Whether the stored snapshot (null: none, unreadable or of another config) misstates the virtual side. */
function virtualSideStale(stored: Snapshot | null, next: Snapshot): boolean {
  if (stored === null) return true;
  if (stored.config !== next.config || stored.subsets[0] !== next.subsets[0]) return true;
  for (const map of ["annotations", "labels"] as const) {
    const keys = new Set([...Object.keys(stored[map]), ...Object.keys(next[map])]);
    for (const k of keys) {
      const before = Object.hasOwn(stored[map], k) ? stored[map][k]![0] : "";
      const after = Object.hasOwn(next[map], k) ? next[map][k]![0] : "";
      if (before !== after) return true;
    }
  }
  return false;
}

function sameMap(a: JsonObject, b: JsonObject): boolean {
  return isDeepStrictEqual(a, b);
}

function metadataChanged(before: JsonObject, after: JsonObject): boolean {
  return (
    !sameMap(annotationsOf(before), annotationsOf(after)) ||
    !sameMap(labelsOf(before), labelsOf(after))
  );
}

function hostChanged(before: JsonObject, after: JsonObject): boolean {
  return metadataChanged(before, after) || !isDeepStrictEqual(before.subsets, after.subsets);
}

/** Only annotations and labels of a patched change set go into metadata (change-set.ts). */
function keptChanges(patched: JsonObject, withSubsets: boolean): JsonObject {
  const out: JsonObject = {};
  const m = meta(patched);
  const metadata: JsonObject = {};
  for (const map of ["annotations", "labels"] as const) {
    if (Object.hasOwn(m, map) && isObject(m[map])) metadata[map] = m[map];
  }
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  if (withSubsets && Object.hasOwn(patched, "subsets")) out.subsets = patched.subsets ?? null;
  return out;
}

/** Host → virtual: the host-side changes, through `reverseExpression`, onto the virtual object. */
async function syncToVirtual(ctx: UpdateContext, changes: Changes): Promise<JsonObject> {
  if (isEmpty(changes)) return ctx.virtual;
  const references = await hostReferenceObjects(ctx);
  const patched = await runPatches(
    ctx.deps,
    ctx.key,
    { metadata: metadataChangeSet(changes, null) },
    {
      direction: "toVirtual",
      changeSet: true,
      hostObjectJson: JSON.stringify(ctx.host),
      virtualObjectJson: JSON.stringify(ctx.virtual),
      ...(references.length > 0
        ? {
            referenceObjectsJson: JSON.stringify(
              resolvableHostObjects(references, ctx.key.namespace, ctx.deps.vcluster),
            ),
          }
        : {}),
    },
  );
  ctx.warnings.push(...patched.warnings);
  const updated = withoutSnapshot(applyChangeSet(ctx.virtual, keptChanges(patched.object, false)));
  checkStringMaps(ctx.key, "toVirtual", updated);
  await importReferences(ctx, patched.references, references);
  return updated;
}

/** The host objects reverse reference patches may name, listed in the host copy's namespace. */
async function hostReferenceObjects(ctx: UpdateContext): Promise<JsonObject[]> {
  const namespace = str(meta(ctx.host).namespace);
  const out: JsonObject[] = [];
  for (const { apiVersion, kind } of referenceKinds(ctx.deps.vcluster)) {
    const listed = await ctx.deps.list("host", apiVersion, kind, namespace);
    // List items usually carry no kind; the resolver matches on it.
    out.push(...listed.map((o) => ({ ...o, apiVersion, kind })));
  }
  return out;
}

async function importReferences(
  ctx: UpdateContext,
  references: ResolvedReference[],
  hostObjects: JsonObject[],
): Promise<void> {
  const imports = await importReferencesToVirtual(references, hostObjects, ctx.deps);
  ctx.actions.push(...imports.actions);
  ctx.warnings.push(...imports.warnings);
}

/**
 * Virtual → host: the virtual-side changes (and the subsets, when either side's differ from the
 * snapshot), through `expression`, onto the host object; then vCluster's bookkeeping is asserted
 * again (docs/reference.md#endpoints-syncer-update).
 */
async function syncToHost(
  ctx: UpdateContext,
  changes: Changes,
  to: { translated: JsonObject; subsetsChanged: boolean; newVirtual: JsonObject },
): Promise<JsonObject> {
  const { translated, subsetsChanged } = to;
  const changeSet: JsonObject = {};
  const metadata = metadataChangeSet(changes, ctx.scope);
  if (Object.keys(metadata).length > 0) changeSet.metadata = metadata;
  // Subsets: the virtual object always wins, and host drift is overwritten.
  if (subsetsChanged) changeSet.subsets = translated.subsets ?? null;
  let patchedChanges: JsonObject = {};
  if (Object.keys(changeSet).length > 0) {
    const patched = await runPatches(ctx.deps, ctx.key, changeSet, {
      direction: "toHost",
      changeSet: true,
      hostObjectJson: JSON.stringify(ctx.host),
      virtualObjectJson: JSON.stringify(ctx.virtual),
    });
    ctx.warnings.push(...patched.warnings);
    patchedChanges = keptChanges(patched.object, subsetsChanged);
    const refs = await copyReferencesToHost(patched.references, ctx.deps, ctx.scope);
    ctx.actions.push(...refs.actions);
    ctx.warnings.push(...refs.warnings);
  }
  const updated = applyChangeSet(ctx.host, patchedChanges);
  checkStringMaps(ctx.key, "toHost", updated);
  reassertBookkeeping(updated, translated, to.newVirtual, ctx.scope);
  markSkipMirror(updated, to.newVirtual, ctx.deps);
  return updated;
}

/**
 * While vgate sync writes the EndpointSlices (docs/decisions.md KND-82), its host Endpoints carry
 * `endpointslice.kubernetes.io/skip-mirror: "true"`, so the host's mirroring controller makes no
 * slice of its own from them; otherwise the label is as the virtual object has it. The label is
 * the host's alone: it never flows back (metadata-sync.ts), or the virtual cluster's mirroring
 * controller would stop making the virtual slices.
 */
function markSkipMirror(host: JsonObject, virtual: JsonObject, deps: ReconcileDeps): void {
  const m = meta(host);
  const labels = Object.fromEntries(
    Object.entries(field(m, "labels")).filter(([k]) => k !== SKIP_MIRROR_LABEL),
  );
  const own = labelsOf(virtual)[SKIP_MIRROR_LABEL];
  if (deps.slices?.enabled === true) labels[SKIP_MIRROR_LABEL] = "true";
  else if (typeof own === "string") labels[SKIP_MIRROR_LABEL] = own;
  m.labels = labels;
  host.metadata = m;
}

/** The six bookkeeping annotations, managed-annotations and the scoping labels, as translation sets them. */
function reassertBookkeeping(
  host: JsonObject,
  translated: JsonObject,
  virtual: JsonObject,
  scope: LabelScope,
): void {
  const m = meta(host);
  const reasserted = new Set<string>(Object.values(BOOKKEEPING_ANNOTATIONS));
  reasserted.delete(BOOKKEEPING_ANNOTATIONS.managedLabels);
  reasserted.delete(BOOKKEEPING_ANNOTATIONS.managedAnnotations);
  const annotations = new Map(
    Object.entries(field(m, "annotations")).filter(
      ([k]) => !reasserted.has(k) && k !== BOOKKEEPING_ANNOTATIONS.managedAnnotations,
    ),
  );
  const wanted = annotationsOf(translated);
  for (const k of reasserted) if (Object.hasOwn(wanted, k)) annotations.set(k, wanted[k]!);
  // managed-annotations lists the keys the host copy has from the virtual object (as on create).
  const fromVirtual = Object.keys(virtualMaps(virtual, scope).annotations).sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  if (fromVirtual.length > 0)
    annotations.set(BOOKKEEPING_ANNOTATIONS.managedAnnotations, fromVirtual.join("\n"));
  m.annotations = Object.fromEntries(annotations);
  const labels = { ...field(m, "labels") };
  const wantedLabels = labelsOf(translated);
  for (const k of [MarkerLabel, NamespaceLabel]) {
    if (Object.hasOwn(wantedLabels, k)) labels[k] = wantedLabels[k]!;
  }
  m.labels = labels;
  host.metadata = m;
}
