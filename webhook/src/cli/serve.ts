// `vgate serve`: the HTTPS admission webhook server.

import { DEFAULT_GROUP_DOMAIN } from "../api/ownedaccesskey.js";
import { LOG_LEVELS } from "../server/logger.js";
import type { Command } from "./command.js";
import { EXIT } from "./errors.js";
import {
  DEFAULT_PROJECT_LABEL,
  DEFAULT_VIRTUAL_CLUSTER_LABEL,
  parseServeArgs,
} from "./serve-options.js";

const HELP = `Serve the vgate admission, token and authorization webhooks over HTTPS.

Routes:
  POST /mutate/ownedaccesskeys     mutating webhook: names, generateName, CREATE defaults
  POST /validate/ownedaccesskeys   validating webhook: metadata rules, spec checks, ownership
  POST /authenticate               token webhook: TokenReview (v1, v1beta1) for access keys
  POST /authorize                  authorization webhook: SubjectAccessReview (v1, v1beta1);
                                   denies what a key's scope does not allow, else no opinion
  GET  /healthz                    liveness
  GET  /readyz                     ready when TLS is loaded and the API server answered discovery
  GET  /metrics                    Prometheus metrics
  POST /mutate/endpoints           with --config: applies sync.toHost.endpoints patches to Endpoints

Usage:
  vgate serve [flags]

Flags:
      --port int                      HTTPS port (default 8443)
      --bind-address string           Address to listen on (default "0.0.0.0")
      --tls-cert-file string          PEM certificate to serve; reloaded when it changes
      --tls-private-key-file string   PEM private key matching --tls-cert-file
      --kubeconfig string             kubeconfig for the API server (default: $KUBECONFIG, then in-cluster)
      --group-domain string           OwnedAccessKeys are management.<group-domain>/v1 (default "${DEFAULT_GROUP_DOMAIN}")
      --admin-groups strings          Comma-separated groups whose members may manage every key (default "system:masters")
      --log-level string              One of ${LOG_LEVELS.join(", ")} (default "info")
      --dev                           Serve a self-signed certificate made at start; run without an API server
                                      (checks that need one then fail closed with a clear message)

Access keys as credentials (POST /authenticate, POST /authorize):
      --key-storage string            plain: spec.key is the token; hashed: store only sha256:<hex> of
                                      client-supplied keys (default "plain"; use hashed with more than one user)
      --audiences strings             Audiences keys are valid for (default: any the API server accepts)
      --cluster-name string           The name "clusters" scope entries match, besides "*"
      --roles-file string             YAML file of named rule sets for "roles" scope entries
                                      (loft-cli is built in)
      --project-label string          Namespace label naming a namespace's project (default "${DEFAULT_PROJECT_LABEL}")
      --virtual-cluster-label string  Namespace label naming the virtual cluster a namespace hosts
                                      (default "${DEFAULT_VIRTUAL_CLUSTER_LABEL}")

Endpoint-sync patches (POST /mutate/endpoints, enabled by --config):
      --config string                 vCluster config file whose sync.toHost.endpoints patches to apply
      --vcluster-name string          Name of the virtual cluster (required with --config)
      --vcluster-namespace string     Its namespace in the host cluster (required with --config)
      --side string                   host: apply expressions to synced host Endpoints (default);
                                      virtual: apply reverseExpressions to virtual Endpoints updates
      --virtual-kubeconfig string     kubeconfig of the virtual cluster, to read context.virtualObject
                                      (default: rebuilt from the host object's bookkeeping annotations)
      --on-patch-error string         deny (default) or allow: admit the object unchanged, with a warning
      --patch-timeout string          Deadline per object for the patches (default 100ms)
      --patch-workers int             Sandbox processes running expressions at once (default: the number of
                                      CPUs; one more waits as a warm spare)
  -h, --help                          Show this help

Examples:
  # Try it locally
  vgate serve --dev

  # In a cluster, with certificates mounted from a Secret
  vgate serve --tls-cert-file /etc/vgate/tls.crt --tls-private-key-file /etc/vgate/tls.key
`;

/** How long a failed start may take to wind down before the process is ended regardless. */
const START_FAILURE_EXIT_MS = 2000;

function devBanner(url: string): string {
  return [
    "",
    `vgate is serving on ${url} (self-signed certificate, --dev)`,
    "Send it a sample AdmissionReview:",
    `  curl -sk -H 'Content-Type: application/json' --data @webhook/examples/admission-review.json ${url}/validate/ownedaccesskeys`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n");
}

export const serveCommand: Command = {
  name: "serve",
  summary: "Serve the admission webhooks over HTTPS",
  help: HELP,
  async run(args) {
    const opts = parseServeArgs(args);
    if (opts === "help") {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    // Loaded on demand: `vgate --help` should not pay for client-node and express.
    const { startServe } = await import("./serve-runtime.js");
    let started;
    try {
      started = await startServe(opts);
    } catch (err) {
      // startServe stops whatever it started, so the process exits as soon as the error is
      // printed. Should anything still hold the event loop, exit anyway: a server that failed to
      // start must never linger (in a cluster: a pod that runs but never serves).
      setTimeout(() => process.exit(EXIT.FAILURE), START_FAILURE_EXIT_MS).unref();
      throw err;
    }
    if (opts.dev) process.stderr.write(devBanner(started.server.url));
    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        started.logger.info({ signal }, "shutting down");
        void started.stop().then(resolve);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    return EXIT.OK;
  },
};
