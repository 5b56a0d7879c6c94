// The metrics a controller-runtime controller exports, with client-go's and controller-runtime's
// names, help texts and labels, so dashboards and alerts written for those controllers work
// unchanged: workqueue_* (client-go's workqueue metrics provider as controller-runtime registers
// it), controller_runtime_reconcile_* and leader_election_master_status. A controller registers
// them in its own registry and names its queue, itself and its Lease.

import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export type ReconcileResult = "success" | "error" | "requeue";

// controller-runtime's reconcile_time_seconds buckets (metrics.go): 5 ms to 60 s.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

export interface WorkQueueMetrics {
  /** Reads the queue's depth when scraped. */
  watchDepth(read: () => number): void;
  added(): void;
  retried(): void;
}

/** workqueue_depth, workqueue_adds_total and workqueue_retries_total of one named queue. */
export function workQueueMetrics(
  registers: Registry[],
  queue: { name: string; controller: string },
): WorkQueueMetrics {
  let depth = () => 0;
  new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    labelNames: ["name", "controller"],
    registers,
    collect() {
      this.set(queue, depth());
    },
  });
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
  return {
    watchDepth: (read) => {
      depth = read;
    },
    added: () => adds.inc(),
    retried: () => retries.inc(),
  };
}

/** controller_runtime_reconcile_total, _errors_total and _time_seconds of the given controllers. */
export function reconcileMetrics(
  registers: Registry[],
  controllers: readonly string[],
): (controller: string, result: ReconcileResult, seconds: number) => void {
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
  });
  const time = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"],
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  // Zero, not absent, before the first reconcile: rate() and alerts see the series at once.
  for (const controller of controllers) {
    for (const result of ["success", "error", "requeue"]) total.labels(controller, result);
    errors.labels({ controller });
    time.labels({ controller });
  }
  return (controller, result, seconds) => {
    total.labels(controller, result).inc();
    if (result === "error") errors.labels({ controller }).inc();
    time.labels({ controller }).observe(seconds);
  };
}

/** leader_election_master_status of one Lease: 0 until this process leads. */
export function leaderElectionMetric(
  registers: Registry[],
  leaseName: string,
): (isLeader: boolean) => void {
  const master = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
    labelNames: ["name"],
    registers,
  }).labels({ name: leaseName });
  master.set(0);
  return (isLeader) => master.set(isLeader ? 1 : 0);
}
