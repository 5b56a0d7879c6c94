// The running `vgate serve`: TLS, API access, admission routes. Kept apart from the flag parsing so
// `vgate --help` loads none of this.

import { resourceIdentity } from "../api/ownedaccesskey.js";
import { admitMutate, admitValidate, type AccessKeyAdmission } from "../accesskeys/admit.js";
import { ApiClient } from "../kube/api-client.js";
import { loadKubeConfig } from "../kube/kubeconfig.js";
import type { KubeApi } from "../kube/ports.js";
import { UnavailableApi } from "../kube/unavailable-api.js";
import { createApp, listen, type RunningServer } from "../server/app.js";
import { createLogger, flushLogs, type Logger } from "../server/logger.js";
import { createMetrics } from "../server/metrics.js";
import { loadTlsFiles, selfSignedTls, watchTlsFiles, type TlsMaterial } from "../server/tls.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { VirtualEndpointsReader } from "../kube/virtual-endpoints.js";
import { SandboxPool } from "../patches/sandbox/pool.js";
import { admitEndpoints, type EndpointsAdmission } from "../sync/admit-endpoints.js";
import type { EndpointsOptions, ServeOptions } from "./serve.js";
import { loadVCluster } from "./vcluster-flags.js";

async function connectApi(
  opts: ServeOptions,
  identityGroup: string,
  logger: Logger,
): Promise<KubeApi> {
  const kc = await loadKubeConfig({
    kubeconfig: opts.kubeconfig,
    env: process.env,
    allowMissing: opts.dev,
  });
  if (!kc) {
    logger.warn("no kubeconfig found: checks that need the API server will fail closed (--dev)");
    return new UnavailableApi();
  }
  logger.info({ server: kc.getCurrentCluster()?.server, group: identityGroup }, "using API server");
  return new ApiClient(kc, resourceIdentity(opts.groupDomain));
}

interface StartedEndpoints {
  admit: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  close(): Promise<void>;
}

/** Loads the vCluster config, starts the sandbox and (optionally) the virtual cluster reader. */
async function startEndpoints(opts: EndpointsOptions, logger: Logger): Promise<StartedEndpoints> {
  const loaded = await loadVCluster(
    {
      config: opts.config,
      "vcluster-name": opts.vclusterName,
      "vcluster-namespace": opts.vclusterNamespace,
    },
    "serve",
  );
  const pool = new SandboxPool({ size: opts.workers, deadlineMs: opts.deadlineMs });
  await pool.loadConfig("endpoints", { patches: loaded.patches, vcluster: loaded.vcluster });
  let reader: VirtualEndpointsReader | undefined;
  if (opts.virtualKubeconfig) {
    const kc = await loadKubeConfig({ kubeconfig: opts.virtualKubeconfig, env: {} });
    reader = new VirtualEndpointsReader(kc!);
  }
  const deps: EndpointsAdmission = {
    side: opts.side,
    enabled: loaded.enabled,
    configKey: "endpoints",
    runner: pool,
    onPatchError: opts.onPatchError,
    virtualEndpoints: reader ? (ns, name) => reader.get(ns, name) : undefined,
  };
  logger.info(
    {
      side: opts.side,
      patches: loaded.patches.length,
      enabled: loaded.enabled,
      vcluster: opts.vclusterName,
    },
    "serving /mutate/endpoints",
  );
  return {
    admit: (req) => admitEndpoints(req, deps),
    close: async () => {
      reader?.close();
      await pool.close();
    },
  };
}

export interface StartedServe {
  server: RunningServer;
  logger: Logger;
  stop(): Promise<void>;
}

/** Starts the server described by `opts`; used by the CLI and by tests. */
export async function startServe(
  opts: ServeOptions,
  logger = createLogger(opts.logLevel),
): Promise<StartedServe> {
  const identity = resourceIdentity(opts.groupDomain);
  const tls: TlsMaterial = opts.tlsCertFile
    ? await loadTlsFiles(opts.tlsCertFile, opts.tlsKeyFile!)
    : await selfSignedTls();
  const api = await connectApi(opts, identity.group, logger);
  const deps: AccessKeyAdmission = { identity, adminGroups: opts.adminGroups, api };
  const endpoints = opts.endpoints ? await startEndpoints(opts.endpoints, logger) : undefined;
  const app = createApp({
    logger,
    metrics: createMetrics(),
    routes: {
      "/mutate/ownedaccesskeys": (req) => admitMutate(req, deps),
      "/validate/ownedaccesskeys": (req) => admitValidate(req, deps),
      ...(endpoints ? { "/mutate/endpoints": endpoints.admit } : {}),
    },
    ready: opts.dev ? undefined : () => api.ready(),
  });
  const server = await listen(app, tls, opts.port, opts.bindAddress);
  const unwatch = opts.tlsCertFile
    ? watchTlsFiles(
        opts.tlsCertFile,
        opts.tlsKeyFile!,
        (next) => {
          server.setTls(next);
          logger.info({ source: next.source }, "reloaded TLS certificate");
        },
        (err) => logger.error({ err: err.message }, "cannot reload TLS certificate"),
        opts.tlsReloadIntervalMs,
      )
    : () => undefined;
  logger.info({ url: server.url, tls: tls.source, group: identity.group }, "vgate serving");
  return {
    server,
    logger,
    stop: async () => {
      unwatch();
      await server.close();
      api.close?.();
      await endpoints?.close();
      flushLogs(logger);
    },
  };
}
