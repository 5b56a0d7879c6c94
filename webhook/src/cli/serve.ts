// `vgate serve`: the HTTPS admission webhook server.

import { parseArgs } from "node:util";
import { DEFAULT_GROUP_DOMAIN } from "../api/ownedaccesskey.js";
import { dns1123SubdomainErrors } from "../accesskeys/names.js";
import { LOG_LEVELS } from "../server/logger.js";
import { EXIT, usageError } from "./errors.js";
import { parseDuration } from "./patch.js";
import type { Command } from "./main.js";
import type { LevelWithSilent } from "pino";

const HELP = `Serve the vgate admission webhooks over HTTPS.

Routes:
  POST /mutate/ownedaccesskeys     mutating webhook: names, generateName, CREATE defaults
  POST /validate/ownedaccesskeys   validating webhook: metadata rules, spec checks, ownership
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
      --patch-workers int             Sandbox worker threads (default: the number of CPUs)
  -h, --help                          Show this help

Examples:
  # Try it locally
  vgate serve --dev

  # In a cluster, with certificates mounted from a Secret
  vgate serve --tls-cert-file /etc/vgate/tls.crt --tls-private-key-file /etc/vgate/tls.key
`;

export interface EndpointsOptions {
  config: string;
  vclusterName: string;
  vclusterNamespace: string;
  side: "host" | "virtual";
  virtualKubeconfig?: string;
  onPatchError: "deny" | "allow";
  deadlineMs: number;
  workers?: number;
}

function parseEndpointsOptions(
  v: Record<string, string | boolean | undefined>,
): EndpointsOptions | undefined {
  const str = (k: string): string | undefined =>
    typeof v[k] === "string" ? (v[k] as string) : undefined;
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
  const side = str("side");
  if (side !== "host" && side !== "virtual")
    throw usageError(`invalid --side ${JSON.stringify(side)}: host or virtual`);
  const onError = str("on-patch-error");
  if (onError !== "deny" && onError !== "allow") {
    throw usageError(`invalid --on-patch-error ${JSON.stringify(onError)}: deny or allow`);
  }
  const workers = str("patch-workers");
  if (workers !== undefined && !/^[1-9]\d?$/.test(workers)) {
    throw usageError(`invalid --patch-workers ${JSON.stringify(workers)}: an integer from 1 to 99`);
  }
  return {
    config,
    vclusterName: str("vcluster-name")!,
    vclusterNamespace: str("vcluster-namespace")!,
    side,
    virtualKubeconfig: str("virtual-kubeconfig"),
    onPatchError: onError,
    deadlineMs: parseDuration(str("patch-timeout")!, "--patch-timeout"),
    workers: workers === undefined ? undefined : Number(workers),
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
  /** How often certificate files are checked for changes (not a flag; tests shorten it). */
  tlsReloadIntervalMs?: number;
}

export function parseServeArgs(args: string[]): ServeOptions | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: false,
      strict: true,
      options: {
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
        "vcluster-name": { type: "string" },
        "vcluster-namespace": { type: "string" },
        side: { type: "string", default: "host" },
        "virtual-kubeconfig": { type: "string" },
        "on-patch-error": { type: "string", default: "deny" },
        "patch-timeout": { type: "string", default: "100ms" },
        "patch-workers": { type: "string" },
      },
    });
  } catch (err) {
    throw usageError(`${(err as Error).message}\nRun 'vgate serve --help' for usage.`);
  }
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
  };
}

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
    const started = await startServe(opts);
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
