// The controller's informers (kube/watch-cache.ts) and how their events become queue keys:
// - virtual Endpoints, all namespaces: their own namespace/name;
// - virtual Services, all namespaces: the Endpoints of the same namespace/name (so Endpoints made
//   before their Service are synced once it appears, vcluster#2719);
// - host Endpoints that carry `vcluster.loft.sh/managed-by=<vcluster>`: in the target namespace in
//   single-namespace mode, in every namespace in multi-namespace mode; each maps back to the
//   virtual key its bookkeeping names (virtualKeyFromHost). A DELETED event no longer has the
//   object, so the key each host object mapped to is remembered.
// Host Endpoints without that label are not cached at all: the controller never touches them, and
// one in the way of a host copy is found when the create answers 409 AlreadyExists.
// In multi-namespace mode, also the host namespaces this vCluster owns (labelled for it, as vCluster
// labels the namespaces it creates; sync/host-ownership.ts): the write guard reads their labels
// (docs/decisions.md EPS-19). A namespace without those labels is not cached at all.

import type { KubeTransport } from "../../shared/transport.js";
import { NamespaceCache } from "../../kube/namespace-cache.js";
import { KeyIndex } from "../../kube/controller/key-index.js";
import { WatchCache, type ChangeType } from "../../kube/controller/watch-cache.js";
import { MarkerLabel } from "../../patches/labels.js";
import type { JsonObject } from "../../patches/types.js";
import { ownedNamespaceSelector } from "../host-ownership.js";
import { keyString, type EndpointsState, type ReconcileDeps, type SyncKey } from "./contracts.js";
import { hostKeyFor, virtualKeyFromHost } from "./reconcile.js";

type VCluster = ReconcileDeps["vcluster"];

export interface InformerOptions {
  virtual: KubeTransport;
  host: KubeTransport;
  /** The vCluster as configured at start (informer scopes do not change on reload). */
  vcluster: VCluster;
  enqueue: (key: string) => void;
  onError: (cache: string, message: string) => void;
}

/**
 * Items of a LIST carry no apiVersion and kind (only watch events do); the objects handed to the
 * reconciler, to writes and to Events must, so the cache sets them, as controller-runtime's does.
 */
const keepAs =
  (kind: "Endpoints" | "Service") =>
  (object: Record<string, unknown>): JsonObject =>
    ({ ...object, apiVersion: "v1", kind }) as JsonObject;

/** The host Endpoints collection the controller watches (see the header). */
export function hostEndpointsPath(vc: VCluster): string {
  if (vc.namespaceMappings !== undefined) return "/api/v1/endpoints";
  const target = vc.targetNamespace ?? vc.namespace;
  return `/api/v1/namespaces/${encodeURIComponent(target)}/endpoints`;
}

export class Informers {
  readonly virtualEndpoints: WatchCache<JsonObject>;
  readonly virtualServices: WatchCache<JsonObject>;
  readonly hostEndpoints: WatchCache<JsonObject>;
  /** The host namespaces labelled for this vCluster; null in single-namespace mode. */
  readonly hostNamespaces: NamespaceCache | null;
  /** Host cache key → the virtual key it maps to, for DELETED events. */
  private readonly hostToVirtual: KeyIndex;

  constructor(private readonly opts: InformerOptions) {
    this.hostToVirtual = new KeyIndex(opts.enqueue);
    const virtualChange = (_type: ChangeType, key: string) => opts.enqueue(key);
    this.virtualEndpoints = new WatchCache(opts.virtual, "/api/v1/endpoints", keepAs("Endpoints"), {
      onChange: virtualChange,
      onError: (m) => opts.onError("virtual endpoints", m),
    });
    this.virtualServices = new WatchCache(opts.virtual, "/api/v1/services", keepAs("Service"), {
      onChange: virtualChange,
      onError: (m) => opts.onError("virtual services", m),
    });
    this.hostEndpoints = new WatchCache(
      opts.host,
      hostEndpointsPath(opts.vcluster),
      keepAs("Endpoints"),
      {
        labelSelector: `${MarkerLabel}=${opts.vcluster.name}`,
        onChange: (type, key) => this.onHostChange(type, key),
        onError: (m) => opts.onError("host endpoints", m),
      },
    );
    this.hostNamespaces =
      opts.vcluster.namespaceMappings === undefined
        ? null
        : new NamespaceCache(opts.host, {
            labelSelector: ownedNamespaceSelector({
              vclusterName: opts.vcluster.name,
              vclusterNamespace: opts.vcluster.namespace,
            }),
            onError: (m) => opts.onError("host namespaces", m),
          });
  }

  private get all(): { name: string; cache: WatchCache<unknown> }[] {
    const caches: { name: string; cache: WatchCache<unknown> }[] = [
      { name: "virtual endpoints", cache: this.virtualEndpoints },
      { name: "virtual services", cache: this.virtualServices },
      { name: "host endpoints", cache: this.hostEndpoints },
    ];
    if (this.hostNamespaces) caches.push({ name: "host namespaces", cache: this.hostNamespaces });
    return caches;
  }

  start(): void {
    for (const { cache } of this.all) cache.start();
  }

  stop(): void {
    for (const { cache } of this.all) cache.stop();
  }

  synced(): boolean {
    return this.all.every(({ cache }) => cache.synced());
  }

  /** Which caches are not synced, for /readyz. */
  unsynced(): string[] {
    return this.all.flatMap(({ name, cache }) => (cache.synced() ? [] : [name]));
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.all.map(({ cache }) => cache.waitForSync(signal)));
  }

  /** What the caches know of one key (the host object at the name hostKeyFor gives). */
  state(key: SyncKey, vc: VCluster): EndpointsState {
    const host = hostKeyFor(key, vc);
    return {
      key,
      virtual: this.virtualEndpoints.get(keyString(key)) ?? null,
      service: this.virtualServices.get(keyString(key)) ?? null,
      host: this.hostEndpoints.get(`${host.namespace}/${host.name}`) ?? null,
    };
  }

  /** Every key either side knows of (a config reload requeues them all). */
  allKeys(): string[] {
    return [...new Set([...this.virtualEndpoints.keys(), ...this.hostToVirtual.values()])];
  }

  private onHostChange(type: ChangeType, hostKey: string): void {
    const object = type === "DELETED" ? undefined : this.hostEndpoints.get(hostKey);
    const key = object ? virtualKeyFromHost(object, this.opts.vcluster) : null;
    this.hostToVirtual.set(hostKey, key ? keyString(key) : undefined);
  }
}
