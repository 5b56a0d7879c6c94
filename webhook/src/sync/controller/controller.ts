// The running `vgate sync` controller (docs/decisions.md EPS-11..): informers on both clusters feed
// a rate-limited work queue; workers hand each key to the reconciler (reconcile.ts) and carry out
// its plan (apply-plan.ts). As in a controller-runtime manager:
// - informers run in every replica, so a standby is warm; a replica campaigns for the Lease only
//   once every cache is synced; workers run only once every cache is synced and, with leader
//   election, only while this replica holds the Lease;
// - losing the Lease stops the workers and ends the process with status 1 ("leader election
//   lost"): a replica that may have missed writes of the new leader starts afresh;
// - SIGTERM: /readyz fails, no new work is taken, reconciles in flight finish (bounded by
//   --shutdown-timeout), the informers stop, the Lease is released, the sandbox closes.
// start.ts assembles it and starts what it runs.

import { hostname } from "node:os";
import type { LoadedVCluster } from "../../config/loaded-vcluster.js";
import type { SyncOptions } from "./options.js";
import type { KubeTransport } from "../../kube/transport.js";
import type { Logger } from "../../server/logger.js";
import { applyPlan, RetryConflict, type Sides, type WriteOutcome } from "./apply-plan.js";
import type { JsonObject } from "../../patches/types.js";
import { clusterReads } from "./cluster-reads.js";
import {
  SyncError,
  type EndpointsState,
  type ReconcileDeps,
  type SyncKey,
  type SyncPlan,
} from "./contracts.js";
import { EventRecorder } from "../../kube/controller/event-recorder.js";
import { Informers } from "./informers.js";
import type { LiveConfig } from "./live-config.js";
import { createSyncMetrics, type ReconcileResult, type SyncMetrics } from "./metrics.js";
import { reconcileEndpoints } from "./reconcile.js";
import { isReferenceKey, parseReferenceKey, reconcileReferenceCopy } from "./reference-copies.js";
import { ReferenceInformers } from "./reference-informers.js";
import { referenceKinds } from "./references.js";
import { WorkQueue } from "../../kube/controller/work-queue.js";
import { writeGuard, type WriteGuard } from "./write-guard.js";

const EVENT_COMPONENT = "vgate-sync";

export interface ControllerHooks {
  /** How often the config file is read regardless of file events (5 s). */
  configIntervalMs?: number;
  /** The Lease holder identity (default: hostname_uuid, as controller-runtime). */
  identity?: string;
  /** Process metrics in the registry (default true; tests with several controllers: false). */
  processMetrics?: boolean;
  /**
   * Where the host's in-cluster config comes from without --host-kubeconfig (default: the pod's,
   * $KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount).
   */
  inCluster?: { env: NodeJS.ProcessEnv; serviceAccountDir: string };
}

export const messageOf = (err: unknown): string =>
  err instanceof Error ? err.message : String(err);

