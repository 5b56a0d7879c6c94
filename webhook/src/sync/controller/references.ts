// The objects behind rewritten references (docs/decisions.md#eps-1): a reference patch rewrites a
// name, and the sync controller makes that name point at something.
// - Virtual → host: the referenced virtual object is copied to the host under the translated name,
//   with vCluster's bookkeeping (docs/reference.md#endpoints-syncer-create steps 1-4), so it is
//   recognisably vgate's copy of that one source.
// - Host → virtual: a referenced host object with no virtual counterpart is imported into the
//   virtual cluster (docs/reference.md#reference-patches-reverse), marked
//   `vcluster.loft.sh/object-imported: "true"`, with object-name/object-namespace pointing back at
//   the host object so the reference resolves to it again.
//
// Import naming: a host object that carries vCluster's bookkeeping is a copy, and resolves to the
// virtual object its annotations name. Any other host object (made on the host by someone else) is
// imported under its own name, into the virtual namespace its host namespace maps back to in
// multi-namespace mode, or otherwise into the namespace of the virtual Endpoints that references
// it.

import { hostLabelsMap, type LabelScope } from "../../patches/labels.js";
import { mapNamespaceToVirtual } from "../../patches/host-names.js";
import type { ResolvedReference } from "../../patches/reference.js";
import {
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
} from "../../patches/reference-resolver.js";
import type { Json, JsonObject, VClusterInfo } from "../../patches/types.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import type { ObjectRef, SyncAction } from "./contracts.js";
import { field, isObject, str } from "./object-fields.js";

/** vCluster's own keys; guarded-patch.ts keeps them out of patches' reach too. */
const VCLUSTER_PREFIX = "vcluster.loft.sh/";
/** vgate's own keys: never copied from one side's object to the other's. */
const VGATE_PREFIX = "vgate.loft.sh/";

const isBookkeepingKey = (key: string): boolean =>
  key.startsWith(VCLUSTER_PREFIX) || key.startsWith(VGATE_PREFIX);

/**
 * A key in Kubernetes' own prefixes (`kubernetes.io/`, `k8s.io/` and their subdomains), which
 * Kubernetes' controllers act on: `kubernetes.io/service-account.name` makes the token controller
 * fill a Secret with a token. Never copied from one side to the other (docs/decisions.md EPS-21).
 */
export function isKubernetesKey(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const domain = key.slice(0, slash).toLowerCase();
  return ["kubernetes.io", "k8s.io"].some((d) => domain === d || domain.endsWith(`.${d}`));
}

const copiedAnnotation = (key: string): boolean => !isBookkeepingKey(key) && !isKubernetesKey(key);

/**
 * The top-level fields a copy carries, by kind: the data, never the object's owners, finalizers,
 * status or anything else (docs/decisions.md EPS-21). A kind not listed (a custom resource
 * `reference` patches name) keeps every field but apiVersion, kind, metadata and status.
 */
const COPIED_FIELDS: Record<string, readonly string[]> = {
  Secret: ["type", "data", "immutable"],
  ConfigMap: ["data", "binaryData", "immutable"],
};
const NEVER_COPIED_FIELDS = new Set(["apiVersion", "kind", "metadata", "status"]);

export const IMPORTED_ANNOTATION = "vcluster.loft.sh/object-imported";

/**
 * On a host copy: the resourceVersion of the virtual object it was copied from, so a changed
 * source is told from an unchanged one without comparing contents (docs/decisions.md#eps-18).
 */
export const SOURCE_VERSION_ANNOTATION = "vgate.loft.sh/source-resource-version";

function stringEntries(map: JsonObject): [string, string][] {
  return Object.entries(map).filter((e): e is [string, string] => typeof e[1] === "string");
}

/** Go's GroupVersionKind.String(): "/v1, Kind=Secret", "apps/v1, Kind=Deployment". */
export function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf("/");
  const [group, version] =
    slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
  return `${group}/${version}, Kind=${kind}`;
}

/**
 * A copy of `source` named `at`, built from an allow-list: the kind's data fields (COPIED_FIELDS)
 * and a name and namespace; the caller adds annotations and labels. Nothing else of the source's
 * metadata (ownerReferences, finalizers, uid, ...) is carried over.
 */
