// The running `vgate serve`: TLS, API access, admission routes. Kept apart from the flag parsing so
// `vgate --help` loads none of this.
//
// Start-up either completes or fails as a whole. The local checks come first (certificate and key,
// vcluster.yaml, kubeconfig files), then what talks to the network, and whatever was started before
// a failure is stopped again, so the process is left with nothing running and exits at once: a pod
// with a bad flag crash-loops with the reason in its log instead of running without serving.

import { admitMutate, admitValidate, type AccessKeyAdmission } from "../accesskeys/admit.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { resourceIdentity } from "../shared/ownedaccesskey.js";
import { ApiClient } from "../kube/api-client.js";
import type { ClientConfig } from "../shared/client-config.js";
import { loadKubeConfig } from "../shared/kubeconfig.js";
import type { KubeApi, NamespaceLabels } from "../kube/ports.js";
import { UnavailableApi } from "../kube/unavailable-api.js";
import { VirtualEndpointsReader } from "../kube/virtual-endpoints.js";
import { createApp, listen, type RunningServer } from "../server/app.js";
import { createLogger, flushLogs, type Logger } from "../server/logger.js";
import { createMetrics, type Metrics } from "../server/metrics.js";
import { GracefulShutdown, type DrainReport } from "../server/shutdown.js";
import {
  checkTlsPair,
  loadTlsFiles,
  selfSignedTls,
  watchTlsFiles,
  type TlsMaterial,
} from "../server/tls.js";
import { admitEndpoints, type EndpointsAdmission } from "../sync/admit-endpoints.js";
import { admitPatches, servedResources } from "../sync/admit-patches.js";
import { patchesAdmission, slicePatches } from "./serve-patches.js";
import { loadClientCa, parseCaBundle } from "../server/client-auth.js";
import { pollFiles } from "../server/poll-files.js";
import { hostNamespaceOwnership } from "../sync/host-ownership.js";
import { CliError } from "./errors.js";
import { startPatchRunner } from "../sync/patch-runner.js";
import { createAuth, loadRoles, type AuthRuntime } from "./serve-auth.js";
import {
  DEFAULT_AUTH_OPTIONS,
  DEFAULT_LIFECYCLE,
  DEFAULT_OPERATIONS,
  type EndpointsOptions,
  type ServeOptions,
} from "./serve-options.js";
import { loadVCluster } from "./vcluster-flags.js";
import type { StartedDiscovery } from "./serve-discovery.js";
import { KeyLifecycle } from "./serve-lifecycle.js";
import { KubeTransport } from "../shared/transport.js";

/** What start-up has started so far, stopped in reverse order when a later step fails. */
type Undo = () => Promise<void> | void;

async function undoAll(undo: Undo[]): Promise<void> {
  for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : "unreadable";
}

