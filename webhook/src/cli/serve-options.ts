// `vgate serve` flags, parsed into typed options: every flag is checked here, before anything
// starts, so a usage error is exit code 2 at once. Apart from serve.ts so that serve-runtime.ts can
// take these types without importing the command that loads it.

import type { LevelWithSilent } from "pino";
import { dns1123SubdomainErrors } from "../accesskeys/names.js";
import { DEFAULT_PROJECT_LABEL, DEFAULT_VIRTUAL_CLUSTER_LABEL } from "../auth/scope-authorizer.js";
import { DEFAULT_GROUP_DOMAIN } from "../shared/ownedaccesskey.js";
import { DEFAULT_ADMISSION_TIMEOUT_MS, DEFAULT_MAX_IN_FLIGHT } from "../server/limits.js";
import { LOG_LEVELS } from "../server/logger.js";
import { DEFAULT_SHUTDOWN_DELAY_MS, DEFAULT_SHUTDOWN_TIMEOUT_MS } from "../server/shutdown.js";
import { parseCommandArgs } from "./args.js";
import { parseDuration, parseLifetime, parseLongDuration, parseSpan, showMs } from "./duration.js";
import { DEFAULT_MAX_ROTATION_GRACE_MS } from "../shared/previous-key.js";
import { LEADER_ELECTION_FLAGS, parseLeaderElection, takeBooleans } from "./sync-options.js";
import type { LeaderElectionOptions } from "../sync/controller/options.js";
import { usageError } from "./errors.js";
import { SERVER_STDIN_CONFIG, selfNamespace } from "./vcluster-flags.js";

export interface EndpointsOptions {
  config: string;
  vclusterName: string;
  vclusterNamespace: string;
  side: "host" | "virtual";
  virtualKubeconfig?: string;
  onPatchError: "deny" | "allow";
  deadlineMs: number;
  workers?: number;
  /** The namespace vgate runs in (--namespace, default $POD_NAMESPACE): no mapping may target it. */
  selfNamespace?: string;
}

/**
 * --discover-vclusters: one vgate for every vCluster on the host. The configs come from the
 * vCluster config Secrets (sync/vcluster-discovery.ts), the host side only.
 */
export interface DiscoveryOptions {
  onPatchError: "deny" | "allow";
  deadlineMs: number;
  workers?: number;
  selfNamespace?: string;
}

function parseDiscoveryOptions(
  v: Record<string, string | boolean | undefined>,
): DiscoveryOptions | undefined {
  if (v["discover-vclusters"] !== true) return undefined;
  const given = (k: string): boolean => typeof v[k] === "string";
  const clash = ["config", "vcluster-name", "vcluster-namespace", "virtual-kubeconfig"].find(given);
  if (clash) {
    throw usageError(
      `--discover-vclusters reads every vCluster's config from its host Secret; it cannot be combined with --${clash}`,
    );
  }
  if (v.side !== "host") {
    throw usageError("--discover-vclusters patches host objects only: --side must be host");
  }
  return patchRunOptions(v);
}

/** --on-patch-error, --patch-timeout, --patch-workers and --namespace. */
function patchRunOptions(v: Record<string, string | boolean | undefined>): DiscoveryOptions {
  const str = (k: string): string | undefined =>
    typeof v[k] === "string" ? (v[k] as string) : undefined;
  const onError = str("on-patch-error");
  if (onError !== "deny" && onError !== "allow") {
    throw usageError(`invalid --on-patch-error ${JSON.stringify(onError)}: deny or allow`);
  }
  const workers = str("patch-workers");
  if (workers !== undefined && !/^[1-9]\d?$/.test(workers)) {
    throw usageError(`invalid --patch-workers ${JSON.stringify(workers)}: an integer from 1 to 99`);
  }
  return {
    onPatchError: onError,
    deadlineMs: parseDuration(str("patch-timeout")!, "--patch-timeout"),
    workers: workers === undefined ? undefined : Number(workers),
    selfNamespace: selfNamespace(str("namespace")),
  };
}

