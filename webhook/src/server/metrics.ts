// Prometheus metrics (prom-client). One registry per server, so tests can run several servers.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface Metrics {
  registry: Registry;
  requests: Counter<"route" | "operation" | "allowed">;
  latency: Histogram<"route" | "operation" | "allowed">;
  inFlight: Gauge<"route">;
}

export function createMetrics(withProcessMetrics = true): Metrics {
  const registry = new Registry();
  if (withProcessMetrics) collectDefaultMetrics({ register: registry, prefix: "vgate_" });
  const labelNames = ["route", "operation", "allowed"] as const;
  return {
    registry,
    requests: new Counter({
      name: "vgate_admission_requests_total",
      help: "Admission requests answered, by route, operation and outcome (allowed true|false|error).",
      labelNames,
      registers: [registry],
    }),
    latency: new Histogram({
      name: "vgate_admission_request_duration_seconds",
      help: "Time to answer an admission request, from body received to response written.",
      labelNames,
      // Around kube-apiserver's own webhook buckets, with more resolution below 25 ms.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: "vgate_admission_requests_in_flight",
      help: "Admission requests being handled now.",
      labelNames: ["route"],
      registers: [registry],
    }),
  };
}