function copyObject(
  source: JsonObject,
  at: { namespace: string; name: string },
  ref: { apiVersion: string; kind: string },
): { copy: JsonObject; meta: JsonObject } {
  const copy: JsonObject = { apiVersion: ref.apiVersion, kind: ref.kind };
  const listed = ref.apiVersion === "v1" ? COPIED_FIELDS[ref.kind] : undefined;
  for (const [key, value] of Object.entries(source)) {
    const kept = listed ? listed.includes(key) : !NEVER_COPIED_FIELDS.has(key);
    if (kept) copy[key] = structuredClone(value);
  }
  const meta: JsonObject = { name: at.name, namespace: at.namespace };
  copy.metadata = meta;
  return { copy, meta };
}

/** The host copy of a referenced virtual object, with vCluster-style bookkeeping. */
export function hostCopyOf(
  source: JsonObject,
  reference: ResolvedReference,
  scope: LabelScope,
): JsonObject {
  const { copy, meta } = copyObject(source, reference.host, reference);
  const sourceMeta = field(source, "metadata");
  const copied = stringEntries(field(sourceMeta, "annotations")).filter(([key]) =>
    copiedAnnotation(key),
  );
  const annotations = new Map<string, string>(copied);
  const managed = copied.map(([key]) => key).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (managed.length > 0)
    annotations.set(BOOKKEEPING_ANNOTATIONS.managedAnnotations, managed.join("\n"));
  annotations.set(BOOKKEEPING_ANNOTATIONS.name, reference.virtual.name);
  annotations.set(BOOKKEEPING_ANNOTATIONS.namespace, reference.virtual.namespace);
  annotations.set(BOOKKEEPING_ANNOTATIONS.uid, str(sourceMeta.uid));
  annotations.set(BOOKKEEPING_ANNOTATIONS.kind, gvkString(reference.apiVersion, reference.kind));
  annotations.set(BOOKKEEPING_ANNOTATIONS.hostName, reference.host.name);
  annotations.set(BOOKKEEPING_ANNOTATIONS.hostNamespace, reference.host.namespace);
  annotations.set(SOURCE_VERSION_ANNOTATION, str(sourceMeta.resourceVersion));
  meta.annotations = Object.fromEntries(annotations);
  const labels = Object.fromEntries(stringEntries(field(sourceMeta, "labels")));
  meta.labels = hostLabelsMap(labels, null, reference.virtual.namespace, true, scope) ?? {};
  return copy;
}

/** The virtual import of a referenced host object, pointing back at it. */
export function virtualImportOf(source: JsonObject, reference: ResolvedReference): JsonObject {
  const { copy, meta } = copyObject(source, reference.virtual, reference);
  const sourceMeta = field(source, "metadata");
  const annotations = new Map<string, string>(
    stringEntries(field(sourceMeta, "annotations")).filter(([k]) => copiedAnnotation(k)),
  );
  annotations.set(IMPORTED_ANNOTATION, "true");
  annotations.set(OBJECT_NAME_ANNOTATION, reference.host.name);
  annotations.set(OBJECT_NAMESPACE_ANNOTATION, reference.host.namespace);
  meta.annotations = Object.fromEntries(annotations);
  const labels = stringEntries(field(sourceMeta, "labels")).filter(
    ([k]) => !k.startsWith(VCLUSTER_PREFIX),
  );
  if (labels.length > 0) meta.labels = Object.fromEntries(labels);
  else delete meta.labels;
  return copy;
}

/** The static kinds the config's reference patches name (kindPath/apiVersionPath kinds cannot be listed ahead). */
export function referenceKinds(vc: VClusterInfo): { apiVersion: string; kind: string }[] {
  const sync = field(
    field(field(isObject(vc.config) ? vc.config : {}, "sync"), "toHost"),
    "endpoints",
  );
  const patches = Object.hasOwn(sync, "patches") && Array.isArray(sync.patches) ? sync.patches : [];
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const patch of patches as Json[]) {
    if (!isObject(patch)) continue;
    const ref = field(patch, "reference");
    if (typeof ref.apiVersion !== "string" || typeof ref.kind !== "string") continue;
    seen.set(`${ref.apiVersion}/${ref.kind}`, { apiVersion: ref.apiVersion, kind: ref.kind });
  }
  return [...seen.values()];
}