function parseEndpointsOptions(
  v: Record<string, string | boolean | undefined>,
): EndpointsOptions | undefined {
  const str = (k: string): string | undefined =>
    typeof v[k] === "string" ? (v[k] as string) : undefined;
  if (v["discover-vclusters"] === true) return undefined;
  const config = str("config");
  if (!config) {
    const stray = [
      "vcluster-name",
      "vcluster-namespace",
      "virtual-kubeconfig",
      "patch-workers",
    ].find((k) => str(k));
    if (stray) throw usageError(`--${stray} needs --config`);
    return undefined;
  }
  if (!str("vcluster-name") || !str("vcluster-namespace")) {
    throw usageError("--config needs --vcluster-name and --vcluster-namespace");
  }
  if (config === "-") throw usageError(SERVER_STDIN_CONFIG("serve"));
  const side = str("side");
  if (side !== "host" && side !== "virtual")
    throw usageError(`invalid --side ${JSON.stringify(side)}: host or virtual`);
  return {
    config,
    vclusterName: str("vcluster-name")!,
    vclusterNamespace: str("vcluster-namespace")!,
    side,
    virtualKubeconfig: str("virtual-kubeconfig"),
    ...patchRunOptions(v),
  };
}

/** Where the token and authorization webhooks take their settings from (the `vgate serve` flags). */
export interface AuthOptions {
  /** plain: spec.key is the token; hashed: the mutating webhook stores `sha256:<hex>` instead. */
  keyStorage: "plain" | "hashed";
  /** The audiences keys are valid for; undefined: any audience the API server accepts. */
  audiences?: string[];
  /** The name `clusters` scope entries match (besides "*"); "" matches only "*". */
  clusterName: string;
  /** A YAML file of named rule sets for `roles` scope entries. */
  rolesFile?: string;
  /** The namespace label that names a namespace's project. */
  projectLabel: string;
  /** The namespace label that names the virtual cluster a namespace hosts. */
  virtualClusterLabel: string;
  /** --max-rotation-grace: the longest grace window a rotation may ask for (24 h). */
  maxRotationGraceMs: number;
}

export { DEFAULT_PROJECT_LABEL, DEFAULT_VIRTUAL_CLUSTER_LABEL };

export const DEFAULT_AUTH_OPTIONS: AuthOptions = Object.freeze({
  keyStorage: "plain",
  clusterName: "",
  projectLabel: DEFAULT_PROJECT_LABEL,
  virtualClusterLabel: DEFAULT_VIRTUAL_CLUSTER_LABEL,
  maxRotationGraceMs: DEFAULT_MAX_ROTATION_GRACE_MS,
});

function parseAuthOptions(v: Record<string, string | boolean | undefined>): AuthOptions {
  const keyStorage = v["key-storage"];
  if (keyStorage !== "plain" && keyStorage !== "hashed") {
    throw usageError(`invalid --key-storage ${JSON.stringify(keyStorage)}: plain or hashed`);
  }
  const audiences =
    typeof v["audiences"] === "string"
      ? v["audiences"]
          .split(",")
          .map((a) => a.trim())
          .filter(Boolean)
      : undefined;
  if (audiences && audiences.length === 0) {
    throw usageError("--audiences needs at least one audience (omit it to accept any)");
  }
  for (const flag of ["project-label", "virtual-cluster-label"]) {
    const label = v[flag] as string;
    const errors = labelKeyErrors(label);
    if (errors) throw usageError(`invalid --${flag} ${JSON.stringify(label)}: ${errors}`);
  }
  return {
    keyStorage,
    audiences,
    clusterName: v["cluster-name"] as string,
    rolesFile: typeof v["roles-file"] === "string" ? v["roles-file"] : undefined,
    projectLabel: v["project-label"] as string,
    virtualClusterLabel: v["virtual-cluster-label"] as string,
    maxRotationGraceMs: parseLongDuration(
      v["max-rotation-grace"] as string,
      "--max-rotation-grace",
      0,
      MAX_ROTATION_GRACE_LIMIT_MS,
    ),
  };
}

/** --max-rotation-grace may allow at most 30 days: a window is a hand-over, not a second key. */
const MAX_ROTATION_GRACE_LIMIT_MS = 30 * 24 * 3600_000;

/** A label key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
function labelKeyErrors(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const name = key.slice(slash + 1);
  if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(name)) {
    return "a label key is an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.'";
  }
  if (slash < 0) return undefined;
  const errors = dns1123SubdomainErrors(key.slice(0, slash));
  return errors.length ? `prefix: ${errors.join("; ")}` : undefined;
}

/** Client certificates (server/client-auth.ts): who may call which route. */
export interface ClientCertOptions {
  /** --client-ca-file: CAs that sign kube-apiserver's client certificate; the review routes answer no one without it. */
  caFile?: string;
  /** --client-allowed-names: common names accepted; empty: any the CA signed. */
  allowedNames: string[];
  /** --require-admission-client-cert: the admission routes need the certificate too. */
  admission: boolean;
}

