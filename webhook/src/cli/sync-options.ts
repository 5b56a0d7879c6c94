// `vgate sync` flags, parsed into typed options before anything starts, so every usage error is
// exit code 2 at once. The names and defaults follow controller-runtime's manager flags
// (--leader-elect, --health-probe-bind-address, --metrics-bind-address) and client-go's
// leader-election defaults (15s lease, 10s renew deadline, 2s retry period).

import type { LevelWithSilent } from "pino";
import { dns1123LabelErrors, dns1123SubdomainErrors } from "../accesskeys/names.js";
import { FIXED_RESERVED_NAMESPACES } from "../config/reserved-namespaces.js";
import { LOG_LEVELS } from "../server/logger.js";
import { DEFAULT_REFERENCE_SECRET_TYPES, NEVER_COPIED_SECRET_TYPES } from "../sync/secret-types.js";
import { parseCommandArgs } from "./args.js";
import { parseDuration, parseLongDuration } from "./duration.js";
import { usageError } from "./errors.js";
import { SERVER_STDIN_CONFIG, selfNamespace } from "./vcluster-flags.js";
import type { LeaderElectionOptions, SyncOptions } from "../sync/controller/options.js";

export const SYNC_DEFAULTS = Object.freeze({
  workers: 2,
  patchTimeout: "100ms",
  leaseDuration: "15s",
  renewDeadline: "10s",
  retryPeriod: "2s",
  healthProbeBindAddress: ":8081",
  metricsBindAddress: ":8080",
  shutdownTimeout: "25s",
  logLevel: "info",
});

/** The leader election flags, as controller-runtime names them; `vgate serve` takes them too. */
export const LEADER_ELECTION_FLAGS = {
  "leader-elect": { type: "boolean" },
  "leader-election-id": { type: "string" },
  "leader-election-namespace": { type: "string" },
  "leader-elect-lease-duration": { type: "string", default: SYNC_DEFAULTS.leaseDuration },
  "leader-elect-renew-deadline": { type: "string", default: SYNC_DEFAULTS.renewDeadline },
  "leader-elect-retry-period": { type: "string", default: SYNC_DEFAULTS.retryPeriod },
} as const;

/** client-go's leaderelection.JitterFactor: renewDeadline must exceed retryPeriod times this. */
const JITTER_FACTOR = 1.2;

const REQUIRED = ["config", "virtual-kubeconfig", "vcluster-name", "vcluster-namespace"] as const;

/** Boolean flags that also take `=true` / `=false`, as Go's flag package allows. */
const BOOLEAN_FLAGS = ["leader-elect", "alongside-vcluster"] as const;

/**
 * Go's pflag accepts `--leader-elect=false`; node's parseArgs has no negation, so such arguments
 * are taken out here and their values returned.
 */
export function takeBooleans(
  args: string[],
  flags: readonly string[] = BOOLEAN_FLAGS,
): { rest: string[]; values: Record<string, boolean> } {
  const values: Record<string, boolean> = {};
  const rest: string[] = [];
  for (const arg of args) {
    const m = /^--([a-z-]+)=(.*)$/.exec(arg);
    const flag = m?.[1];
    if (m && flags.includes(flag!)) {
      if (m[2] !== "true" && m[2] !== "false") {
        throw usageError(`invalid --${flag} ${JSON.stringify(m[2])}: true or false`);
      }
      values[flag!] = m[2] === "true";
    } else {
      rest.push(arg);
    }
  }
  return { rest, values };
}

/**
 * A listen address as controller-runtime takes it: `host:port`, `:port` (every interface), or "0"
 * to disable the server.
 */
export function parseBindAddress(text: string, flag: string): string | null {
  if (text === "0") return null;
  const m = /^(.*):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw usageError(
      `invalid ${flag} ${JSON.stringify(text)}: use host:port, :port, or 0 to disable`,
    );
  }
  return text;
}

