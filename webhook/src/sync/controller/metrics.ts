// `vgate sync` metrics (prom-client, a registry of its own). Where controller-runtime and client-go
// have a metric for the same thing, it has their name and labels (kube/controller/controller-metrics.ts),
// so dashboards and alerts written for controller-runtime controllers work unchanged: workqueue_*,
// controller_runtime_reconcile_* and leader_election_master_status. vgate's own are vgate_sync_*.

import { Counter, Registry, collectDefaultMetrics } from "prom-client";
import {
  leaderElectionMetric,
  reconcileMetrics,
  workQueueMetrics,
  type ReconcileResult,
} from "../../kube/controller/controller-metrics.js";
import type { Side, SyncAction } from "./contracts.js";

export const QUEUE_NAME = "endpoints";
export const CONTROLLER_NAME = "endpoints";
/** The EndpointSlice reconciler's controller label (vCluster's syncer name). */
export const SLICE_CONTROLLER_NAME = "endpointslice";

export type { ReconcileResult };

export interface SyncMetrics {
  registry: Registry;
  /** Reads the queue's depth when scraped. */
  watchDepth(read: () => number): void;
  added(): void;
  retried(): void;
  /** One reconcile of `controller` (CONTROLLER_NAME when absent). */
  reconciled(result: ReconcileResult, seconds: number, controller?: string): void;
  /** One write, by cluster, action and the written object's kind. */
  wrote(side: Side, type: SyncAction["type"], kind: string): void;
  leading(isLeader: boolean): void;
  configReloaded(ok: boolean): void;
}

export function createSyncMetrics(opts: {
  leaseName: string;
  processMetrics?: boolean;
}): SyncMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "vgate_" });
  const queue = workQueueMetrics(registers, { name: QUEUE_NAME, controller: CONTROLLER_NAME });
  const reconciled = reconcileMetrics(registers, [CONTROLLER_NAME, SLICE_CONTROLLER_NAME]);
  const writes = new Counter({
    name: "vgate_sync_writes_total",
    help: "Writes the controller made, by cluster (virtual|host), action (create|update|delete|ensure) and the object's kind.",
    labelNames: ["side", "type", "kind"],
    registers,
  });
  const leading = leaderElectionMetric(registers, opts.leaseName);
  const reloadErrors = new Counter({
    name: "vgate_sync_config_reload_errors_total",
    help: "Config file changes that were invalid and not applied (the last good config is kept).",
    registers,
  });
  const reloads = new Counter({
    name: "vgate_sync_config_reloads_total",
    help: "Config file changes that were valid and applied.",
    registers,
  });
  return {
    registry,
    ...queue,
    reconciled: (result, seconds, controller = CONTROLLER_NAME) =>
      reconciled(controller, result, seconds),
    wrote: (side, type, kind) => writes.labels(side, type, kind).inc(),
    leading,
    configReloaded: (ok) => (ok ? reloads.inc() : reloadErrors.inc()),
  };
}