/**
 * A key's end of life (cli/serve-lifecycle.ts): expiry warnings, the expiry metric, and deleting
 * keys long expired. Only the leader of the replicas writes.
 */
export interface LifecycleOptions {
  /** --expiry-warnings: record the Warning Events. */
  warnings: boolean;
  /** --expiry-warning-thresholds, in ms before expiry, largest first; also the metric's horizon. */
  thresholdsMs: number[];
  /** --expiry-metric-max-series: the most keys vgate_accesskey_expiry_seconds shows. */
  metricMaxSeries: number;
  /** --expired-key-retention: delete keys expired this long ago; undefined: never. */
  retentionMs?: number;
  /** The Lease the replicas elect a leader with; enabled false: this replica acts alone. */
  leaderElection: LeaderElectionOptions;
}

export const LIFECYCLE_DEFAULTS = Object.freeze({
  thresholds: "7d,1d",
  metricMaxSeries: 1000,
  leaseName: "vgate-key-lifecycle",
});

const DAY_MS = 86_400_000;

/** What `vgate serve` does without the flags: the metric, no writes. */
export const DEFAULT_LIFECYCLE: LifecycleOptions = Object.freeze({
  warnings: false,
  thresholdsMs: [7 * DAY_MS, DAY_MS],
  metricMaxSeries: LIFECYCLE_DEFAULTS.metricMaxSeries,
  leaderElection: {
    enabled: false,
    id: LIFECYCLE_DEFAULTS.leaseName,
    namespace: "default",
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  },
});

function parseThresholds(text: string): number[] {
  const parts = text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  if (parts.length === 0 || parts.length > 10) {
    throw usageError("--expiry-warning-thresholds takes one to ten durations, e.g. 7d,1d");
  }
  const ms = parts.map((p) => parseLifetime(p, "--expiry-warning-thresholds", 1000, 365 * DAY_MS));
  return [...new Set(ms)].sort((a, b) => b - a);
}

function parseLifecycle(
  v: Record<string, string | boolean | undefined>,
  leaderElect: boolean,
  activityWriteIntervalMs: number,
): LifecycleOptions {
  const str = (k: string): string | undefined =>
    typeof v[k] === "string" ? (v[k] as string) : undefined;
  const retentionText = str("expired-key-retention");
  const retentionMs =
    retentionText === undefined
      ? undefined
      : parseLifetime(retentionText, "--expired-key-retention", 1000, 3650 * DAY_MS);
  // A use another replica has not written to status.lastActivity yet is written within the
  // interval; until then the key may look expired to the leader.
  if (retentionMs !== undefined && retentionMs < activityWriteIntervalMs) {
    throw usageError(
      "--expired-key-retention must be at least --activity-write-interval (a use another replica has not yet written could otherwise be missed)",
    );
  }
  const max = str("expiry-metric-max-series")!;
  if (!/^\d{1,6}$/.test(max)) {
    throw usageError(
      `invalid --expiry-metric-max-series ${JSON.stringify(max)}: an integer from 0 to 999999`,
    );
  }
  const warnings = v["expiry-warnings"] === true;
  const acts = warnings || retentionMs !== undefined;
  const namespace = str("leader-election-namespace") ?? selfNamespace(str("namespace"));
  if (acts && leaderElect && namespace === undefined) {
    throw usageError(
      `--${warnings ? "expiry-warnings" : "expired-key-retention"} elects a leader on a Lease: give --leader-election-namespace (or --namespace, or set $POD_NAMESPACE), or --leader-elect=false for a single replica`,
    );
  }
  return {
    warnings,
    thresholdsMs: parseThresholds(str("expiry-warning-thresholds")!),
    metricMaxSeries: Number(max),
    retentionMs,
    leaderElection: parseLeaderElection(
      v,
      acts && leaderElect,
      LIFECYCLE_DEFAULTS.leaseName,
      namespace ?? "default",
    ),
  };
}