function parseWorkers(text: string, flag: string): number {
  if (!/^[1-9]\d?$/.test(text)) {
    throw usageError(`invalid ${flag} ${JSON.stringify(text)}: an integer from 1 to 99`);
  }
  return Number(text);
}

/** A Lease name: a DNS-1123 subdomain. */
function checkName(value: string, flag: string): string {
  const errors = dns1123SubdomainErrors(value);
  if (errors.length) throw usageError(`invalid ${flag} ${JSON.stringify(value)}: ${errors[0]}`);
  return value;
}

/** A namespace (or a vCluster's) name: a DNS-1123 label. */
function checkLabel(value: string, flag: string): string {
  const errors = dns1123LabelErrors(value);
  if (errors.length) throw usageError(`invalid ${flag} ${JSON.stringify(value)}: ${errors[0]}`);
  return value;
}

/**
 * --leader-elect-* and --leader-election-*; `vgate serve` takes the same flags for its key
 * lifecycle (cli/serve-options.ts).
 */
export function parseLeaderElection(
  v: Record<string, string | boolean | undefined>,
  enabled: boolean,
  defaultId: string,
  namespace: string,
): LeaderElectionOptions {
  const lease = parseLongDuration(
    v["leader-elect-lease-duration"] as string,
    "--leader-elect-lease-duration",
    1000,
    3_600_000,
  );
  const renew = parseLongDuration(
    v["leader-elect-renew-deadline"] as string,
    "--leader-elect-renew-deadline",
    1,
    3_600_000,
  );
  const retry = parseLongDuration(
    v["leader-elect-retry-period"] as string,
    "--leader-elect-retry-period",
    1,
    3_600_000,
  );
  // client-go's NewLeaderElector refuses the same combinations.
  if (lease <= renew) {
    throw usageError(
      "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline",
    );
  }
  if (renew <= JITTER_FACTOR * retry) {
    throw usageError(
      `--leader-elect-renew-deadline must be greater than ${JITTER_FACTOR} times --leader-elect-retry-period`,
    );
  }
  const id = (v["leader-election-id"] as string | undefined) ?? defaultId;
  const leaseNamespace = (v["leader-election-namespace"] as string | undefined) ?? namespace;
  return {
    enabled,
    id: checkName(id, "--leader-election-id"),
    namespace: checkLabel(leaseNamespace, "--leader-election-namespace"),
    leaseDurationMs: lease,
    renewDeadlineMs: renew,
    retryPeriodMs: retry,
  };
}

const OPTIONS = {
  config: { type: "string" },
  "virtual-kubeconfig": { type: "string" },
  "host-kubeconfig": { type: "string" },
  "vcluster-name": { type: "string" },
  "vcluster-namespace": { type: "string" },
  "alongside-vcluster": { type: "boolean" },
  "target-namespace": { type: "string" },
  namespace: { type: "string" },
  "reference-secret-types": {
    type: "string",
    default: DEFAULT_REFERENCE_SECRET_TYPES.join(","),
  },
  workers: { type: "string", default: String(SYNC_DEFAULTS.workers) },
  "patch-timeout": { type: "string", default: SYNC_DEFAULTS.patchTimeout },
  "patch-workers": { type: "string" },
  ...LEADER_ELECTION_FLAGS,
  "health-probe-bind-address": { type: "string", default: SYNC_DEFAULTS.healthProbeBindAddress },
  "metrics-bind-address": { type: "string", default: SYNC_DEFAULTS.metricsBindAddress },
  "shutdown-timeout": { type: "string", default: SYNC_DEFAULTS.shutdownTimeout },
  "log-level": { type: "string", default: SYNC_DEFAULTS.logLevel },
  help: { type: "boolean", short: "h", default: false },
} as const;

