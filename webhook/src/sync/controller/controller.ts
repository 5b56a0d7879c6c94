// The running `vgate sync` (docs/decisions.md EPS-11..): informers on both clusters feed a
// rate-limited work queue; workers hand each key to the reconciler (reconcile.ts) and carry out its
// plan (apply-plan.ts). As in a controller-runtime manager:
// - informers run in every replica, so a standby is warm; a replica campaigns for the Lease only
//   once every cache is synced; workers run only once every cache is synced and, with leader
//   election, only while this replica holds the Lease;
// - losing the Lease stops the workers and ends the process with status 1 ("leader election
//   lost"): a replica that may have missed writes of the new leader starts afresh;
// - SIGTERM: /readyz fails, no new work is taken, reconciles in flight finish (bounded by
//   --shutdown-timeout), the informers stop, the Lease is released, the sandbox closes.
// Start-up either completes or fails as a whole: whatever was started is stopped again.

import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { VClusterConfigError } from "../../config/load-config.js";
import { loadVClusterFile, type LoadedVCluster } from "../../config/loaded-vcluster.js";
import { startPatchRunner } from "../patch-runner.js";
import type { SyncOptions } from "./options.js";
import { SyncStartError } from "./start-error.js";
import { KubeConfigError, loadKubeConfig, SERVICE_ACCOUNT_DIR } from "../../shared/kubeconfig.js";
import { KubeTransport } from "../../shared/transport.js";
import { createLogger, flushLogs, type Logger } from "../../server/logger.js";
import { applyPlan, RetryConflict, type Sides, type WriteOutcome } from "./apply-plan.js";
import type { JsonObject } from "../../patches/types.js";
import { clusterReads } from "./cluster-reads.js";
import { ConfigWatcher } from "../../kube/controller/config-watch.js";
import {
  SyncError,
  type EndpointsState,
  type ReconcileDeps,
  type SyncKey,
  type SyncPlan,
} from "./contracts.js";
import { EventRecorder } from "../../kube/controller/event-recorder.js";
import { Informers } from "./informers.js";
import { SliceInformers } from "./slice-informers.js";
import { parseSliceKey, reconcileEndpointSlice } from "./reconcile-endpoint-slices.js";
import { SLICE_CONTROLLER_NAME } from "./metrics.js";
import { PATCH_KINDS } from "../../config/patch-kinds.js";
import { LeaderElector } from "../../kube/controller/leader-election.js";
import { LiveConfig } from "./live-config.js";
import { createSyncMetrics, type ReconcileResult, type SyncMetrics } from "./metrics.js";
import { startProbeServer, type ProbeServer } from "../../kube/controller/probe-server.js";
import { reconcileEndpoints } from "./reconcile.js";
import { isReferenceKey, parseReferenceKey, reconcileReferenceCopy } from "./reference-copies.js";
import { ReferenceInformers } from "./reference-informers.js";
import { referenceKinds } from "./references.js";
import { ResourcePaths } from "./resource-paths.js";
import { WorkQueue } from "../../kube/controller/work-queue.js";
import { alongsideVClusterProblems } from "../alongside-vcluster.js";
import { writeGuard, type WriteGuard } from "./write-guard.js";

/** sync.toHost.endpointSlices in the kinds table. */
const SLICE_KIND = PATCH_KINDS.find((k) => k.section === "toHost" && k.key === "endpointSlices")!;

/**
 * Whether vgate sync syncs EndpointSlices: vCluster's switch, `sync.toHost.endpointSlices.enabled`,
 * read as helm coalesces the chart's default (true): absent is true, a null on the way removes the
 * default (Go's false, EPS-34). With --alongside-vcluster the switch is vCluster's alone (it must be
 * off there) and vgate sync syncs the slices as it syncs Endpoints (docs/decisions.md KND-83).
 */
function slicesEnabled(
  loaded: LoadedVCluster,
  opts: Pick<SyncOptions, "alongsideVCluster">,
): boolean {
  if (opts.alongsideVCluster) return true;
  let node: unknown = loaded.vcluster.config;
  for (const key of ["sync", "toHost", "endpointSlices", "enabled"]) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return true;
    if (!Object.hasOwn(node, key)) return true;
    node = (node as Record<string, unknown>)[key];
    if (node === null) return false;
  }
  return node === true;
}

/** Deadline of one request to either API server (a watch: until its answer starts). */
const REQUEST_TIMEOUT_MS = 15_000;
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

