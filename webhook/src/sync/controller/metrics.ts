// `vgate sync` metrics (prom-client, a registry of its own). Where controller-runtime and client-go
// have a metric for the same thing, it has their name and labels, so dashboards and alerts written
// for controller-runtime controllers work unchanged: workqueue_* (client-go's workqueue metrics
// provider as controller-runtime registers it), controller_runtime_reconcile_* and
// leader_election_master_status. vgate's own are vgate_sync_*.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Side, SyncAction } from "./contracts.js";

export const QUEUE_NAME = "endpoints";
export const CONTROLLER_NAME = "endpoints";

export type ReconcileResult = "success" | "error" | "requeue";

export interface SyncMetrics {
  registry: Registry;
  /** Reads the queue's depth when scraped. */
  watchDepth(read: () => number): void;
  added(): void;
  retried(): void;
  reconciled(result: ReconcileResult, seconds: number): void;
  wrote(side: Side, type: SyncAction["type"]): void;
  leading(isLeader: boolean): void;
  configReloaded(ok: boolean): void;
}

// controller-runtime's reconcile_time_seconds buckets (metrics.go): 5 ms to 60 s.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

export function createSyncMetrics(opts: {
  leaseName: string;
  processMetrics?: boolean;
}): SyncMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "vgate_" });
  let depth = () => 0;
  new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    labelNames: ["name", "controller"],
    registers,
    collect() {
      this.set({ name: QUEUE_NAME, controller: CONTROLLER_NAME }, depth());
    },
  });
  const queue = { name: QUEUE_NAME, controller: CONTROLLER_NAME };
  const adds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames: ["name", "controller"],
    registers,
  }).labels(queue);
  const retries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name", "controller"],
    registers,
  }).labels(queue);
  const total = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"],
    registers,
  });
  const errors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"],
    registers,
  }).labels({ controller: CONTROLLER_NAME });
  const time = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"],
    buckets: RECONCILE_BUCKETS,
    registers,
  }).labels({ controller: CONTROLLER_NAME });
  // Zero, not absent, before the first reconcile: rate() and alerts see the series at once.
  for (const result of ["success", "error", "requeue"]) total.labels(CONTROLLER_NAME, result);
  const writes = new Counter({
    name: "vgate_sync_writes_total",
    help: "Writes the controller made, by cluster (virtual|host) and action (create|update|delete|ensure).",
    labelNames: ["side", "type"],
    registers,
  });
  const master = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ["name"],
    registers,
  }).labels({ name: opts.leaseName });
  master.set(0);
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
    watchDepth: (read) => {
      depth = read;
    },
    added: () => adds.inc(),
    retried: () => retries.inc(),
    reconciled: (result, seconds) => {
      total.labels(CONTROLLER_NAME, result).inc();
      if (result === "error") errors.inc();
      time.observe(seconds);
    },
    wrote: (side, type) => writes.labels(side, type).inc(),
    leading: (isLeader) => master.set(isLeader ? 1 : 0),
    configReloaded: (ok) => (ok ? reloads.inc() : reloadErrors.inc()),
  };
}
