// Annotations and labels sync both ways (docs/reference.md#endpoints-syncer-update): which keys
// changed on which side since the last sync (snapshot.ts), and so which change set goes to the
// host (through `expression`) and which to the virtual object (through `reverseExpression`).
// Pure: maps in, change sets out.
//
// Both sides are compared in the virtual key space: annotations keep their keys, and a host label
// key is read back through VirtualLabel (docs/reference.md#label-keys). Per key:
// - changed on the virtual side since the snapshot → the virtual value (or a deletion) goes to the
//   host; the virtual side wins when both changed (as vCluster's syncer does);
// - otherwise changed on the host side → the host value (or a deletion) goes to the virtual object;
// - otherwise nothing.
// Without a snapshot the virtual side wins for every key it has (and for managed keys it lost).

import {
  ControllerLabel,
  isTranslatedLabel,
  LABELS_TO_TRANSLATE,
  MarkerLabel,
  NamespaceLabel,
  NamespaceLabelPrefix,
  hostLabel,
  virtualLabel,
  type LabelScope,
} from "../../patches/labels.js";
import type { JsonObject } from "../../patches/types.js";
import { BOOKKEEPING_ANNOTATIONS, EXCLUDED_ANNOTATION } from "../translate-endpoints.js";
import { SKIP_MIRROR_LABEL } from "../translate-endpoint-slices.js";
import { hashValue, SNAPSHOT_ANNOTATION, type HashPair, type Snapshot } from "./snapshot.js";
import { isObject } from "../../shared/json.js";

/** vCluster's own keys; guarded-patch.ts keeps them out of patches' reach too. */
const VCLUSTER_PREFIX = "vcluster.loft.sh/";

/** Annotations that never sync either way: vCluster's bookkeeping, the leader lock, the snapshot. */
const NOT_SYNCED = new Set<string>([
  ...Object.values(BOOKKEEPING_ANNOTATIONS),
  EXCLUDED_ANNOTATION,
  SNAPSHOT_ANNOTATION,
]);

/**
 * Host labels that are vCluster's scoping, never a virtual label (VirtualLabelsMap's exclusions),
 * and the skip-mirror label vgate sync sets on host Endpoints while it writes their slices
 * (reconcile.ts markSkipMirror): it never flows back.
 */
function isScopingLabel(key: string): boolean {
  return (
    key === SKIP_MIRROR_LABEL ||
    key === MarkerLabel ||
    key === NamespaceLabel ||
    key === ControllerLabel ||
    key.startsWith(NamespaceLabelPrefix)
  );
}

export type StringMap = Record<string, string>;

/** One side's annotations and labels, in the virtual key space. */
export interface SyncedMaps {
  annotations: StringMap;
  labels: StringMap;
}

/** Values to set (or null: delete), by virtual key. */
export interface Changes {
  annotations: Record<string, string | null>;
  labels: Record<string, string | null>;
}

function metaMap(object: JsonObject, field: "annotations" | "labels"): StringMap {
  const meta = object.metadata;
  const map = isObject(meta) && Object.hasOwn(meta, field) ? meta[field] : undefined;
  const out: StringMap = {};
  if (!isObject(map)) return out;
  for (const [key, value] of Object.entries(map)) {
    if (typeof value === "string") setKey(out, key, value);
  }
  return out;
}