export interface RunningController {
  logger: Logger;
  metrics: SyncMetrics;
  /** host:port of /healthz and /readyz, and of /metrics; null when disabled. */
  probeAddress: string | null;
  metricsAddress: string | null;
  /** Settles when the Lease was lost (the process must then exit 1). */
  lost: Promise<void>;
  /** Graceful stop (SIGTERM). */
  shutdown(): Promise<void>;
}

type Undo = () => Promise<void> | void;

async function loadKube(file: string, flag: string) {
  try {
    return (await loadKubeConfig({ kubeconfig: file, env: {} }))!;
  } catch (err) {
    if (err instanceof KubeConfigError) throw new SyncStartError(`${flag}: ${err.message}`);
    throw err;
  }
}

/**
 * The host cluster: --host-kubeconfig, else the pod's service account (client-go's
 * InClusterConfig). Never $KUBECONFIG: with two clusters in play, an ambient kubeconfig could
 * name either.
 */
async function loadHostKube(file: string | undefined, hooks: ControllerHooks) {
  if (file !== undefined) return loadKube(file, "--host-kubeconfig");
  const { env, serviceAccountDir } = hooks.inCluster ?? {
    env: process.env,
    serviceAccountDir: SERVICE_ACCOUNT_DIR,
  };
  const kc = await loadKubeConfig({
    env: {
      KUBERNETES_SERVICE_HOST: env["KUBERNETES_SERVICE_HOST"],
      KUBERNETES_SERVICE_PORT: env["KUBERNETES_SERVICE_PORT"],
    },
    serviceAccountDir,
    allowMissing: true,
  });
  if (kc === null) {
    throw new SyncStartError(
      `no --host-kubeconfig, and not in a pod: $KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT or ${serviceAccountDir}/token is missing; pass --host-kubeconfig`,
    );
  }
  return kc;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

function parseKey(key: string): SyncKey {
  const slash = key.indexOf("/");
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Everything the controller runs, built by startController and stopped by its shutdown. */
class Controller {
  readonly queue = new WorkQueue();
  readonly metrics: SyncMetrics;
  readonly informers: Informers;
  /** Virtual and host EndpointSlices (docs/decisions.md KND-81). */
  readonly slices: SliceInformers;
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
    this.slices = new SliceInformers({
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
    return [...this.informers.allKeys(), ...this.slices.allKeys(), ...this.references.staleKeys()];
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
    // An Endpoints key is also its Service's: the slices naming that Service pass its gate again.
    if (parseSliceKey(key) === null && !isReferenceKey(key)) {
      for (const slice of this.slices.slicesOfService(key)) {
        this.metrics.added();
        this.queue.add(slice);
      }
    }
  }

  /** Settles once every cache of both clusters is synced. */
  waitForSync(signal: AbortSignal): Promise<unknown> {
    return Promise.all([
      this.informers.waitForSync(signal),
      ...this.slices.all.map(({ cache }) => cache.waitForSync(signal)),
    ]);
  }

  /** /readyz: null when ready, else why not. */
  notReady(): string | null {
    if (this.stopping) return "shutting down";
    const unsynced = [
      ...this.informers.unsynced(),
      ...this.slices.all.flatMap(({ name, cache }) => (cache.synced() ? [] : [name])),
    ];
    return unsynced.length ? `caches not synced: ${unsynced.join(", ")}` : null;
  }

  /** Leading (or no leader election): start the workers once every cache is synced. */
  startLeading(): void {
    this.leading = true;
    this.metrics.leading(true);
    void this.waitForSync(this.abortSync.signal).then(
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
    void this.waitForSync(this.abortSync.signal).then(
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
    this.slices.stop();
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
    let controller: string | undefined;
    this.logger.debug(this.fieldsOf(key), "reconciling");
    try {
      const deps: ReconcileDeps = {
        vcluster: this.vcluster(lease.loaded),
        enabled: lease.loaded.enabled,
        run: lease.run,
        slices: {
          enabled: slicesEnabled(lease.loaded, this.opts),
          run: lease.runFor(SLICE_KIND),
        },
        ...this.reads,
      };
      const reference = parseReferenceKey(key);
      const slice = parseSliceKey(key);
      let plan: SyncPlan;
      if (slice !== null) {
        controller = SLICE_CONTROLLER_NAME;
        const state = this.slices.state(slice, deps.vcluster, (k) =>
          this.informers.virtualServices.get(k),
        );
        subject = state.virtual;
        plan = await reconcileEndpointSlice(state, deps);
      } else if (reference !== null) {
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
    this.metrics.reconciled(result, (performance.now() - started) / 1000, controller);
  }

  /** How a key is named in the log: `endpoints: ns/name`, `endpointslice: ns/name` or `reference: ref:...`. */
  private fieldsOf(key: string): Record<string, string> {
    if (isReferenceKey(key)) return { reference: key };
    const slice = parseSliceKey(key);
    return slice === null
      ? { endpoints: key }
      : { endpointslice: `${slice.namespace}/${slice.name}` };
  }

  /** A write done: counted, and logged by key, action and outcome (never the object). */
  private wrote(key: string, o: WriteOutcome): void {
    this.metrics.wrote(o.side, o.type, o.ref.kind);
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
    this.slices.stop();
    this.references.stop();
  }
}

async function startLeaderElection(
  c: Controller,
  hooks: ControllerHooks,
  undo: Undo[],
): Promise<void> {
  const le = c.opts.leaderElection;
  if (!le.enabled) {
    c.startLeading();
    return;
  }
  const identity = hooks.identity ?? `${hostname()}_${randomUUID()}`;
  const elector = new LeaderElector({
    transport: c.transports.host,
    namespace: le.namespace,
    name: le.id,
    identity,
    leaseDurationMs: le.leaseDurationMs,
    renewDeadlineMs: le.renewDeadlineMs,
    retryPeriodMs: le.retryPeriodMs,
    onStartedLeading: () => {
      c.logger.info({ lease: `${le.namespace}/${le.id}`, identity }, "became leader");
      c.startLeading();
    },
    onStoppedLeading: () => void c.leadershipLost(),
    log: (msg: string, fields?: object) => c.logger.info(fields ?? {}, msg),
  });
  // As a controller-runtime manager does, campaign only once every cache is synced: a replica
  // that cannot sync (a cluster it cannot reach) never holds the Lease, released or expired, while
  // a ready one waits; and a new leader syncs at once (docs/decisions.md EPS-24).
  c.whenSynced(() => {
    c.logger.info({ lease: `${le.namespace}/${le.id}`, identity }, "waiting for the lease");
    elector.start();
  });
  undo.push(() => elector.stop());
}

/**
 * The config file as vgate sync runs it, at start and on every reload. With --alongside-vcluster
 * the file is the one vCluster's syncer runs with: it must turn vCluster's Endpoints and
 * EndpointSlice sync off, and vgate sync then syncs Endpoints all the same (EPS-25, EPS-26).
 */
async function loadSyncConfig(opts: SyncOptions): Promise<LoadedVCluster> {
  let loaded: LoadedVCluster;
  try {
    loaded = await loadVClusterFile(
      opts.config,
      { name: opts.vclusterName, namespace: opts.vclusterNamespace },
      opts.selfNamespace,
    );
  } catch (err) {
    if (!(err instanceof VClusterConfigError)) throw err;
    throw new SyncStartError(`invalid config ${err.fileName}:\n  ${err.problems.join("\n  ")}`);
  }
  if (!opts.alongsideVCluster) return loaded;
  const problems = alongsideVClusterProblems(loaded.vcluster.config);
  if (problems.length > 0) {
    throw new SyncStartError(`invalid config ${opts.config}:\n  ${problems.join("\n  ")}`);
  }
  return { ...loaded, enabled: true };
}

async function reloadConfig(c: Controller): Promise<void> {
  const { opts, logger } = c;
  let next: LoadedVCluster;
  try {
    next = await loadSyncConfig(opts);
    const before = c.live.loaded.vcluster.namespaceMappings !== undefined;
    if (before !== (next.vcluster.namespaceMappings !== undefined)) {
      throw new Error(
        "sync.toHost.namespaces.enabled cannot change while running: restart vgate sync",
      );
    }
  } catch (err) {
    const problems = messageOf(err)
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    logger.error(
      { config: opts.config, problems },
      "config reload failed; keeping the last good config",
    );
    c.metrics.configReloaded(false);
    return;
  }
  let runner;
  try {
    runner = await startPatchRunner(next, {
      workers: opts.patchWorkers,
      deadlineMs: opts.patchTimeoutMs,
    });
  } catch (err) {
    logger.error(
      { config: opts.config, problems: [messageOf(err)] },
      "config reload failed; keeping the last good config",
    );
    c.metrics.configReloaded(false);
    return;
  }
  c.live.swap(next, runner);
  c.metrics.configReloaded(true);
  logger.info(
    { config: opts.config, patches: next.patches.length, enabled: next.enabled },
    "config reloaded",
  );
  await c.watchReferences(next);
  for (const key of c.allKeys()) c.enqueue(key);
}

async function startServers(
  c: Controller,
  undo: Undo[],
): Promise<{ probe: ProbeServer | null; metrics: ProbeServer | null }> {
  const { opts } = c;
  const routes = { healthz: () => true, readyz: () => c.notReady() };
  const same =
    opts.healthProbeBindAddress !== null && opts.healthProbeBindAddress === opts.metricsBindAddress;
  const probe = opts.healthProbeBindAddress
    ? await startProbeServer(
        opts.healthProbeBindAddress,
        same ? { ...routes, metrics: c.metrics.registry } : routes,
        "--health-probe-bind-address",
      )
    : null;
  if (probe) undo.push(() => probe.close());
  const metrics = same
    ? probe
    : opts.metricsBindAddress
      ? await startProbeServer(
          opts.metricsBindAddress,
          { metrics: c.metrics.registry },
          "--metrics-bind-address",
        )
      : null;
  if (metrics && !same) undo.push(() => metrics.close());
  return { probe, metrics };
}

async function start(
  opts: SyncOptions,
  logger: Logger,
  hooks: ControllerHooks,
  undo: Undo[],
): Promise<RunningController> {
  const loaded = await loadSyncConfig(opts);
  const virtualKc = await loadKube(opts.virtualKubeconfig, "--virtual-kubeconfig");
  const hostKc = await loadHostKube(opts.hostKubeconfig, hooks);
  const runner = await startPatchRunner(loaded, {
    workers: opts.patchWorkers,
    deadlineMs: opts.patchTimeoutMs,
  });
  const live = new LiveConfig(loaded, runner);
  undo.push(() => live.close());
  const transports = {
    virtual: new KubeTransport(virtualKc, { timeoutMs: REQUEST_TIMEOUT_MS }),
    host: new KubeTransport(hostKc, { timeoutMs: REQUEST_TIMEOUT_MS }),
  };
  undo.push(() => {
    transports.virtual.close();
    transports.host.close();
  });
  const sides: Sides = {
    virtual: { transport: transports.virtual, paths: new ResourcePaths(transports.virtual) },
    host: { transport: transports.host, paths: new ResourcePaths(transports.host) },
  };
  const c = new Controller(opts, logger, live, sides, transports, hooks);
  const servers = await startServers(c, undo);
  c.informers.start();
  undo.push(() => c.informers.stop());
  c.slices.start();
  undo.push(() => c.slices.stop());
  await c.watchReferences(loaded);
  undo.push(() => c.references.stop());
  const watcher = new ConfigWatcher(opts.config, () => reloadConfig(c), {
    intervalMs: hooks.configIntervalMs,
  });
  await watcher.start();
  undo.push(() => watcher.close());
  logger.info(
    {
      vcluster: opts.vclusterName,
      namespace: opts.vclusterNamespace,
      targetNamespace: opts.targetNamespace,
      patches: loaded.patches.length,
      enabled: loaded.enabled,
      alongsideVCluster: opts.alongsideVCluster,
      probes: servers.probe?.address,
      metrics: servers.metrics?.address,
    },
    "vgate sync starting",
  );
  await startLeaderElection(c, hooks, undo);
  let shutdown: Promise<void> | undefined;
  return {
    logger,
    metrics: c.metrics,
    probeAddress: servers.probe?.address ?? null,
    metricsAddress: servers.metrics?.address ?? null,
    lost: c.lost.then(async () => {
      await undoAll(undo);
      flushLogs(logger);
    }),
    shutdown: () =>
      (shutdown ??= (async () => {
        await watcher.close();
        await c.drain();
        await undoAll(undo);
        logger.info("stopped");
        flushLogs(logger);
      })()),
  };
}

async function undoAll(undo: Undo[]): Promise<void> {
  const steps = undo.splice(0).reverse();
  for (const step of steps) await Promise.resolve(step()).catch(() => undefined);
}

/**
 * Starts `vgate sync` as `opts` describe; used by the CLI and by tests. On a start-up error,
 * whatever was started is stopped before the error is thrown.
 */
export async function startController(
  opts: SyncOptions,
  logger: Logger = createLogger(opts.logLevel),
  hooks: ControllerHooks = {},
): Promise<RunningController> {
  const undo: Undo[] = [];
  try {
    return await start(opts, logger, hooks, undo);
  } catch (err) {
    await undoAll(undo);
    throw err;
  }
}
