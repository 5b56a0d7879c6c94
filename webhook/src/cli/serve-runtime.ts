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
import type { ServeOptions } from "./serve.js";

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
  const app = createApp({
    logger,
    metrics: createMetrics(),
    routes: {
      "/mutate/ownedaccesskeys": (req) => admitMutate(req, deps),
      "/validate/ownedaccesskeys": (req) => admitValidate(req, deps),
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
      flushLogs(logger);
    },
  };
}
