// `vgate sync`: the Endpoints and EndpointSlice sync controller between a virtual cluster and its host
// (webhook/src/sync/controller/controller.ts; docs/decisions.md EPS-11..).

import { flushLogs, LOG_LEVELS } from "../server/logger.js";
import type { RunningController } from "../sync/controller/controller.js";
import type { Command } from "./command.js";
import { EXIT } from "./errors.js";
import { exitAfterFailedStart, exitAfterStop, stopOnSignals } from "./stop-signals.js";
import { parseSyncArgs, SYNC_DEFAULTS } from "./sync-options.js";
import { DEFAULT_REFERENCE_SECRET_TYPES } from "../sync/secret-types.js";
import { NAMESPACE_FLAG_HELP } from "./vcluster-flags.js";

const HELP = `Sync the Endpoints and EndpointSlices of selector-less Services from a virtual cluster to its
host, with the patches of a vcluster.yaml, as vCluster's Endpoints and EndpointSlice syncers do,
or in their place next to vCluster's own syncer (--alongside-vcluster).

Virtual Endpoints, EndpointSlices and Services, and host Endpoints and EndpointSlices, are
watched; every key goes through a rate-limited work queue with retries and exponential backoff.
Failures are recorded as Warning Events (reason SyncError) on the virtual object. The config file
is watched: a valid change is picked up at once, an invalid one is logged and the last good
config is kept.

EndpointSlices (sync.toHost.endpointSlices.enabled, true unless the config says false) are copied
as vCluster names them, through the sync.toHost.endpoints patches (on the slice's Endpoints view)
and then their own sync.toHost.endpointSlices patches. vgate sync is then the one writer of those
host slices: it labels its host Endpoints endpointslice.kubernetes.io/skip-mirror=true, so the
host's EndpointSlice mirroring controller makes none from them.

Host writes go only to namespaces the vCluster owns: --vcluster-namespace, --target-namespace, and
(with sync.toHost.namespaces) namespaces labelled vcluster.loft.sh/vcluster-name=<vcluster-name>
and vcluster.loft.sh/vcluster-namespace=<vcluster-namespace>, as vCluster labels the host
namespaces it creates. A write anywhere else is refused with a SyncError Event that names the
namespace. Referenced Secrets are copied (and imported) only when their type is allowed.

Next to vCluster's own syncer, run with --alongside-vcluster and the vcluster.yaml vCluster runs
with, in which sync.toHost.endpoints.enabled and sync.toHost.endpointSlices.enabled are false:
vCluster's syncer then writes no host Endpoints or EndpointSlices, and vgate sync writes both for
selector-less Services (patched). Without --alongside-vcluster, sync.toHost.endpoints.enabled:
false and sync.toHost.endpointSlices.enabled: false stop vgate sync too.

Usage:
  vgate sync --config FILE --virtual-kubeconfig FILE [--host-kubeconfig FILE] --vcluster-name NAME --vcluster-namespace NAMESPACE [flags]

Flags:
      --config string                         vCluster config file (vcluster.yaml, YAML or JSON); watched for changes
      --virtual-kubeconfig string             kubeconfig of the virtual cluster
      --host-kubeconfig string                kubeconfig of the host cluster (default: the pod's service account, when
                                              run in a pod of the host cluster)
      --vcluster-name string                  Name of the virtual cluster (context.vcluster.name)
      --vcluster-namespace string             Its namespace in the host cluster (context.vcluster.namespace)
      --alongside-vcluster                    vCluster's syncer runs too, from the same --config with its Endpoints
                                              and EndpointSlice sync off: sync both all the same (refused unless
                                              both are false; default false)
      --target-namespace string               Host namespace of the synced objects in single-namespace mode
                                              (default: --vcluster-namespace)
      --namespace string                      ${NAMESPACE_FLAG_HELP}
      --reference-secret-types strings        Secret types a reference copy or import may have (default
                                              "${DEFAULT_REFERENCE_SECRET_TYPES.join(",")}");
                                              service-account and bootstrap tokens are never copied
      --workers int                           Keys reconciled at once (default ${SYNC_DEFAULTS.workers})
      --patch-timeout string                  Deadline per object for the patches (default ${SYNC_DEFAULTS.patchTimeout})
      --patch-workers int                     Sandbox processes running expressions at once (default: the number of
                                              CPUs; one more waits as a warm spare)
      --leader-elect                          Run only while holding a coordination.k8s.io Lease on the host, so
                                              several replicas can run (default true; --leader-elect=false to disable)
      --leader-election-id string             Name of the Lease (default "vgate-sync-<vcluster-name>")
      --leader-election-namespace string      Host namespace of the Lease (default: --vcluster-namespace)
      --leader-elect-lease-duration duration  How long a standby waits before taking over an unrenewed Lease
                                              (default ${SYNC_DEFAULTS.leaseDuration})
      --leader-elect-renew-deadline duration  How long the leader retries renewing before it gives up (default ${SYNC_DEFAULTS.renewDeadline})
      --leader-elect-retry-period duration    How often to try to take or renew the Lease (default ${SYNC_DEFAULTS.retryPeriod})
      --health-probe-bind-address string      Address of /healthz and /readyz over HTTP; 0 disables (default "${SYNC_DEFAULTS.healthProbeBindAddress}")
      --metrics-bind-address string           Address of /metrics over HTTP; 0 disables (default "${SYNC_DEFAULTS.metricsBindAddress}")
      --shutdown-timeout duration             After SIGTERM, how long reconciles in flight may take to finish (default ${SYNC_DEFAULTS.shutdownTimeout})
      --log-level string                      One of ${LOG_LEVELS.join(", ")} (default "${SYNC_DEFAULTS.logLevel}")
  -h, --help                                  Show this help

Exit status: 0 after SIGTERM or SIGINT once stopped; 1 when start-up fails (a bad config lists
every problem) or the Lease is lost; 2 for a usage error.

Examples:
  # One replica, without leader election
  vgate sync --config vcluster.yaml --virtual-kubeconfig virtual.kubeconfig \\
    --host-kubeconfig host.kubeconfig --vcluster-name my-vcluster --vcluster-namespace vcluster-my-vcluster \\
    --leader-elect=false

  # Next to vCluster's syncer, from the vcluster.yaml it runs with
  vgate sync --config vcluster.yaml --alongside-vcluster --virtual-kubeconfig virtual.kubeconfig \
    --host-kubeconfig host.kubeconfig --vcluster-name my-vcluster --vcluster-namespace vcluster-my-vcluster
`;