export interface ServeOptions {
  port: number;
  bindAddress: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  kubeconfig?: string;
  groupDomain: string;
  adminGroups: string[];
  logLevel: LevelWithSilent;
  dev: boolean;
  endpoints?: EndpointsOptions;
  /** --discover-vclusters: every vCluster's patches, from its config Secret (host side). */
  discovery?: DiscoveryOptions;
  /** DEFAULT_AUTH_OPTIONS when omitted (tests that only need admission). */
  auth?: AuthOptions;
  /**
   * --activity-write-interval: status.lastActivity is written at most this often per key, by all
   * replicas together (60 s when omitted).
   */
  activityWriteIntervalMs?: number;
  /**
   * How often status.lastActivity writes are flushed (not a flag; tests shorten it). A sixth of the
   * write interval, at most 10 s, when omitted.
   */
  activityFlushIntervalMs?: number;
  /** How often certificate files are checked for changes (--tls-reload-interval; 10 s). */
  tlsReloadIntervalMs?: number;
  /** SIGTERM handling, request limits; the defaults when omitted. */
  operations?: OperationsOptions;
  /** No client CA (review routes closed) when omitted. */
  clientCerts?: ClientCertOptions;
  /** Expiry warnings, the expiry metric, retention; the metric alone when omitted. */
  lifecycle?: LifecycleOptions;
  /** How often the key lifecycle checks the keys (not a flag; 30 s when omitted). */
  lifecycleIntervalMs?: number;
  /**
   * The key lifecycle's clock (not a flag, so no one reaches it but a test that starts vgate in its
   * own process): Date.now when omitted.
   */
  now?: () => number;
}

/** How `vgate serve` stops, and how much it takes on at once. */
export interface OperationsOptions {
  /** After SIGTERM, connections are still accepted this long (readiness already false). */
  shutdownDelayMs: number;
  /** From SIGTERM to cutting the connections still open. */
  shutdownTimeoutMs: number;
  /** Review requests handled at once; more get 429 with Retry-After. */
  maxInFlight: number;
  /** An admission request not decided this soon is denied (504 Timeout). */
  admissionTimeoutMs: number;
}

export const DEFAULT_OPERATIONS: OperationsOptions = Object.freeze({
  shutdownDelayMs: DEFAULT_SHUTDOWN_DELAY_MS,
  shutdownTimeoutMs: DEFAULT_SHUTDOWN_TIMEOUT_MS,
  maxInFlight: DEFAULT_MAX_IN_FLIGHT,
  admissionTimeoutMs: DEFAULT_ADMISSION_TIMEOUT_MS,
});

function parseOperations(v: Record<string, string | boolean | undefined>): OperationsOptions {
  // With --dev no load balancer needs time to notice: Ctrl-C stops at once (after the drain).
  const delayText =
    (v["shutdown-delay"] as string | undefined) ??
    (v.dev ? "0" : showMs(DEFAULT_SHUTDOWN_DELAY_MS));
  const delay = parseSpan(delayText, "--shutdown-delay", 0, 300_000);
  const timeout = parseSpan(v["shutdown-timeout"] as string, "--shutdown-timeout", 1, 600_000);
  if (delay >= timeout) {
    throw usageError(
      "--shutdown-delay must be shorter than --shutdown-timeout (requests in flight need time to finish)",
    );
  }
  const max = v["max-in-flight"] as string;
  if (!/^[1-9]\d{0,5}$/.test(max)) {
    throw usageError(`invalid --max-in-flight ${JSON.stringify(max)}: an integer from 1 to 999999`);
  }
  return {
    shutdownDelayMs: delay,
    shutdownTimeoutMs: timeout,
    maxInFlight: Number(max),
    // kube-apiserver's webhook timeoutSeconds is at most 30.
    admissionTimeoutMs: parseSpan(
      v["admission-timeout"] as string,
      "--admission-timeout",
      1,
      30_000,
    ),
  };
}

