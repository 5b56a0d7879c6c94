// `vgate serve`: the HTTPS admission webhook server.

import { DEFAULT_GROUP_DOMAIN } from "../shared/ownedaccesskey.js";
import { LOG_LEVELS } from "../server/logger.js";
import type { StartedServe } from "./serve-runtime.js";
import type { Command } from "./command.js";
import { EXIT } from "./errors.js";
import { exitAfterFailedStart, exitAfterStop, stopOnSignals } from "./stop-signals.js";
import {
  DEFAULT_OPERATIONS,
  DEFAULT_PROJECT_LABEL,
  DEFAULT_VIRTUAL_CLUSTER_LABEL,
  LIFECYCLE_DEFAULTS,
  parseServeArgs,
} from "./serve-options.js";
import { SYNC_DEFAULTS } from "./sync-options.js";

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
  POST /mutate/endpoints           with --config or --discover-vclusters: applies sync.toHost.endpoints
                                   patches to Endpoints and the EndpointSlices vCluster syncs (--side)
  POST /mutate/endpoints/virtual   with --config: the virtual cluster's webhook (reverseExpressions)
  POST /mutate/patches             with --config: applies the sync.toHost patches of every kind the
                                   config patches, by the request's resource (--side); with
                                   --discover-vclusters: every namespaced sync.toHost kind, each
                                   object with its own vCluster's patches for its kind
  POST /mutate/patches/virtual     with --config: the virtual cluster's webhook for every kind

Usage:
  vgate serve [flags]

Flags:
      --port int                      HTTPS port (default 8443)
      --bind-address string           Address to listen on (default "0.0.0.0")
      --tls-cert-file string          PEM certificate to serve; reloaded when it changes
      --tls-private-key-file string   PEM private key matching --tls-cert-file
      --tls-reload-interval duration  How often the two files are checked for a new pair (default 10s)
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
      --max-rotation-grace duration   The longest grace window a rotation may ask for (kubectl accesskey
                                      rotate --grace); a longer one is refused; 0s: none (default 24h)
      --activity-write-interval duration
                                      Write a key's status.lastActivity at most this often, counting
                                      every replica's writes (default 1m)

