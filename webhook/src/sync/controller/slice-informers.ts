// The EndpointSlice caches of `vgate sync` (docs/decisions.md KND-81), beside the Endpoints ones
// (informers.ts), and how their events become queue keys (`endpointslice:<namespace>/<name>` of
// the virtual slice):
// - virtual EndpointSlices, all namespaces: their own key;
// - host EndpointSlices that carry `vcluster.loft.sh/managed-by=<vcluster>`, in the target
//   namespace (every namespace in multi-namespace mode): the virtual key their bookkeeping names
//   (virtualSliceKeyFromHost), remembered for DELETED events;
// - a virtual Service or Endpoints event (informers.ts's keys) queues the slices that name the
//   Service (slicesOfService).

import type { KubeTransport } from "../../shared/transport.js";
import { KeyIndex } from "../../kube/controller/key-index.js";
import { WatchCache, type ChangeType } from "../../kube/controller/watch-cache.js";
import { MarkerLabel } from "../../patches/labels.js";
import type { JsonObject } from "../../patches/types.js";
import {
  hostSliceKey,
  sliceServiceName,
  virtualSliceKeyFromHost,
} from "../translate-endpoint-slices.js";
import {
  keyString,
  type EndpointSliceState,
  type ReconcileDeps,
  type SyncKey,
} from "./contracts.js";
import { SLICE_KEY_PREFIX, sliceKeyString } from "./reconcile-endpoint-slices.js";

type VCluster = ReconcileDeps["vcluster"];

const SLICES = "/apis/discovery.k8s.io/v1";

const keepAsSlice = (object: Record<string, unknown>): JsonObject =>
  ({ ...object, apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice" }) as JsonObject;

/** The host EndpointSlice collection the controller watches. */
function hostSlicesPath(vc: VCluster): string {
  if (vc.namespaceMappings !== undefined) return `${SLICES}/endpointslices`;
  const target = vc.targetNamespace ?? vc.namespace;
  return `${SLICES}/namespaces/${encodeURIComponent(target)}/endpointslices`;
}

export class SliceInformers {
  readonly virtualSlices: WatchCache<JsonObject>;
  readonly hostSlices: WatchCache<JsonObject>;
  /** Host cache key → the virtual key it maps to, for DELETED events. */
  private readonly hostToVirtual: KeyIndex;
  /** Virtual slice key → the Service key (namespace/name) its label names, and the reverse. */
  private readonly sliceToService = new Map<string, string>();
  private readonly serviceToSlices = new Map<string, Set<string>>();

  constructor(
    private readonly opts: {
      virtual: KubeTransport;
      host: KubeTransport;
      vcluster: VCluster;
      enqueue: (key: string) => void;
      onError: (cache: string, message: string) => void;
    },
  ) {
    this.hostToVirtual = new KeyIndex(opts.enqueue);
    this.virtualSlices = new WatchCache(opts.virtual, `${SLICES}/endpointslices`, keepAsSlice, {
      onChange: (type, key) => {
        this.index(type, key);
        opts.enqueue(`${SLICE_KEY_PREFIX}${key}`);
      },
      onError: (m) => opts.onError("virtual endpointslices", m),
    });
    this.hostSlices = new WatchCache(opts.host, hostSlicesPath(opts.vcluster), keepAsSlice, {
      labelSelector: `${MarkerLabel}=${opts.vcluster.name}`,
      onChange: (type, key) => this.onHostChange(type, key),
      onError: (m) => opts.onError("host endpointslices", m),
    });
  }

  get all(): { name: string; cache: WatchCache<unknown> }[] {
    return [
      { name: "virtual endpointslices", cache: this.virtualSlices },
      { name: "host endpointslices", cache: this.hostSlices },
    ];
  }

  start(): void {
    for (const { cache } of this.all) cache.start();
  }

  stop(): void {
    for (const { cache } of this.all) cache.stop();
  }

  /** What the caches know of one virtual slice; `services` reads the virtual Service cache. */
  state(
    key: SyncKey,
    vc: VCluster,
    services: (key: string) => JsonObject | undefined,
  ): EndpointSliceState {
    const virtual = this.virtualSlices.get(keyString(key)) ?? null;
    const service = virtual === null ? "" : sliceServiceName(virtual);
    const host = hostSliceKey(key, vc);
    return {
      key,
      virtual,
      service: service === "" ? null : (services(`${key.namespace}/${service}`) ?? null),
      host: this.hostSlices.get(`${host.namespace}/${host.name}`) ?? null,
    };
  }

  /** The slice keys of the virtual slices naming Service `serviceKey` (namespace/name). */
  slicesOfService(serviceKey: string): string[] {
    return [...(this.serviceToSlices.get(serviceKey) ?? [])].map((k) => `${SLICE_KEY_PREFIX}${k}`);
  }

  /** Keeps the Service index in step with the virtual slice cache. */
  private index(type: ChangeType, key: string): void {
    const before = this.sliceToService.get(key);
    const slice = type === "DELETED" ? undefined : this.virtualSlices.get(key);
    const name = slice === undefined ? "" : sliceServiceName(slice);
    const now = name === "" ? undefined : `${key.slice(0, key.indexOf("/"))}/${name}`;
    if (before === now) return;
    if (before !== undefined) {
      const set = this.serviceToSlices.get(before);
      set?.delete(key);
      if (set?.size === 0) this.serviceToSlices.delete(before);
    }
    if (now === undefined) {
      this.sliceToService.delete(key);
      return;
    }
    this.sliceToService.set(key, now);
    let set = this.serviceToSlices.get(now);
    if (set === undefined) this.serviceToSlices.set(now, (set = new Set()));
    set.add(key);
  }

  /** Every slice key either side knows of (a config reload requeues them all). */
  allKeys(): string[] {
    return [
      ...new Set([
        ...this.virtualSlices.keys().map((k) => `${SLICE_KEY_PREFIX}${k}`),
        ...this.hostToVirtual.values(),
      ]),
    ];
  }

  private onHostChange(type: ChangeType, hostKey: string): void {
    const object = type === "DELETED" ? undefined : this.hostSlices.get(hostKey);
    const key = object ? virtualSliceKeyFromHost(object, this.opts.vcluster) : null;
    this.hostToVirtual.set(hostKey, key ? sliceKeyString(key) : undefined);
  }
}