function parseKey(key: string): SyncKey {
  const slash = key.indexOf("/");
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Everything the controller runs, built by startController and stopped by its shutdown. */
export class Controller {
  readonly queue = new WorkQueue();
  readonly metrics: SyncMetrics;
  readonly informers: Informers;
  readonly references: ReferenceInformers;
  readonly events: EventRecorder;
  /** Where and what the controller may write (write-guard.ts), checked by applyPlan. */
  readonly guard: WriteGuard;
  private readonly reads: Pick<ReconcileDeps, "get" | "list">;
  private readonly workers: Promise<void>[] = [];
  private readonly abortSync = new AbortController();
  private stopping = false;
  private leading = false;
  lostResolve: () => void = () => undefined;
  readonly lost = new Promise<void>((resolve) => (this.lostResolve = resolve));

  constructor(
    readonly opts: SyncOptions,
    readonly logger: Logger,
    readonly live: LiveConfig,
    readonly sides: Sides,
    readonly transports: { virtual: KubeTransport; host: KubeTransport },
    hooks: ControllerHooks,
  ) {
    this.metrics = createSyncMetrics({
      leaseName: opts.leaderElection.id,
      processMetrics: hooks.processMetrics,
    });
    this.metrics.watchDepth(() => this.queue.depth);
    this.reads = clusterReads(sides);
    this.events = new EventRecorder(transports.virtual, {
      component: EVENT_COMPONENT,
      host: hostname(),
      log: (msg: string, fields?: object) => logger.warn(fields ?? {}, msg),
    });
    this.informers = new Informers({
      virtual: transports.virtual,
      host: transports.host,
      vcluster: this.vcluster(live.loaded),
      enqueue: (key) => this.enqueue(key),
      onError: (cache, message) =>
        logger.warn({ cache, err: message }, "watch cache unsynced; relisting"),
    });
    this.guard = writeGuard({
      owner: {
        vclusterName: opts.vclusterName,
        vclusterNamespace: opts.vclusterNamespace,
        ownNamespaces: [...new Set([opts.vclusterNamespace, opts.targetNamespace])],
        selfNamespace: opts.selfNamespace,
      },
      namespaces: this.informers.hostNamespaces ?? undefined,
      secretTypes: new Set(opts.referenceSecretTypes),
      copyKinds: () =>
        new Set(referenceKinds(this.live.loaded.vcluster).map((k) => `${k.apiVersion}/${k.kind}`)),
    });
    this.references = new ReferenceInformers({
      transports,
      paths: { virtual: sides.virtual.paths, host: sides.host.paths },
      vcluster: this.vcluster(live.loaded),
      enqueue: (key) => this.enqueue(key),
      onError: (cache, message) =>
        logger.warn({ cache, err: message }, "watch cache unsynced; relisting"),
    });
  }

  /** The keys a config reload requeues: every Endpoints key, and the copies that may be stale. */
  allKeys(): string[] {
    return [...this.informers.allKeys(), ...this.references.staleKeys()];
  }

  /** Starts, stops or keeps the reference informers as the loaded config's patches name kinds. */
  watchReferences(loaded: LoadedVCluster): Promise<void> {
    return this.references.setKinds(referenceKinds(loaded.vcluster));
  }

  vcluster(loaded: LoadedVCluster): ReconcileDeps["vcluster"] {
    return { ...loaded.vcluster, targetNamespace: this.opts.targetNamespace };
  }

  enqueue(key: string): void {
    this.metrics.added();
    this.queue.add(key);
  }

  /** /readyz: null when ready, else why not. */
  notReady(): string | null {
    if (this.stopping) return "shutting down";
    const unsynced = this.informers.unsynced();
    return unsynced.length ? `caches not synced: ${unsynced.join(", ")}` : null;
  }

  /** Leading (or no leader election): start the workers once every cache is synced. */
  startLeading(): void {
    this.leading = true;
    this.metrics.leading(true);
    void this.informers.waitForSync(this.abortSync.signal).then(
      () => {
        if (this.stopping || !this.leading) return;
        this.logger.info({ workers: this.opts.workers }, "caches synced; starting workers");
        for (let i = 0; i < this.opts.workers; i++) this.workers.push(this.work());
      },
      () => undefined,
    );
  }

  /**
   * Calls `start` once every cache is synced (the replica is ready), unless it is shutting down by
   * then; never when the caches never sync.
   */
  whenSynced(start: () => void): void {
    void this.informers.waitForSync(this.abortSync.signal).then(
      () => {
        if (!this.stopping) start();
      },
      () => undefined,
    );
  }

  /** The Lease was lost: stop at once, without draining (another replica leads now). */
  async leadershipLost(): Promise<void> {
    this.leading = false;
    this.metrics.leading(false);
    if (this.stopping) return;
    this.stopping = true;
    this.logger.error({ lease: this.opts.leaderElection.id }, "leader election lost");
    this.queue.shutDown();
    this.abortSync.abort();
    this.informers.stop();
    this.references.stop();
    this.lostResolve();
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // After SIGTERM or a lost Lease the queue still hands out what is queued: take none of it.
      if (this.stopping) {
        this.queue.done(key);
        return;
      }
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** One reconcile of one key, with its outcome in the metrics and the log; never throws. */
  async process(key: string): Promise<void> {
    const started = performance.now();
    const lease = this.live.acquire();
    let subject: JsonObject | null = null;
    let result: ReconcileResult;
    this.logger.debug(this.fieldsOf(key), "reconciling");
    try {
      const deps: ReconcileDeps = {
        vcluster: this.vcluster(lease.loaded),
        enabled: lease.loaded.enabled,
        run: lease.run,
        ...this.reads,
      };
      const reference = parseReferenceKey(key);
      let plan: SyncPlan;
      if (reference !== null) {
        // The Event of a failed copy goes on the referenced virtual object.
        subject = {
          apiVersion: reference.apiVersion,
          kind: reference.kind,
          metadata: { namespace: reference.namespace, name: reference.name },
        };
        plan = await reconcileReferenceCopy(reference, deps);
      } else {
        const state: EndpointsState = this.informers.state(parseKey(key), deps.vcluster);
        subject = state.virtual;
        plan = await reconcileEndpoints(state, deps);
      }
      for (const warning of plan.warnings)
        this.logger.warn({ ...this.fieldsOf(key), warning }, "reconcile warning");
      await applyPlan(plan, this.sides, this.guard, (o) => this.wrote(key, o));
      this.queue.forget(key);
      result = "success";
    } catch (err) {
      result = this.failed(key, subject, err);
    } finally {
      lease.release();
    }
    this.metrics.reconciled(result, (performance.now() - started) / 1000);
  }

  /** How a key is named in the log: `endpoints: ns/name`, or `reference: ref:...`. */
  private fieldsOf(key: string): Record<string, string> {
    return isReferenceKey(key) ? { reference: key } : { endpoints: key };
  }

  /** A write done: counted, and logged by key, action and outcome (never the object). */
  private wrote(key: string, o: WriteOutcome): void {
    this.metrics.wrote(o.side, o.type);
    this.logger.info(
      {
        ...this.fieldsOf(key),
        side: o.side,
        action: o.type,
        kind: o.ref.kind,
        object: o.ref.namespace ? `${o.ref.namespace}/${o.ref.name}` : o.ref.name,
        result: o.did,
        reason: o.reason,
      },
      "synced",
    );
  }

  private failed(key: string, virtual: JsonObject | null, err: unknown): ReconcileResult {
    this.queue.addRateLimited(key);
    this.metrics.retried();
    const retries = this.queue.numRequeues(key);
    if (err instanceof RetryConflict) {
      this.logger.debug({ ...this.fieldsOf(key), err: err.message, retries }, "conflict; requeued");
      return "requeue";
    }
    if (err instanceof SyncError) {
      this.logger.warn({ ...this.fieldsOf(key), err: err.message, retries }, "sync failed");
      // vCluster records sync errors on the virtual object: reason SyncError, action Sync<Kind>.
      if (virtual) {
        const action = `Sync${typeof virtual["kind"] === "string" ? virtual["kind"] : "Endpoints"}`;
        void this.events.warning(virtual, "SyncError", action, err.message);
      }
      return "error";
    }
    this.logger.warn(
      { ...this.fieldsOf(key), err: messageOf(err), retries },
      "reconcile failed; retrying",
    );
    return "error";
  }

  /** SIGTERM: stop taking work, let reconciles in flight finish (bounded), then stop the rest. */
  async drain(): Promise<void> {
    this.stopping = true;
    this.abortSync.abort();
    const timeoutMs = this.opts.shutdownTimeoutMs;
    const deadline = performance.now() + timeoutMs;
    if (!(await this.queue.shutDownWithDrain(timeoutMs))) {
      this.logger.warn({ timeoutMs }, "reconciles still running at --shutdown-timeout; stopping");
    }
    const left = Math.max(0, deadline - performance.now());
    const timeout = new Promise<void>((r) => setTimeout(r, left).unref());
    await Promise.race([Promise.all(this.workers), timeout]);
    this.informers.stop();
    this.references.stop();
  }
}