/** Defines an own key, so a key such as `__proto__` is an ordinary key. */
function setKey<T>(map: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

function filtered(map: StringMap, keep: (key: string) => boolean): StringMap {
  const out: StringMap = {};
  for (const [key, value] of Object.entries(map)) if (keep(key)) setKey(out, key, value);
  return out;
}

/** The virtual object's synced maps. Label keys that look translated are never synced (anti-spoofing, as HostLabelsMap). */
export function virtualMaps(virtual: JsonObject, scope: LabelScope): SyncedMaps {
  return {
    annotations: filtered(metaMap(virtual, "annotations"), (k) => !NOT_SYNCED.has(k)),
    labels: filtered(metaMap(virtual, "labels"), (k) => isTranslatedLabel(k, scope) === null),
  };
}

/** The host object's synced maps, its label keys read back to virtual keys. */
export function hostMaps(host: JsonObject, scope: LabelScope): SyncedMaps {
  const labels: StringMap = {};
  for (const [key, value] of Object.entries(metaMap(host, "labels"))) {
    if (isScopingLabel(key)) continue;
    const virtualKey = virtualLabel(key, scope);
    if (virtualKey !== null) setKey(labels, virtualKey, value);
  }
  return {
    annotations: filtered(metaMap(host, "annotations"), (k) => !NOT_SYNCED.has(k)),
    labels,
  };
}

/** The keys of vCluster's `managed-annotations` list on a host object. */
export function managedAnnotationKeys(host: JsonObject): string[] {
  const text = metaMap(host, "annotations")[BOOKKEEPING_ANNOTATIONS.managedAnnotations];
  return text === undefined || text === "" ? [] : text.split("\n");
}

/**
 * Keys that never flow host → virtual: vCluster's own annotations, and the labels vCluster uses
 * for scoping (release, managed-by, namespace, controlled-by; docs/reference.md#label-keys).
 */
const flowsBack = {
  annotations: (key: string) => !key.startsWith(VCLUSTER_PREFIX),
  labels: (key: string) => !LABELS_TO_TRANSLATE.includes(key),
};

const valueOrDelete = (map: StringMap, key: string): string | null =>
  Object.hasOwn(map, key) ? map[key]! : null;

const hashOf = (map: StringMap, key: string): string =>
  hashValue(Object.hasOwn(map, key) ? map[key] : undefined);

function planMap(
  field: "annotations" | "labels",
  virtual: StringMap,
  host: StringMap,
  snapshot: Record<string, HashPair>,
  changes: { toHost: Changes; toVirtual: Changes },
): void {
  const keys = new Set([...Object.keys(virtual), ...Object.keys(host), ...Object.keys(snapshot)]);
  for (const key of keys) {
    const before = Object.hasOwn(snapshot, key) ? snapshot[key]! : (["", ""] as HashPair);
    if (hashOf(virtual, key) !== before[0]) {
      setKey(changes.toHost[field], key, valueOrDelete(virtual, key));
    } else if (hashOf(host, key) !== before[1] && flowsBack[field](key)) {
      setKey(changes.toVirtual[field], key, valueOrDelete(host, key));
    }
  }
}

/** Which keys go which way, given both sides and the snapshot (null: none or unreadable). */
export function planChanges(
  virtual: SyncedMaps,
  host: SyncedMaps,
  snapshot: Snapshot | null,
  managedKeys: readonly string[],
): { toHost: Changes; toVirtual: Changes } {
  const changes = {
    toHost: { annotations: {}, labels: {} } as Changes,
    toVirtual: { annotations: {}, labels: {} } as Changes,
  };
  if (snapshot === null) {
    // No record of the last sync: the virtual side wins for every key it has, and a key vCluster
    // copied from it earlier (managed-annotations) that it no longer has is deleted. Host-only keys
    // are kept: nothing says where they came from.
    Object.assign(changes.toHost.annotations, virtual.annotations);
    Object.assign(changes.toHost.labels, virtual.labels);
    for (const key of managedKeys) {
      if (!Object.hasOwn(virtual.annotations, key) && Object.hasOwn(host.annotations, key)) {
        setKey(changes.toHost.annotations, key, null);
      }
    }
    return changes;
  }
  planMap("annotations", virtual.annotations, host.annotations, snapshot.annotations, changes);
  planMap("labels", virtual.labels, host.labels, snapshot.labels, changes);
  return changes;
}

export const isEmpty = (changes: Changes): boolean =>
  Object.keys(changes.annotations).length === 0 && Object.keys(changes.labels).length === 0;

/** The metadata part of a change set; label keys translated to host keys when `toHost`. */
export function metadataChangeSet(changes: Changes, hostScope: LabelScope | null): JsonObject {
  const metadata: JsonObject = {};
  if (Object.keys(changes.annotations).length > 0)
    metadata.annotations = { ...changes.annotations };
  if (Object.keys(changes.labels).length > 0) {
    const labels: JsonObject = {};
    for (const [key, value] of Object.entries(changes.labels)) {
      setKey(labels, hostScope === null ? key : hostLabel(key, hostScope), value);
    }
    metadata.labels = labels;
  }
  return metadata;
}

function pairs(virtual: StringMap, host: StringMap): Record<string, HashPair> {
  const out: Record<string, HashPair> = {};
  for (const key of new Set([...Object.keys(virtual), ...Object.keys(host)])) {
    setKey<HashPair>(out, key, [hashOf(virtual, key), hashOf(host, key)]);
  }
  return out;
}

/** The snapshot of both sides as they are after this sync's writes. */
export function snapshotOf(
  virtual: SyncedMaps,
  host: SyncedMaps,
  subsets: HashPair,
  config: string,
): Snapshot {
  return {
    annotations: pairs(virtual.annotations, host.annotations),
    labels: pairs(virtual.labels, host.labels),
    subsets,
    config,
  };
}
