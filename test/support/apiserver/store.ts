// In-memory object storage keyed by group/version/resource/namespace/name, with the fields the API
// server owns on create (uid, resourceVersion, creationTimestamp). Objects go in and out as copies.
// Every change gets the next global resourceVersion and becomes an event: watchers are told at
// once, and a bounded history lets a watch resume from an older resourceVersion (kube's watch
// cache keeps a window too; older ones get 410 Expired).

import { randomUUID } from "node:crypto";
import type { ResourceType } from "./resources.js";

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** One change: the object after it (for DELETED, the last state with the deletion's revision). */
export interface StoreEvent {
  type: ChangeType;
  revision: number;
  /** `group/version/resource` of the object. */
  resourceKey: string;
  namespace: string;
  object: KubeObject;
  /** The state before this change (MODIFIED, DELETED): watches with selectors need it. */
  previous?: KubeObject;
}

export type StoreListener = (event: StoreEvent) => void;

export const DEFAULT_HISTORY = 1000;

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private revision = 0;
  private readonly history: StoreEvent[] = [];
  /** The revision of the newest event dropped from the history (0: none dropped yet). */
  private compacted = 0;
  private readonly listeners = new Set<StoreListener>();

  constructor(private readonly maxHistory = DEFAULT_HISTORY) {}

  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const obj = this.objects.get(key(type, namespace, name));
    return obj && structuredClone(obj);
  }

  /** Objects of `type`, in one namespace or all of them (""), sorted as etcd keys sort. */
  list(type: ResourceType, namespace: string): KubeObject[] {
    const scope = type.namespaced && namespace ? `${namespace}/` : "";
    const prefix = `${type.group}/${type.version}/${type.resource}/${scope}`;
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => structuredClone(obj));
  }

  has(type: ResourceType, namespace: string, name: string): boolean {
    return this.objects.has(key(type, namespace, name));
  }

  /** Stores a new object (replacing any of that name), filling the server-owned metadata. */
  put(type: ResourceType, obj: KubeObject): KubeObject {
    const namespace = type.namespaced ? (obj.metadata.namespace ?? "") : "";
    const stored = structuredClone(obj);
    stored.metadata = {
      uid: randomUUID(),
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      ...stored.metadata,
      resourceVersion: this.nextRevision(),
    };
    if (!type.namespaced) delete stored.metadata.namespace;
    const k = key(type, namespace, obj.metadata.name);
    const previous = this.objects.get(k);
    this.objects.set(k, stored);
    this.record(previous ? "MODIFIED" : "ADDED", type, namespace, stored, previous);
    return structuredClone(stored);
  }

  remove(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const k = key(type, namespace, name);
    const obj = this.objects.get(k);
    if (!obj) return undefined;
    this.objects.delete(k);
    // etcd gives a delete its own revision; the DELETED event carries it.
    const gone = structuredClone(obj);
    gone.metadata.resourceVersion = this.nextRevision();
    this.record("DELETED", type, type.namespaced ? namespace : "", gone, obj);
    return structuredClone(obj);
  }

  /** Calls `listener` with every later change, synchronously; returns the unsubscribe function. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Changes after `revision`, oldest first; null when some of them left the history (410). */
  eventsSince(revision: number): StoreEvent[] | null {
    if (revision < this.compacted) return null;
    return this.history.filter((e) => e.revision > revision).map((e) => structuredClone(e));
  }

  /** The oldest revision a watch may still start from. */
  oldestRevision(): number {
    return this.compacted;
  }

  /** The resourceVersion a list answer carries. */
  currentRevision(): string {
    return String(this.revision);
  }

  /**
   * The objects of `type` (in `namespace`, or all: "") as they were at `revision`, with their
   * keys relative to the collection (`name` or `namespace/name`), in key order; null when that
   * revision left the history (a paged list resuming there gets 410 Expired).
   */
  snapshot(
    type: ResourceType,
    namespace: string,
    revision: number,
  ): { key: string; object: KubeObject }[] | null {
    if (revision < this.compacted) return null;
    const rk = resourceKey(type);
    const state = new Map<string, KubeObject>();
    for (const obj of this.list(type, namespace)) state.set(relativeKey(type, obj), obj);
    // Undo the changes after `revision`, newest first.
    for (let i = this.history.length - 1; i >= 0; i--) {
      const e = this.history[i]!;
      if (e.revision <= revision) break;
      if (e.resourceKey !== rk || (type.namespaced && namespace && e.namespace !== namespace))
        continue;
      const k = relativeKey(type, e.object);
      if (e.previous) state.set(k, structuredClone(e.previous));
      else state.delete(k);
    }
    return [...state.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, object]) => ({ key: k, object }));
  }

  /** The newest revision, as a number. */
  revisionNow(): number {
    return this.revision;
  }

  private record(
    type: ChangeType,
    rt: ResourceType,
    namespace: string,
    obj: KubeObject,
    previous?: KubeObject,
  ): void {
    const event: StoreEvent = {
      type,
      revision: this.revision,
      resourceKey: resourceKey(rt),
      namespace,
      object: structuredClone(obj),
    };
    if (previous) event.previous = structuredClone(previous);
    this.history.push(event);
    while (this.history.length > Math.max(0, this.maxHistory)) {
      this.compacted = this.history.shift()!.revision;
    }
    for (const listener of [...this.listeners]) listener(structuredClone(event));
  }

  private nextRevision(): string {
    this.revision += 1;
    return String(this.revision);
  }
}

export function resourceKey(type: ResourceType): string {
  return `${type.group}/${type.version}/${type.resource}`;
}

/** An object's key inside its collection, as etcd keys sort: `name` or `namespace/name`. */
export function relativeKey(type: ResourceType, obj: KubeObject): string {
  return type.namespaced
    ? `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`
    : obj.metadata.name;
}

function key(type: ResourceType, namespace: string, name: string): string {
  const ns = type.namespaced ? namespace : "";
  return `${resourceKey(type)}/${ns}/${name}`;
}