/** After --shutdown-timeout, how long stopping the informers, Lease and sandbox may take. */
export const STOP_AFTER_TIMEOUT_MS = 4000;

/**
 * Waits for SIGTERM/SIGINT (graceful stop, exit 0; a second signal exits 1 at once, as
 * controller-runtime's signal handler does) or for the Lease to be lost (exit 1).
 */
function untilStopped(running: RunningController, timeoutMs: number): Promise<number> {
  const { logger } = running;
  let stopping = false;
  const stopped = stopOnSignals({
    logger,
    deadlineMs: timeoutMs + STOP_AFTER_TIMEOUT_MS,
    stop: () => {
      stopping = true;
      return running.shutdown();
    },
    ended: running.lost,
    onSecondSignal: (signal) => {
      logger.warn({ signal }, "second signal: exiting at once");
      flushLogs(logger);
      process.exit(EXIT.FAILURE);
    },
  });
  // Lost once a stop has begun: the stop's outcome decides.
  const lost = running.lost.then(() => (stopping ? stopped : EXIT.FAILURE));
  return Promise.race([stopped, lost]);
}

export const syncCommand: Command = {
  name: "sync",
  help: HELP,
  async run(args) {
    const opts = parseSyncArgs(args);
    if (opts === "help") {
      process.stdout.write(HELP);
      return EXIT.OK;
    }
    // Loaded on demand: `vgate --help` should not pay for the controller.
    const { startController } = await import("../sync/controller/controller.js");
    let running;
    try {
      running = await startController(opts);
    } catch (err) {
      exitAfterFailedStart();
      throw err;
    }
    const code = await untilStopped(running, opts.shutdownTimeoutMs);
    flushLogs(running.logger);
    exitAfterStop(code);
    return code;
  },
};
