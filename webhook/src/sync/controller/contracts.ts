// The shared shapes of `vgate sync`, the Endpoints sync controller between a virtual cluster and
// its host (docs/decisions.md EPS-10..). The controller (controller.ts) watches both clusters, queues
// the virtual namespace/name of every Endpoints object that may need work, and hands each one to the
// reconciler (reconcile.ts), which reads what it needs and answers with a plan of writes. The
// controller carries the plan out against the API servers, records a SyncError Event when it fails,
// and retries with backoff.

import type { Direction, JsonObject, VClusterInfo } from "../../patches/types.js";
import type { PatchRunner } from "../guarded-patch.js";

/** Which cluster an object lives in. */
export type Side = "virtual" | "host";

/** A namespaced object of any kind, by name. `namespace` is "" for cluster-scoped kinds. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The queue's item: the virtual Endpoints' namespace and name. */
export interface SyncKey {
  namespace: string;
  name: string;
}

export const keyString = (key: SyncKey): string => `${key.namespace}/${key.name}`;

/** Everything the reconciler knows of one key when it starts, from the informers' caches. */
export interface EndpointsState {
  key: SyncKey;
  /** The virtual Endpoints; null when it does not exist (or is gone). */
  virtual: JsonObject | null;
  /** The virtual Service of the same namespace and name; null when it does not exist. */
  service: JsonObject | null;
  /** The host Endpoints at the translated name; null when it does not exist. */
  host: JsonObject | null;
}

/**
 * One write. `update` is a PUT of the whole object with its metadata.resourceVersion, so a write
 * based on a stale read fails with 409 Conflict and the key is retried. `delete` carries the uid as
 * a precondition, so only the object that was read is deleted. `ensure` creates the object, or
 * updates it when it exists and carries vgate's bookkeeping for the same source; an object the
 * controller does not manage is never touched (the action then fails with a clear message).
 */
export type SyncAction =
  | { type: "create"; side: Side; object: JsonObject; reason: string }
  | { type: "update"; side: Side; object: JsonObject; reason: string }
  | { type: "delete"; side: Side; ref: ObjectRef; uid: string; reason: string }
  | { type: "ensure"; side: Side; object: JsonObject; reason: string };

/** Everything the EndpointSlice reconciler knows of one virtual slice, from the caches. */
export interface EndpointSliceState {
  key: SyncKey;
  /** The virtual EndpointSlice; null when it does not exist (or is gone). */
  virtual: JsonObject | null;
  /** The virtual Service its `kubernetes.io/service-name` label names; null when none. */
  service: JsonObject | null;
  /** The host EndpointSlice at the translated name; null when it does not exist. */
  host: JsonObject | null;
}

/** What the reconciler answers: the writes, in order, and warnings for the log. */
export interface SyncPlan {
  actions: SyncAction[];
  warnings: string[];
}

/** What the reconciler may use besides the state. */
export interface ReconcileDeps {
  /** The vCluster the controller syncs for; `targetNamespace` defaults to `namespace`. */
  vcluster: VClusterInfo & { targetNamespace?: string };
  /**
   * sync.toHost.endpoints.enabled of the current config (always true with --alongside-vcluster,
   * where the switch is vCluster's: EPS-25): false plans nothing at all.
   */
  enabled: boolean;
  /** The current config's patches in the sandbox (sync/patch-runner.ts). */
  run: PatchRunner;
  /**
   * EndpointSlices (docs/decisions.md KND-81): whether vgate sync syncs them
   * (`sync.toHost.endpointSlices.enabled`, always with --alongside-vcluster), and the runner of
   * `sync.toHost.endpointSlices.patches`. Absent: slices are not synced.
   */
  slices?: { enabled: boolean; run?: PatchRunner };
  /** Reads one object (references); null when it does not exist. Throws when unreachable. */
  get(side: Side, ref: ObjectRef): Promise<JsonObject | null>;
  /**
   * Lists the objects of one kind in one namespace ("" = all), to resolve references host →
   * virtual from their bookkeeping annotations.
   */
  list(side: Side, apiVersion: string, kind: string, namespace: string): Promise<JsonObject[]>;
}

/**
 * A failure that concerns one key only (a patch error, a hostile expression, an unmanaged host
 * object in the way): the controller records it as a Warning Event with reason SyncError on the
 * virtual object and retries with backoff. Any other error is retried without an Event.
 */
export class SyncError extends Error {
  override readonly name = "SyncError";
  constructor(
    message: string,
    /** Which way the failing step went, when it was a patch. */
    readonly direction?: Direction,
  ) {
    super(message);
  }
}

/** Reconciles one key: reads, runs patches, and plans the writes. Never writes itself. */
export type Reconcile = (state: EndpointsState, deps: ReconcileDeps) => Promise<SyncPlan>;
