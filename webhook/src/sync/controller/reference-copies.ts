// Host copies of referenced objects follow their virtual source (docs/decisions.md#eps-18). An
// Endpoints sync copies a referenced object when a reference patch rewrites a name (references.ts);
// from then on the copy is its own work item, queued under a key of its own whenever the source
// or the copy changes (reference-informers.ts):
// - the source changed (another uid or resourceVersion than the copy records): the copy is
//   rewritten from it;
// - the source is gone: the copy is deleted (uid precondition);
// - no copy at the translated name, or an object there that is not vgate's copy of this source
//   (no managed-by label for this vCluster, no bookkeeping naming this source, or no object-uid,
//   which a host object imported into the virtual cluster lacks): nothing; copies are made only by
//   the Endpoints that reference them, and another's object is never touched;
// - the source is itself an import of a host object (object-imported): nothing, the host object
//   is the original.
// Pure: reads through deps.get and answers a plan of writes, as reconcile.ts does.

import { ControllerLabel, MarkerLabel } from "../../patches/labels.js";
import { referenceHostLocation, type ResolvedReference } from "../../patches/reference.js";
import type { JsonObject } from "../../patches/types.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import type { ObjectRef, ReconcileDeps, SyncPlan } from "./contracts.js";
import { scopeOf } from "./reconcile.js";
import { hostCopyOf, IMPORTED_ANNOTATION, SOURCE_VERSION_ANNOTATION } from "./references.js";
import { field, str } from "./object-fields.js";

/** A referenced virtual object: the source of a host copy. */
export type ReferencedObject = ObjectRef;

const PREFIX = "ref:";

/**
 * The queue key of a referenced object: `ref:<apiVersion>:<kind>:<namespace>/<name>`. Endpoints
 * keys are `<namespace>/<name>` and never contain a colon (names and namespaces cannot).
 */
export function referenceKey(r: ReferencedObject): string {
  return `${PREFIX}${r.apiVersion}:${r.kind}:${r.namespace}/${r.name}`;
}

export const isReferenceKey = (key: string): boolean => key.startsWith(PREFIX);

export function parseReferenceKey(key: string): ReferencedObject | null {
  const match = /^ref:([^:]+):([^:]+):([^/]*)\/(.+)$/.exec(key);
  if (match === null) return null;
  const [, apiVersion, kind, namespace, name] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { apiVersion, kind, namespace, name };
}

/** `group/version, Kind=K` (gvkString) back to apiVersion and kind; null when malformed. */
function parseGvk(text: string): { apiVersion: string; kind: string } | null {
  const match = /^([^/,]*)\/([^/,]+), Kind=(.+)$/.exec(text);
  if (match === null) return null;
  const [, group, version, kind] = match as unknown as [string, string, string, string];
  return { apiVersion: group === "" ? version : `${group}/${version}`, kind };
}

/**
 * The virtual object a host object is vgate's (or vCluster's) copy of, or null: the managed-by
 * label names this vCluster, nothing else controls it, object-name, object-namespace, object-uid
 * and the kind are set, and it sits where that source's copy belongs.
 */
export function copySourceOf(
  host: JsonObject,
  vcluster: ReconcileDeps["vcluster"],
): ReferencedObject | null {
  const meta = field(host, "metadata");
  const labels = field(meta, "labels");
  if (str(labels[MarkerLabel]) !== vcluster.name || str(labels[ControllerLabel]) !== "") {
    return null;
  }
  const annotations = field(meta, "annotations");
  const name = str(annotations[BOOKKEEPING_ANNOTATIONS.name]);
  const namespace = str(annotations[BOOKKEEPING_ANNOTATIONS.namespace]);
  const gvk = parseGvk(str(annotations[BOOKKEEPING_ANNOTATIONS.kind]));
  if (name === "" || namespace === "" || gvk === null) return null;
  if (str(annotations[BOOKKEEPING_ANNOTATIONS.uid]) === "") return null;
  const at = referenceHostLocation(name, namespace, vcluster);
  if (at.name !== str(meta.name) || at.namespace !== str(meta.namespace)) return null;
  return { ...gvk, namespace, name };
}

const sameObject = (a: ReferencedObject, b: ReferencedObject): boolean =>
  a.apiVersion === b.apiVersion &&
  a.kind === b.kind &&
  a.namespace === b.namespace &&
  a.name === b.name;

const nothing = (): SyncPlan => ({ actions: [], warnings: [] });

/** Whether the copy records this very version of the source. */
function upToDate(host: JsonObject, source: JsonObject): boolean {
  const annotations = field(field(host, "metadata"), "annotations");
  const meta = field(source, "metadata");
  return (
    str(annotations[BOOKKEEPING_ANNOTATIONS.uid]) === str(meta.uid) &&
    str(annotations[SOURCE_VERSION_ANNOTATION]) === str(meta.resourceVersion)
  );
}

const describe = (r: ReferencedObject): string => `${r.kind} ${r.namespace}/${r.name}`;

/** Brings the host copy of one referenced virtual object in line with it (see the header). */
export async function reconcileReferenceCopy(
  source: ReferencedObject,
  deps: Pick<ReconcileDeps, "vcluster" | "enabled" | "get">,
): Promise<SyncPlan> {
  if (!deps.enabled) return nothing();
  const at = referenceHostLocation(source.name, source.namespace, deps.vcluster);
  const hostRef = { apiVersion: source.apiVersion, kind: source.kind, ...at };
  const host = await deps.get("host", hostRef);
  if (host === null) return nothing();
  const of = copySourceOf(host, deps.vcluster);
  if (of === null || !sameObject(of, source)) return nothing();
  const virtual = await deps.get("virtual", source);
  const copyName = `${at.namespace}/${at.name}`;
  if (virtual === null) {
    return {
      actions: [
        {
          type: "delete",
          side: "host",
          ref: hostRef,
          uid: str(field(host, "metadata").uid),
          reason: `copy of ${describe(source)}, which was deleted in the virtual cluster`,
        },
      ],
      warnings: [],
    };
  }
  const virtualAnnotations = field(field(virtual, "metadata"), "annotations");
  if (str(virtualAnnotations[IMPORTED_ANNOTATION]) === "true") return nothing();
  if (upToDate(host, virtual)) return nothing();
  const reference: ResolvedReference = {
    patchIndex: -1,
    direction: "toHost",
    apiVersion: source.apiVersion,
    kind: source.kind,
    virtual: { namespace: source.namespace, name: source.name },
    host: at,
  };
  const copy = hostCopyOf(virtual, reference, scopeOf(deps.vcluster));
  const meta = field(copy, "metadata");
  meta.resourceVersion = str(field(host, "metadata").resourceVersion);
  copy.metadata = meta;
  return {
    actions: [
      {
        type: "update",
        side: "host",
        object: copy,
        reason: `copy ${copyName} of ${describe(source)}, which changed`,
      },
    ],
    warnings: [],
  };
}
