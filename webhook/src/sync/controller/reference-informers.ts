// Informers on the kinds the config's reference patches name (references.ts referenceKinds), so
// that a host copy follows its virtual source (reference-copies.ts, docs/decisions.md#eps-18):
// - virtual objects of each kind, in all namespaces: a change queues the object's reference key,
//   but only when a host copy of it is cached (nearly every Secret has none);
// - host objects of each kind with `vcluster.loft.sh/managed-by=<vcluster>`, in the vCluster's
//   namespace (every namespace in multi-namespace mode): a copy that appears or changes queues the
//   key of the source its bookkeeping names.
// Both caches keep metadata only (name, uid, resourceVersion, the bookkeeping annotations and the
// scoping labels): a Secret's data never stays in memory. The reconcile reads objects live. A key
// is queued only when the caches say there is work (needsWork): a copy that records its source's
// uid and resourceVersion is left alone, so a restart with 1,000 up-to-date copies reads nothing.
// Kinds follow config reloads. A kind the API server does not serve (a CRD not installed yet) is
// retried every RETRY_MS; so is one whose paths discovery could not answer. Cluster-scoped kinds
// are not watched: their copies are refreshed only by the Endpoints that reference them.

import type { KubeTransport } from "../../shared/transport.js";
import { WatchCache, type ChangeType } from "../../kube/watch-cache.js";
import { ControllerLabel, MarkerLabel } from "../../patches/labels.js";
import { referenceHostLocation } from "../../patches/reference.js";
import type { JsonObject } from "../../patches/types.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import type { ReconcileDeps } from "./contracts.js";
import { copySourceOf, referenceKey, type ReferencedObject } from "./reference-copies.js";
import { IMPORTED_ANNOTATION, SOURCE_VERSION_ANNOTATION } from "./references.js";
import type { ResourcePaths } from "./resource-paths.js";

type VCluster = ReconcileDeps["vcluster"];

export interface ReferenceKind {
  apiVersion: string;
  kind: string;
}

export interface ReferenceInformerOptions {
  transports: { virtual: KubeTransport; host: KubeTransport };
  paths: { virtual: ResourcePaths; host: ResourcePaths };
  /** The vCluster as configured at start (informer scopes do not change on reload). */
  vcluster: VCluster;
  enqueue: (key: string) => void;
  onError: (cache: string, message: string) => void;
  retryMs?: number;
}

const RETRY_MS = 30_000;

interface Watched {
  kind: ReferenceKind;
  virtual: WatchCache<JsonObject>;
  host: WatchCache<JsonObject>;
}

const kindKey = (k: ReferenceKind): string => `${k.apiVersion}/${k.kind}`;

const KEPT_ANNOTATIONS = [
  ...Object.values(BOOKKEEPING_ANNOTATIONS),
  SOURCE_VERSION_ANNOTATION,
  IMPORTED_ANNOTATION,
];
const KEPT_LABELS = [MarkerLabel, ControllerLabel];

function pick(map: unknown, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof map !== "object" || map === null) return out;
  const record = map as Record<string, unknown>;
  for (const key of keys) {
    const value = Object.hasOwn(record, key) ? record[key] : undefined;
    if (typeof value === "string") out[key] = value;
  }
  return out;
}

/** The metadata the informers need, as the object (with its kind) the reconcile would read. */
export const metadataOnly =
  (kind: ReferenceKind) =>
  (object: Record<string, unknown>): JsonObject => {
    const meta = (object["metadata"] ?? {}) as Record<string, unknown>;
    const kept: JsonObject = {};
    for (const key of ["name", "namespace", "uid", "resourceVersion"]) {
      if (typeof meta[key] === "string") kept[key] = meta[key] as string;
    }
    kept["annotations"] = pick(meta["annotations"], KEPT_ANNOTATIONS);
    kept["labels"] = pick(meta["labels"], KEPT_LABELS);
    return { apiVersion: kind.apiVersion, kind: kind.kind, metadata: kept };
  };