export function parseServeArgs(args: string[]): ServeOptions | "help" {
  const { rest, values: booleans } = takeBooleans(args, ["leader-elect"]);
  const parsed = parseCommandArgs(
    "serve",
    rest,
    {
      port: { type: "string", default: "8443" },
      "bind-address": { type: "string", default: "0.0.0.0" },
      "tls-cert-file": { type: "string" },
      "tls-private-key-file": { type: "string" },
      kubeconfig: { type: "string" },
      "group-domain": { type: "string", default: DEFAULT_GROUP_DOMAIN },
      "admin-groups": { type: "string", default: "system:masters" },
      "log-level": { type: "string", default: "info" },
      dev: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      config: { type: "string" },
      "discover-vclusters": { type: "boolean", default: false },
      "vcluster-name": { type: "string" },
      "vcluster-namespace": { type: "string" },
      side: { type: "string", default: "host" },
      "virtual-kubeconfig": { type: "string" },
      "on-patch-error": { type: "string", default: "deny" },
      "patch-timeout": { type: "string", default: "100ms" },
      "patch-workers": { type: "string" },
      namespace: { type: "string" },
      "key-storage": { type: "string", default: "plain" },
      audiences: { type: "string" },
      "cluster-name": { type: "string", default: "" },
      "roles-file": { type: "string" },
      "project-label": { type: "string", default: DEFAULT_PROJECT_LABEL },
      "virtual-cluster-label": { type: "string", default: DEFAULT_VIRTUAL_CLUSTER_LABEL },
      "max-rotation-grace": { type: "string", default: "24h" },
      "shutdown-delay": { type: "string" },
      "shutdown-timeout": { type: "string", default: showMs(DEFAULT_SHUTDOWN_TIMEOUT_MS) },
      "max-in-flight": { type: "string", default: String(DEFAULT_MAX_IN_FLIGHT) },
      "tls-reload-interval": { type: "string", default: "10s" },
      "activity-write-interval": { type: "string", default: "1m" },
      "admission-timeout": { type: "string", default: showMs(DEFAULT_ADMISSION_TIMEOUT_MS) },
      "client-ca-file": { type: "string" },
      "client-allowed-names": { type: "string" },
      "require-admission-client-cert": { type: "boolean", default: false },
      "expiry-warnings": { type: "boolean", default: false },
      "expiry-warning-thresholds": { type: "string", default: LIFECYCLE_DEFAULTS.thresholds },
      "expiry-metric-max-series": {
        type: "string",
        default: String(LIFECYCLE_DEFAULTS.metricMaxSeries),
      },
      "expired-key-retention": { type: "string" },
      ...LEADER_ELECTION_FLAGS,
    },
    { allowPositionals: false },
  );
  const v = parsed.values;
  if (v.help) return "help";
  const port = Number(v.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw usageError(
      `invalid --port ${JSON.stringify(v.port)}: must be an integer from 0 to 65535`,
    );
  }
  if (!(LOG_LEVELS as readonly string[]).includes(v["log-level"]!)) {
    throw usageError(
      `invalid --log-level ${JSON.stringify(v["log-level"])}: must be one of ${LOG_LEVELS.join(", ")}`,
    );
  }
  const domainErrors = dns1123SubdomainErrors(`management.${v["group-domain"]}`);
  if (!v["group-domain"] || domainErrors.length) {
    throw usageError(
      `invalid --group-domain ${JSON.stringify(v["group-domain"])}: ${domainErrors.join("; ") || "must not be empty"}`,
    );
  }
  const adminGroups = v["admin-groups"]!.split(",")
    .map((g) => g.trim())
    .filter(Boolean);
  const cert = v["tls-cert-file"];
  const key = v["tls-private-key-file"];
  if (Boolean(cert) !== Boolean(key)) {
    throw usageError("--tls-cert-file and --tls-private-key-file must be given together");
  }
  if (!cert && !v.dev) {
    throw usageError(
      "vgate serve needs --tls-cert-file and --tls-private-key-file, or --dev for a self-signed certificate",
    );
  }
  const clientCaFile = v["client-ca-file"];
  const allowedNames = (v["client-allowed-names"] ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  if (!clientCaFile && (allowedNames.length > 0 || v["require-admission-client-cert"])) {
    throw usageError(
      `--${allowedNames.length > 0 ? "client-allowed-names" : "require-admission-client-cert"} needs --client-ca-file`,
    );
  }
  const activityWriteIntervalMs = parseSpan(
    v["activity-write-interval"]!,
    "--activity-write-interval",
    1000,
    3_600_000,
  );
  const leaderElect = booleans["leader-elect"] ?? v["leader-elect"] ?? true;
  return {
    port,
    bindAddress: v["bind-address"]!,
    tlsCertFile: cert,
    tlsKeyFile: key,
    kubeconfig: v.kubeconfig,
    groupDomain: v["group-domain"]!,
    adminGroups,
    logLevel: v["log-level"] as LevelWithSilent,
    dev: v.dev!,
    endpoints: parseEndpointsOptions(v),
    discovery: parseDiscoveryOptions(v),
    auth: parseAuthOptions(v),
    operations: parseOperations(v),
    clientCerts: {
      caFile: clientCaFile,
      allowedNames,
      admission: v["require-admission-client-cert"]!,
    },
    tlsReloadIntervalMs: parseSpan(
      v["tls-reload-interval"]!,
      "--tls-reload-interval",
      100,
      600_000,
    ),
    activityWriteIntervalMs,
    lifecycle: parseLifecycle(v, leaderElect, activityWriteIntervalMs),
  };
}