/**
 * The host objects as the reference resolver (resolverFromObjects) should see them: a copy keeps
 * its bookkeeping; any other object gets object-name/object-namespace naming its import (see the
 * naming rule at the top of this file). Only the resolver reads these; nothing is written.
 */
export function resolvableHostObjects(
  objects: readonly JsonObject[],
  virtualNamespace: string,
  vc: VClusterInfo,
): JsonObject[] {
  return objects.map((object) => {
    const meta = field(object, "metadata");
    if (str(field(meta, "annotations")[OBJECT_NAME_ANNOTATION]) !== "") return object;
    const hostNamespace = str(meta.namespace);
    const mapped = vc.namespaceMappings
      ? mapNamespaceToVirtual(hostNamespace, vc.namespaceMappings)
      : null;
    return {
      kind: str(object.kind),
      metadata: {
        name: str(meta.name),
        namespace: hostNamespace,
        annotations: {
          [OBJECT_NAME_ANNOTATION]: str(meta.name),
          [OBJECT_NAMESPACE_ANNOTATION]: mapped ?? virtualNamespace,
        },
      },
    };
  });
}

const refKey = (r: ResolvedReference): string =>
  JSON.stringify([r.direction, r.apiVersion, r.kind, r.virtual.namespace, r.virtual.name]);

/** One entry per referenced object. */
export function uniqueReferences(references: readonly ResolvedReference[]): ResolvedReference[] {
  return [...new Map(references.map((r) => [refKey(r), r])).values()];
}

export interface ReferenceDeps {
  get(side: "virtual" | "host", ref: ObjectRef): Promise<JsonObject | null>;
}

const describeRef = (r: ResolvedReference, side: "virtual" | "host"): string =>
  `${r.kind} ${r[side].namespace}/${r[side].name} (patches[${r.patchIndex}])`;

/** Copies referenced virtual objects to the host: an `ensure` each, or a warning if missing. */
export async function copyReferencesToHost(
  references: readonly ResolvedReference[],
  deps: ReferenceDeps,
  scope: LabelScope,
): Promise<{ actions: SyncAction[]; warnings: string[] }> {
  const actions: SyncAction[] = [];
  const warnings: string[] = [];
  for (const r of uniqueReferences(references.filter((x) => x.direction === "toHost"))) {
    const source = await deps.get("virtual", {
      apiVersion: r.apiVersion,
      kind: r.kind,
      ...r.virtual,
    });
    if (source === null) {
      warnings.push(
        `${describeRef(r, "virtual")} is referenced but does not exist in the virtual cluster; the host reference ${r.host.namespace}/${r.host.name} points at nothing until it does`,
      );
      continue;
    }
    actions.push({
      type: "ensure",
      side: "host",
      object: hostCopyOf(source, r, scope),
      reason: `copy of ${describeRef(r, "virtual")}, referenced as ${r.host.namespace}/${r.host.name}`,
    });
  }
  return { actions, warnings };
}

/**
 * Imports referenced host objects that have no virtual counterpart: an `ensure` each. `hostObjects`
 * are the objects listed to resolve the references; a referenced object not among them is skipped.
 */
export async function importReferencesToVirtual(
  references: readonly ResolvedReference[],
  hostObjects: readonly JsonObject[],
  deps: ReferenceDeps,
): Promise<{ actions: SyncAction[]; warnings: string[] }> {
  const actions: SyncAction[] = [];
  const warnings: string[] = [];
  for (const r of uniqueReferences(references.filter((x) => x.direction === "toVirtual"))) {
    const existing = await deps.get("virtual", {
      apiVersion: r.apiVersion,
      kind: r.kind,
      ...r.virtual,
    });
    if (existing !== null) continue;
    const source = hostObjects.find((o) => {
      const meta = field(o, "metadata");
      return (
        str(o.kind) === r.kind &&
        str(meta.name) === r.host.name &&
        str(meta.namespace) === r.host.namespace
      );
    });
    if (source === undefined) {
      warnings.push(
        `${describeRef(r, "host")} is referenced but was not found on the host; nothing imported`,
      );
      continue;
    }
    actions.push({
      type: "ensure",
      side: "virtual",
      object: virtualImportOf(source, r),
      reason: `import of host ${describeRef(r, "host")}, referenced as ${r.virtual.namespace}/${r.virtual.name}`,
    });
  }
  return { actions, warnings };
}
