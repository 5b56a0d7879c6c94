// Starts `vgate sync` (docs/decisions.md EPS-11..): loads the config and both kubeconfigs, starts
// the sandbox, the Controller (controller.ts), its probe and metrics servers, the config watcher
// and leader election, and stops them again on SIGTERM or a lost Lease. Start-up either completes
// or fails as a whole: whatever was started is stopped again.

import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { VClusterConfigError } from "../../config/load-config.js";
import { loadVClusterFile, type LoadedVCluster } from "../../config/loaded-vcluster.js";
import { startPatchRunner } from "../patch-runner.js";
import type { SyncOptions } from "./options.js";
import { SyncStartError } from "./start-error.js";
import { KubeConfigError, loadKubeConfig, SERVICE_ACCOUNT_DIR } from "../../kube/kubeconfig.js";
import { KubeTransport } from "../../kube/transport.js";
import { createLogger, flushLogs, type Logger } from "../../server/logger.js";
import type { Sides } from "./apply-plan.js";
import { ConfigWatcher } from "../../kube/controller/config-watch.js";
import { LeaderElector } from "../../kube/controller/leader-election.js";
import { Controller, messageOf, type ControllerHooks } from "./controller.js";
import { LiveConfig } from "./live-config.js";
import type { SyncMetrics } from "./metrics.js";
import { startProbeServer, type ProbeServer } from "../../kube/controller/probe-server.js";
import { ResourcePaths } from "./resource-paths.js";
import { alongsideVClusterProblems } from "../alongside-vcluster.js";

/** Deadline of one request to either API server (a watch: until its answer starts). */
const REQUEST_TIMEOUT_MS = 15_000;

export type { ControllerHooks };

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