export class ReferenceInformers {
  private readonly watched = new Map<string, Watched>();
  /** Kinds wanted but not watched yet (discovery failed), retried by a timer. */
  private pending: ReferenceKind[] = [];
  private wanted = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly opts: ReferenceInformerOptions) {}

  /** Watches exactly these kinds from now on: new ones start, dropped ones stop. */
  async setKinds(kinds: readonly ReferenceKind[]): Promise<void> {
    if (this.stopped) return;
    this.wanted = new Set(kinds.map(kindKey));
    for (const [key, w] of this.watched) {
      if (this.wanted.has(key)) continue;
      w.virtual.stop();
      w.host.stop();
      this.watched.delete(key);
    }
    this.pending = kinds.filter((k) => !this.watched.has(kindKey(k)));
    await this.startPending();
  }

  /** The kinds watched now (for tests and the log). */
  kinds(): ReferenceKind[] {
    return [...this.watched.values()].map((w) => w.kind);
  }

  /** Whether every watched kind's caches are synced. */
  synced(): boolean {
    return [...this.watched.values()].every((w) => w.virtual.synced() && w.host.synced());
  }

  /**
   * The reference keys of the cached copies that may be stale (needsWork), for a config reload:
   * a copy does not depend on the config, so only what changed while sync was disabled is work.
   */
  staleKeys(): string[] {
    const keys: string[] = [];
    for (const w of this.watched.values()) {
      for (const [, object] of w.host.entries()) {
        const source = copySourceOf(object, this.opts.vcluster);
        if (source !== null && needsWork(source, w.virtual, w.host, this.opts.vcluster)) {
          keys.push(referenceKey(source));
        }
      }
    }
    return keys;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const w of this.watched.values()) {
      w.virtual.stop();
      w.host.stop();
    }
    this.watched.clear();
  }

  private async startPending(): Promise<void> {
    clearTimeout(this.timer);
    const failed: ReferenceKind[] = [];
    for (const kind of this.pending) {
      try {
        const watched = await this.watch(kind);
        // A reload or stop while discovery ran: this kind may no longer be wanted.
        if (this.stopped || !this.wanted.has(kindKey(kind)) || this.watched.has(kindKey(kind))) {
          continue;
        }
        if (watched === null) continue;
        this.watched.set(kindKey(kind), watched);
        // The host copies are listed once the sources are, so that needsWork can tell an
        // up-to-date copy at once instead of queueing every copy at start.
        watched.virtual.start();
        void watched.virtual.waitForSync().then(
          () => {
            if (this.watched.get(kindKey(kind)) === watched) watched.host.start();
          },
          () => undefined,
        );
      } catch (err) {
        failed.push(kind);
        this.opts.onError(
          `${kind.kind} references`,
          `cannot watch ${kind.kind} (${kind.apiVersion}): ${err instanceof Error ? err.message : String(err)}; retrying`,
        );
      }
    }
    this.pending = failed;
    if (failed.length > 0 && !this.stopped) {
      this.timer = setTimeout(() => void this.startPending(), this.opts.retryMs ?? RETRY_MS);
      this.timer.unref();
    }
  }

  /** The two caches of one kind, not started; null for a cluster-scoped kind. */
  private async watch(kind: ReferenceKind): Promise<Watched | null> {
    const { paths, transports, vcluster } = this.opts;
    if (!(await paths.virtual.namespaced(kind.apiVersion, kind.kind))) return null;
    const hostNamespace = vcluster.namespaceMappings !== undefined ? "" : vcluster.namespace;
    const virtualPath = await paths.virtual.collection(kind.apiVersion, kind.kind, "");
    const hostPath = await paths.host.collection(kind.apiVersion, kind.kind, hostNamespace);
    const keep = metadataOnly(kind);
    const label = `${kind.kind} references`;
    let host: WatchCache<JsonObject> | undefined = undefined;
    const virtual: WatchCache<JsonObject> = new WatchCache(transports.virtual, virtualPath, keep, {
      // A namespaced object's cache key is "namespace/name" (also for DELETED, whose object is gone).
      onChange: (_type: ChangeType, key: string) => {
        const slash = key.indexOf("/");
        const source = { ...kind, namespace: key.slice(0, slash), name: key.slice(slash + 1) };
        if (host !== undefined && needsWork(source, virtual, host, vcluster)) {
          this.opts.enqueue(referenceKey(source));
        }
      },
      onError: (m) => this.opts.onError(`virtual ${label}`, m),
    });
    host = new WatchCache(transports.host, hostPath, keep, {
      labelSelector: `${MarkerLabel}=${vcluster.name}`,
      onChange: (type: ChangeType, key: string) => {
        if (type === "DELETED") return;
        const object = host?.get(key);
        const source = object ? copySourceOf(object, vcluster) : null;
        if (
          source !== null &&
          source.apiVersion === kind.apiVersion &&
          source.kind === kind.kind &&
          needsWork(source, virtual, host!, vcluster)
        ) {
          this.opts.enqueue(referenceKey(source));
        }
      },
      onError: (m) => this.opts.onError(`host ${label}`, m),
    });
    return { kind, virtual, host };
  }
}

const ownString = (map: unknown, key: string): string => {
  if (typeof map !== "object" || map === null || !Object.hasOwn(map, key)) return "";
  const value = (map as Record<string, unknown>)[key];
  return typeof value === "string" ? value : "";
};

const metaOf = (o: JsonObject | undefined): Record<string, unknown> =>
  (o?.["metadata"] ?? {}) as Record<string, unknown>;

/**
 * Whether the caches say the copy of `source` may need work (reference-copies.ts decides; this
 * only spares it the reads): a copy is cached, and the source is gone, differs in uid or
 * resourceVersion from what the copy records, or is not cached.
 * An imported source is never work.
 */
export function needsWork(
  source: ReferencedObject,
  virtual: WatchCache<JsonObject>,
  host: WatchCache<JsonObject>,
  vcluster: VCluster,
): boolean {
  const at = referenceHostLocation(source.name, source.namespace, vcluster);
  const copy = host.get(`${at.namespace}/${at.name}`);
  if (copy === undefined) return false;
  // Not cached: deleted, or not listed yet (the cache fills its map before it reports a LIST).
  const original = virtual.get(`${source.namespace}/${source.name}`);
  if (original === undefined) return true;
  const meta = metaOf(original);
  if (ownString(meta["annotations"], IMPORTED_ANNOTATION) === "true") return false;
  const recorded = metaOf(copy)["annotations"];
  return (
    ownString(recorded, BOOKKEEPING_ANNOTATIONS.uid) !== ownString(meta, "uid") ||
    ownString(recorded, SOURCE_VERSION_ANNOTATION) !== ownString(meta, "resourceVersion")
  );
}