async function loadTls(opts: ServeOptions): Promise<TlsMaterial> {
  const caFile = opts.clientCerts?.caFile;
  let clientCa: string | undefined;
  if (caFile) {
    try {
      clientCa = await loadClientCa(caFile);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  const tls = await loadServingTls(opts);
  return clientCa === undefined ? tls : { ...tls, clientCa };
}

async function loadServingTls(opts: ServeOptions): Promise<TlsMaterial> {
  if (!opts.tlsCertFile) return selfSignedTls();
  let tls: TlsMaterial;
  try {
    tls = await loadTlsFiles(opts.tlsCertFile, opts.tlsKeyFile!);
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  try {
    checkTlsPair(tls, opts.tlsCertFile, opts.tlsKeyFile!);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  return tls;
}

function connectApi(
  kc: ClientConfig | null,
  opts: ServeOptions,
  auth: AuthRuntime,
  lifecycle: KeyLifecycle,
  logger: Logger,
): KubeApi {
  const identity = resourceIdentity(opts.groupDomain);
  if (!kc) {
    logger.warn("no kubeconfig found: checks that need the API server will fail closed (--dev)");
    auth.connect(null);
    return new UnavailableApi();
  }
  logger.info(
    { server: kc.getCurrentCluster()?.server, group: identity.group },
    "using API server",
  );
  const api = new ApiClient(kc, identity, {
    onAccessKeyChange: (type, name) => {
      auth.onAccessKeyChange(type, name);
      lifecycle.onChange(type, name);
    },
    watchNamespaces: true,
    onCacheError: (cache, message) =>
      logger.warn({ cache, err: message }, "watch cache unsynced; relisting"),
  });
  auth.connect(api);
  lifecycle.start(api.accessKeyView());
  return api;
}

interface StartedEndpoints {
  admit: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  /** /mutate/endpoints/virtual: the reverseExpressions, for the virtual cluster's webhook (EPS-29). */
  admitVirtual: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  /** /mutate/patches and /mutate/patches/virtual: every sync.toHost kind the config patches (KND-10). */
  admitPatches: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  admitPatchesVirtual: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  /** The namespace labels the host side checks ownership with, once the API client exists. */
  useNamespaces(namespaces: NamespaceLabels): void;
  close(): Promise<void>;
}

/** Loads the vCluster config, starts the sandbox and (optionally) the virtual cluster reader. */
async function startEndpoints(
  opts: EndpointsOptions,
  logger: Logger,
  metrics: Metrics,
  undo: Undo[],
): Promise<StartedEndpoints> {
  const loaded = await loadVCluster(
    {
      config: opts.config,
      "vcluster-name": opts.vclusterName,
      "vcluster-namespace": opts.vclusterNamespace,
      namespace: opts.selfNamespace,
    },
    "serve",
  );
  // Read before the sandbox starts, so a bad file costs no worker.
  const virtualKc = opts.virtualKubeconfig
    ? await loadKubeConfig({ kubeconfig: opts.virtualKubeconfig, env: {} })
    : null;
  const runner = await startPatchRunner(loaded, {
    workers: opts.workers,
    deadlineMs: opts.deadlineMs,
  });
  undo.push(() => runner.close());
  const reader = virtualKc ? new VirtualEndpointsReader(virtualKc) : undefined;
  if (reader) undo.push(() => reader.close());
  // Host namespaces other than --vcluster-namespace are the vCluster's only with multi-namespace
  // mode and its labels, read from the namespace cache (never synced without an API server).
  let namespaces: NamespaceLabels | undefined;
  const owner = {
    vclusterName: opts.vclusterName,
    vclusterNamespace: opts.vclusterNamespace,
    ownNamespaces: [opts.vclusterNamespace],
    selfNamespace: opts.selfNamespace,
  };
  const deps: EndpointsAdmission = {
    side: opts.side,
    enabled: loaded.enabled,
    run: runner.run,
    onPatchError: opts.onPatchError,
    virtualEndpoints: reader ? (ns, name) => reader.get(ns, name) : undefined,
    ...slicePatches(loaded, runner, metrics),
    owner: {
      vclusterName: opts.vclusterName,
      ownership: (namespace) =>
        hostNamespaceOwnership(
          namespace,
          owner,
          loaded.vcluster.namespaceMappings === undefined
            ? undefined
            : (namespaces ?? { synced: () => false, labels: () => undefined }),
        ),
    },
  };
  logger.info(
    {
      side: opts.side,
      patches: loaded.patches.length,
      enabled: loaded.enabled,
      vcluster: opts.vclusterName,
    },
    "serving /mutate/endpoints and /mutate/endpoints/virtual",
  );
  const virtualDeps: EndpointsAdmission = { ...deps, side: "virtual" };
  const patchesDeps = patchesAdmission(loaded, runner, metrics, {
    side: opts.side,
    onPatchError: opts.onPatchError,
    owner: { ...deps.owner, vclusterNamespace: opts.vclusterNamespace },
  });
  logger.info(
    {
      side: opts.side,
      kinds: servedResources(patchesDeps.kinds),
      virtualKinds: servedResources(patchesDeps.kinds, "virtual"),
    },
    "serving /mutate/patches and /mutate/patches/virtual",
  );
  return {
    admit: (req) => admitEndpoints(req, deps),
    admitVirtual: (req) => admitEndpoints(req, virtualDeps),
    admitPatches: (req) =>
      admitPatches(req, { ...patchesDeps, endpoints: (r) => admitEndpoints(r, deps) }),
    admitPatchesVirtual: (req) =>
      admitPatches(req, {
        ...patchesDeps,
        side: "virtual",
        endpoints: (r) => admitEndpoints(r, virtualDeps),
      }),
    useNamespaces: (view) => (namespaces = view),
    close: async () => {
      reader?.close();
      await runner.close();
    },
  };
}

/**
 * Reloads the serving certificate and the client CA when their files change; each keeps the other's
 * current value. Returns the function that stops both watches.
 */
function watchTls(
  opts: ServeOptions,
  initial: TlsMaterial,
  server: RunningServer,
  logger: Logger,
  onClientCa: (pem: string) => void,
): () => void {
  let current = initial;
  const serve = (next: TlsMaterial): void => {
    current = next;
    server.setTls(next);
  };
  const stops: (() => void)[] = [];
  if (opts.tlsCertFile) {
    stops.push(
      watchTlsFiles(
        opts.tlsCertFile,
        opts.tlsKeyFile!,
        (next) => {
          serve({
            ...next,
            ...(current.clientCa === undefined ? {} : { clientCa: current.clientCa }),
          });
          logger.info({ source: next.source }, "reloaded TLS certificate");
        },
        (err) =>
          logger.warn(
            { err: err.message },
            "cannot reload TLS certificate; still serving the previous one",
          ),
        opts.tlsReloadIntervalMs,
      ),
    );
  }
  const caFile = opts.clientCerts?.caFile;
  if (caFile && initial.clientCa !== undefined) {
    stops.push(
      pollFiles(
        [caFile],
        () => loadClientCa(caFile),
        (clientCa) => {
          serve({ ...current, clientCa });
          onClientCa(clientCa);
          logger.info({ source: caFile }, "reloaded client CA");
        },
        (err) =>
          logger.warn(
            { err: err.message },
            "cannot reload --client-ca-file; still using the previous one",
          ),
        opts.tlsReloadIntervalMs ?? 10_000,
      ),
    );
  }
  return () => stops.forEach((stop) => stop());
}

/**
 * Ready once the API server answers discovery and the key and namespace caches have synced (and,
 * with --discover-vclusters, the vClusters' configs are loaded).
 */
async function readiness(
  api: KubeApi,
  auth: AuthRuntime,
  discovery: StartedDiscovery | undefined,
): Promise<true | string> {
  if (!(await api.ready())) return "the API server has not answered discovery";
  if (!auth.synced()) return "the access keys are not loaded yet";
  if (!auth.namespacesSynced()) return "the namespace labels are not loaded yet";
  if (discovery && !discovery.synced()) return "the vClusters' configs are not loaded yet";
  return true;
}

export interface StartedServe {
  server: RunningServer;
  logger: Logger;
  /** Stops at once: open connections are closed, then watches and the activity recorder. */
  stop(): Promise<void>;
  /**
   * Stops gracefully (SIGTERM): readiness false, the shutdown delay, the drain of requests in
   * flight within the shutdown timeout, then what stop() stops. Resolves with the drain's report.
   */
  shutdown(): Promise<DrainReport>;
  /** During shutdown(): cut the remaining connections now (a second signal). */
  hurry(): void;
}

/** Listens, with a message that says what to do when the address cannot be had. */
async function listenOrExplain(
  app: Parameters<typeof listen>[0],
  tls: TlsMaterial,
  opts: ServeOptions,
): Promise<RunningServer> {
  try {
    return await listen(app, tls, opts.port, opts.bindAddress);
  } catch (err) {
    const code = codeOf(err);
    const where = `${opts.bindAddress}:${opts.port}`;
    if (code === "EADDRINUSE")
      throw new CliError(`cannot listen on ${where}: the port is in use; choose another --port`);
    if (code === "EACCES")
      throw new CliError(`cannot listen on ${where}: permission denied (ports below 1024 need it)`);
    if (code === "EADDRNOTAVAIL")
      throw new CliError(`cannot listen on ${where}: no such local address (--bind-address)`);
    throw new CliError(`cannot listen on ${where}: ${err instanceof Error ? err.message : code}`);
  }
}

async function start(opts: ServeOptions, logger: Logger, undo: Undo[]): Promise<StartedServe> {
  const identity = resourceIdentity(opts.groupDomain);
  const tls = await loadTls(opts);
  const kc = await loadKubeConfig({
    kubeconfig: opts.kubeconfig,
    env: process.env,
    allowMissing: opts.dev,
  });
  const authOpts = opts.auth ?? DEFAULT_AUTH_OPTIONS;
  const roles = await loadRoles(authOpts, opts.groupDomain);
  const metrics = createMetrics();
  let discovery: StartedDiscovery | undefined;
  if (opts.discovery) {
    const { startDiscovery } = await import("./serve-discovery.js");
    const started = await startDiscovery(opts.discovery, kc, logger, metrics);
    undo.push(() => started.close());
    discovery = started;
  }
  const endpoints = opts.endpoints
    ? await startEndpoints(opts.endpoints, logger, metrics, undo)
    : undefined;
  const auth = createAuth(
    authOpts,
    identity,
    roles,
    logger,
    {
      writeIntervalMs: opts.activityWriteIntervalMs,
      flushIntervalMs: opts.activityFlushIntervalMs,
    },
    metrics,
  );
  // Events, the Lease and deletions go through a connection pool of their own.
  const lifecycleTransport = kc ? new KubeTransport(kc, { timeoutMs: 10_000 }) : null;
  undo.push(() => lifecycleTransport?.close());
  const lifecycle = new KeyLifecycle({
    opts: opts.lifecycle ?? DEFAULT_LIFECYCLE,
    identity,
    transport: lifecycleTransport,
    logger,
    metrics,
    now: opts.now,
    intervalMs: opts.lifecycleIntervalMs,
  });
  undo.push(() => lifecycle.stop());
  const api = connectApi(kc, opts, auth, lifecycle, logger);
  if (api instanceof ApiClient) {
    endpoints?.useNamespaces(api.namespaceView());
    discovery?.useNamespaces(api.namespaceView());
  }
  undo.push(() => api.close?.());
  undo.push(() => auth.close());
  const retentionMs = opts.lifecycle?.retentionMs;
  const deps: AccessKeyAdmission = {
    identity,
    adminGroups: opts.adminGroups,
    expiredCleanup:
      retentionMs === undefined
        ? undefined
        : { username: () => lifecycle.username(), retentionMs, now: opts.now ?? Date.now },
    api,
    keyStorage: authOpts.keyStorage,
    maxRotationGraceMs: authOpts.maxRotationGraceMs,
    // Without an API server (--dev) nothing is stored, so there is nothing a key could duplicate.
    keyIndex: kc
      ? {
          synced: auth.synced,
          // Asked only for a new key: any name it returns refuses the write, and is counted.
          namesWithSameKey: (stored) => {
            const names = auth.namesWithSameKey(stored);
            if (names.length > 0) metrics.duplicateKeys.inc();
            return names;
          },
        }
      : undefined,
  };
  const ops = opts.operations ?? DEFAULT_OPERATIONS;
  const graceful = new GracefulShutdown();
  // The client CAs trusted now; watchTls replaces them when --client-ca-file changes.
  const trusted = { cas: parseCaBundle(tls.clientCa ?? "") };
  const app = createApp({
    logger,
    metrics,
    maxInFlight: ops.maxInFlight,
    admissionTimeoutMs: ops.admissionTimeoutMs,
    draining: () => graceful.draining,
    routes: {
      "/mutate/ownedaccesskeys": (req) => admitMutate(req, deps),
      "/validate/ownedaccesskeys": (req) => admitValidate(req, deps),
      ...(endpoints
        ? {
            "/mutate/endpoints": endpoints.admit,
            "/mutate/endpoints/virtual": endpoints.admitVirtual,
            "/mutate/patches": endpoints.admitPatches,
            "/mutate/patches/virtual": endpoints.admitPatchesVirtual,
          }
        : {}),
      ...(discovery
        ? { "/mutate/endpoints": discovery.admit, "/mutate/patches": discovery.admitPatches }
        : {}),
    },
    reviews: auth.reviews,
    ready: opts.dev ? undefined : () => readiness(api, auth, discovery),
    clientCerts: {
      policy: {
        configured: tls.clientCa !== undefined,
        allowedNames: opts.clientCerts?.allowedNames ?? [],
        trustedCas: () => trusted.cas,
      },
      admission: opts.clientCerts?.admission ?? false,
    },
  });
  if (tls.clientCa === undefined) {
    logger.warn(
      "no --client-ca-file: /authenticate and /authorize answer 401 to every caller (access keys cannot log in)",
    );
  }
  const server = await listenOrExplain(app, tls, opts);
  graceful.attach(server.server);
  const unwatch = watchTls(opts, tls, server, logger, (pem) => (trusted.cas = parseCaBundle(pem)));
  logger.info({ url: server.url, tls: tls.source, group: identity.group }, "vgate serving");
  const teardown = async () => {
    await lifecycle.stop();
    lifecycleTransport?.close();
    // The last uses of keys are written before the API client goes.
    await auth.close();
    logger.info("access key activity flushed");
    api.close?.();
    await endpoints?.close();
    await discovery?.close();
    logger.info("watches stopped");
    flushLogs(logger);
  };
  return {
    server,
    logger,
    stop: async () => {
      unwatch();
      await server.close();
      await teardown();
    },
    shutdown: async () => {
      const report = await graceful.drain(
        { delayMs: ops.shutdownDelayMs, timeoutMs: ops.shutdownTimeoutMs },
        logger,
      );
      unwatch();
      await teardown();
      return report;
    },
    hurry: () => graceful.hurry(),
  };
}

/**
 * Starts the server described by `opts`; used by the CLI and by tests. On any start-up error,
 * everything started so far is stopped before the error is thrown.
 */
export async function startServe(
  opts: ServeOptions,
  logger = createLogger(opts.logLevel),
): Promise<StartedServe> {
  const undo: Undo[] = [];
  try {
    return await start(opts, logger, undo);
  } catch (err) {
    await undoAll(undo);
    throw err;
  }
}
