// In-memory object storage keyed by group/version/resource/namespace/name, with the fields the API
// server owns on create (uid, resourceVersion, creationTimestamp). Objects go in and out as copies.

import { randomUUID } from "node:crypto";
import type { ResourceType } from "./resources.js";

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private revision = 0;

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
    this.objects.set(key(type, namespace, obj.metadata.name), stored);
    return structuredClone(stored);
  }

  remove(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const k = key(type, namespace, name);
    const obj = this.objects.get(k);
    this.objects.delete(k);
    return obj;
  }

  /** The resourceVersion a list answer carries. */
  currentRevision(): string {
    return String(this.revision);
  }

  private nextRevision(): string {
    this.revision += 1;
    return String(this.revision);
  }
}

function key(type: ResourceType, namespace: string, name: string): string {
  const ns = type.namespaced ? namespace : "";
  return `${type.group}/${type.version}/${type.resource}/${ns}/${name}`;
}