function parseRaw(args: string[]) {
  const { rest, values } = takeBooleans(args);
  const parsed = parseCommandArgs("sync", rest, OPTIONS);
  if (parsed.positionals.length) {
    throw usageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[0])}\nRun 'vgate sync --help' for usage.`,
    );
  }
  return {
    v: parsed.values,
    leaderElect: values["leader-elect"] ?? parsed.values["leader-elect"] ?? true,
    alongsideVCluster: values["alongside-vcluster"] ?? parsed.values["alongside-vcluster"] ?? false,
  };
}

/**
 * --reference-secret-types: a comma-separated list; the types Kubernetes fills with credentials
 * are refused (docs/decisions.md EPS-21).
 */
export function parseSecretTypes(text: string, flag: string): string[] {
  const types = [
    ...new Set(
      text
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  if (types.length === 0) throw usageError(`${flag} needs at least one Secret type`);
  for (const type of types) {
    if (NEVER_COPIED_SECRET_TYPES.includes(type)) {
      throw usageError(
        `invalid ${flag}: ${JSON.stringify(type)} Secrets carry credentials Kubernetes puts there and are never copied`,
      );
    }
    if (/\s/.test(type) || type.length > 253) {
      throw usageError(`invalid ${flag}: ${JSON.stringify(type)} is not a Secret type`);
    }
  }
  return types;
}

/** A namespace vgate sync writes to: a DNS label, and never one of the fixed reserved ones. */
function checkTarget(value: string, flag: string): string {
  checkLabel(value, flag);
  if (FIXED_RESERVED_NAMESPACES.includes(value)) {
    throw usageError(
      `invalid ${flag} ${JSON.stringify(value)}: vgate sync never writes to ${FIXED_RESERVED_NAMESPACES.join(", ")}`,
    );
  }
  return value;
}

export function parseSyncArgs(
  args: string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): SyncOptions | "help" {
  const { v, leaderElect, alongsideVCluster } = parseRaw(args);
  if (v.help) return "help";
  const missing = REQUIRED.filter((f) => !v[f]);
  if (missing.length) {
    throw usageError(
      `vgate sync needs ${missing.map((f) => `--${f}`).join(", ")}\nRun 'vgate sync --help' for usage.`,
    );
  }
  if (v.config === "-") throw usageError(SERVER_STDIN_CONFIG("sync"));
  const logLevel = v["log-level"]!;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw usageError(
      `invalid --log-level ${JSON.stringify(logLevel)}: must be one of ${LOG_LEVELS.join(", ")}`,
    );
  }
  const namespace = checkTarget(v["vcluster-namespace"]!, "--vcluster-namespace");
  const name = checkLabel(v["vcluster-name"]!, "--vcluster-name");
  return {
    config: v.config!,
    virtualKubeconfig: v["virtual-kubeconfig"]!,
    hostKubeconfig: v["host-kubeconfig"] || undefined,
    vclusterName: name,
    vclusterNamespace: namespace,
    alongsideVCluster,
    targetNamespace: checkTarget(v["target-namespace"] ?? namespace, "--target-namespace"),
    selfNamespace: selfNamespace(v.namespace, env),
    referenceSecretTypes: parseSecretTypes(
      v["reference-secret-types"]!,
      "--reference-secret-types",
    ),
    workers: parseWorkers(v.workers!, "--workers"),
    patchTimeoutMs: parseDuration(v["patch-timeout"]!, "--patch-timeout"),
    patchWorkers:
      v["patch-workers"] === undefined
        ? undefined
        : parseWorkers(v["patch-workers"], "--patch-workers"),
    leaderElection: parseLeaderElection(v, leaderElect, `vgate-sync-${name}`, namespace),
    healthProbeBindAddress: parseBindAddress(
      v["health-probe-bind-address"]!,
      "--health-probe-bind-address",
    ),
    metricsBindAddress: parseBindAddress(v["metrics-bind-address"]!, "--metrics-bind-address"),
    shutdownTimeoutMs: parseLongDuration(v["shutdown-timeout"]!, "--shutdown-timeout", 1, 600_000),
    logLevel: logLevel as LevelWithSilent,
  };
}
