// What `vgate sync` runs with: its flags parsed and checked once at the edge (cli/sync-options.ts),
// so the controller trusts these values.

import type { LevelWithSilent } from "pino";

export interface LeaderElectionOptions {
  enabled: boolean;
  /** The Lease's name (--leader-election-id). */
  id: string;
  /** The Lease's namespace on the host (--leader-election-namespace). */
  namespace: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface SyncOptions {
  config: string;
  virtualKubeconfig: string;
  /** undefined: the pod's service account (in-cluster), as controller-runtime's managers run. */
  hostKubeconfig: string | undefined;
  vclusterName: string;
  vclusterNamespace: string;
  /**
   * vCluster's own syncer runs next to vgate sync from the same vcluster.yaml, its Endpoints and
   * EndpointSlice sync turned off there; vgate sync syncs Endpoints regardless of
   * sync.toHost.endpoints.enabled (docs/decisions.md EPS-25).
   */
  alongsideVCluster: boolean;
  /** Where host copies live in single-namespace mode (default: --vcluster-namespace). */
  targetNamespace: string;
  /** The namespace vgate runs in (--namespace, default $POD_NAMESPACE); undefined when unknown. */
  selfNamespace: string | undefined;
  /** The Secret types a reference copy or import may have (--reference-secret-types). */
  referenceSecretTypes: string[];
  /** Keys reconciled at once. */
  workers: number;
  /** Deadline per object for the patches (the sandbox's, as `vgate serve --patch-timeout`). */
  patchTimeoutMs: number;
  /** Sandbox processes; undefined: the number of CPUs. */
  patchWorkers?: number;
  leaderElection: LeaderElectionOptions;
  /** host:port for /healthz and /readyz; null: disabled ("0"). */
  healthProbeBindAddress: string | null;
  /** host:port for /metrics; null: disabled ("0"). */
  metricsBindAddress: string | null;
  /** From SIGTERM to giving up on reconciles still running. */
  shutdownTimeoutMs: number;
  logLevel: LevelWithSilent;
}