Who may call (client certificates; reloaded when the file changes):
      --client-ca-file string         PEM CA(s) that sign kube-apiserver's client certificate. /authenticate
                                      and /authorize answer 401 to any caller without a certificate it
                                      signed, and to everyone when this flag is not given
      --client-allowed-names strings  Comma-separated common names accepted (default: any the CA signed),
                                      as kube-apiserver's --requestheader-allowed-names
      --require-admission-client-cert The admission routes need the certificate too (configure the
                                      client certificate in kube-apiserver's admission configuration)

Endpoint-sync patches (POST /mutate/endpoints, enabled by --config):
      --config string                 vCluster config file whose sync.toHost.endpoints patches to apply
      --vcluster-name string          Name of the virtual cluster (required with --config)
      --vcluster-namespace string     Its namespace in the host cluster (required with --config)
      --side string                   host: apply expressions to synced host Endpoints (default);
                                      virtual: apply reverseExpressions to virtual Endpoints updates
      --virtual-kubeconfig string     kubeconfig of the virtual cluster, to read context.virtualObject
                                      (default: rebuilt from the host object's bookkeeping annotations)
      --on-patch-error string         deny (default) or allow: admit the object unchanged, with a warning
      --namespace string              The namespace vgate runs in; no sync.toHost.namespaces mapping may
                                      target it (default: $POD_NAMESPACE)
      --patch-timeout string          Deadline per object for the patches (default 100ms)
      --patch-workers int             Sandbox processes running expressions at once (default: the number of
                                      CPUs; one more waits as a warm spare)

Every vCluster on the host (POST /mutate/patches and /mutate/endpoints, host side):
      --discover-vclusters            Read each vCluster's vcluster.yaml from the Secret vc-config-<name>
                                      (key config.yaml, label app=vcluster) that vCluster's chart writes in
                                      its namespace, follow changes, and patch each host object, of any
                                      namespaced sync.toHost kind, with the patches for its kind of the
                                      vCluster its vcluster.loft.sh/managed-by label and namespace name,
                                      never another's; a kind that config does not patch passes
                                      untouched. A bad config keeps the last good one, with a Warning
                                      Event on the Secret. Not with --config.
                                      RBAC: get, list, watch on secrets in all namespaces (Kubernetes
                                      RBAC cannot limit list/watch to a label; vgate keeps only
                                      config.yaml of Secrets labelled app=vcluster), and create, patch
                                      on events (manifests/overlays/discover-vclusters)

A key's end of life (only the leader of the replicas writes; docs/operations.md#expiring-keys):
      --expiry-warnings               Record a Warning Event (reason AccessKeyExpiring) on a key when it
                                      crosses a threshold before it expires, once per key and threshold
                                      (Events of cluster-scoped keys are in the namespace "default").
                                      RBAC: create on events in "default", and the Lease below
      --expiry-warning-thresholds strings
                                      How long before expiry to warn, e.g. 7d,1d or 36h; the largest is
                                      also how far ahead vgate_accesskey_expiry_seconds looks
                                      (default "${LIFECYCLE_DEFAULTS.thresholds}")
      --expiry-metric-max-series int  The most keys vgate_accesskey_expiry_seconds shows, soonest first
                                      (default ${LIFECYCLE_DEFAULTS.metricMaxSeries}); the others are counted in
                                      vgate_accesskey_expiry_series_dropped
      --expired-key-retention duration
                                      Delete keys expired longer than this ago, e.g. 30d (default: never).
                                      A key changed since it was read (renewed) is not deleted.
                                      At least --activity-write-interval. RBAC: delete on ownedaccesskeys
      --leader-elect                  With --expiry-warnings or --expired-key-retention, write only while
                                      holding a coordination.k8s.io Lease, so several replicas can run
                                      (default true; --leader-elect=false for a single replica)
      --leader-election-id string     Name of the Lease (default "${LIFECYCLE_DEFAULTS.leaseName}")
      --leader-election-namespace string
                                      Namespace of the Lease (default: --namespace, then $POD_NAMESPACE)
      --leader-elect-lease-duration duration
                                      How long a standby waits before taking over an unrenewed Lease
                                      (default ${SYNC_DEFAULTS.leaseDuration})
      --leader-elect-renew-deadline duration
                                      How long the leader retries renewing before it gives up (default ${SYNC_DEFAULTS.renewDeadline})
      --leader-elect-retry-period duration
                                      How often to try to take or renew the Lease (default ${SYNC_DEFAULTS.retryPeriod})

Operations:
      --shutdown-delay duration       After SIGTERM, /readyz fails at once but connections are still accepted
                                      this long, while endpoints and kube-proxy catch up (default 5s;
                                      0 with --dev)
      --shutdown-timeout duration     From SIGTERM to cutting connections whose requests are still not
                                      answered; keep it below terminationGracePeriodSeconds (default 25s)
      --max-in-flight int             Review requests handled at once; more get 429 with Retry-After: 1
                                      (default 400)
      --admission-timeout duration    An admission request not decided this soon is denied with 504
                                      Timeout; keep it below the webhooks' timeoutSeconds (default 9s)
  -h, --help                          Show this help

Examples:
  # Try it locally
  vgate serve --dev

  # In a cluster, with certificates mounted from a Secret
  vgate serve --tls-cert-file /etc/vgate/tls.crt --tls-private-key-file /etc/vgate/tls.key

  # Warn 7 days and 1 day before keys expire, and delete keys 30 days after they expired
  vgate serve --tls-cert-file /etc/vgate/tls.crt --tls-private-key-file /etc/vgate/tls.key \
    --namespace vgate-system --expiry-warnings --expiry-warning-thresholds 7d,1d \
    --expired-key-retention 30d
`;

/**
 * After the shutdown timeout, how long the last activity flush may take. With the defaults, 25 s +
 * 3 s stays below the 30 s Kubernetes waits between SIGTERM and SIGKILL.
 */
const FLUSH_AFTER_TIMEOUT_MS = 3000;

/**
 * Waits for SIGTERM or SIGINT, then shuts down gracefully; a second signal cuts the drain short.
 * Exit status 0 even when the timeout cut connections: the stop was asked for and done, and the cut
 * requests are in the log (a non-zero status reads as a crash in the pod's lastState). Only a stop
 * that fails or cannot finish (the flush hangs) ends the process with status 1.
 */
function untilStopped(started: StartedServe, timeoutMs: number): Promise<number> {
  const { logger } = started;
  return stopOnSignals({
    logger,
    deadlineMs: timeoutMs + FLUSH_AFTER_TIMEOUT_MS,
    stop: async () => {
      const report = await started.shutdown();
      logger.info({ cut: report.cut, ms: report.ms }, "stopped");
    },
    onSecondSignal: (signal) => {
      logger.warn({ signal }, "second signal: cutting the remaining connections");
      started.hurry();
    },
  });
}

function devBanner(url: string, certFile: string | undefined): string {
  return [
    "",
    `vgate is serving on ${url} (${certFile ? `certificate ${certFile}` : "self-signed certificate"}, --dev)`,
    "Send it a sample AdmissionReview:",
    `  curl -sk -H 'Content-Type: application/json' --data @webhook/examples/admission-review.json ${url}/validate/ownedaccesskeys`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n");
}

export const serveCommand: Command = {
  name: "serve",
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
      exitAfterFailedStart();
      throw err;
    }
    if (opts.dev) process.stderr.write(devBanner(started.server.url, opts.tlsCertFile));
    const timeoutMs = (opts.operations ?? DEFAULT_OPERATIONS).shutdownTimeoutMs;
    const code = await untilStopped(started, timeoutMs);
    // Stopped: nothing that still holds the event loop (a socket in its close) may keep the pod.
    exitAfterStop(code);
    return code;
  },
};
