// Flags shared by the commands that run Endpoint-sync patches: which config, which vCluster.

import { dns1123LabelErrors } from "../accesskeys/names.js";
import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import { CliError, usageError } from "./errors.js";
import { announceStdin } from "./stdin-notice.js";

export const VCLUSTER_FLAG_OPTIONS = {
  config: { type: "string" },
  "vcluster-name": { type: "string" },
  "vcluster-namespace": { type: "string" },
} as const;

/** Flags of the dry-run commands (patch, translate) besides the vCluster ones. */
export const DRY_RUN_FLAG_OPTIONS = {
  explain: { type: "boolean", default: false },
  timeout: { type: "string", default: "100ms" },
  help: { type: "boolean", short: "h" },
} as const;

export const VCLUSTER_FLAG_HELP = `      --config string               vCluster config file (vcluster.yaml, YAML or JSON)
      --vcluster-name string        Name of the virtual cluster (context.vcluster.name)
      --vcluster-namespace string   Its namespace in the host cluster (context.vcluster.namespace)`;

/** The help line of --namespace (vgate sync, vgate serve, vgate check-config). */
export const NAMESPACE_FLAG_HELP =
  "the namespace vgate runs in; no mapping may target it (default: $POD_NAMESPACE)";

/**
 * --namespace: the namespace vgate runs in (docs/decisions.md EPS-20), $POD_NAMESPACE when the
 * flag is not given (the Downward API sets it in a pod); undefined when neither says. Only the
 * fixed reserved namespaces are refused then.
 */
export function selfNamespace(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const value = flag ?? (env["POD_NAMESPACE"] || undefined);
  if (value === undefined) return undefined;
  const errors = dns1123LabelErrors(value);
  if (errors.length > 0) {
    const source = flag === undefined ? "$POD_NAMESPACE" : "--namespace";
    throw usageError(`invalid ${source} ${JSON.stringify(value)}: ${errors[0]}`);
  }
  return value;
}

/**
 * `-` (standard input) is for the one-shot commands; a server reads --config from a file, which
 * vgate sync re-reads when it changes and which a pod mounts from a ConfigMap.
 */
export const SERVER_STDIN_CONFIG = (command: string): string =>
  `--config - (standard input) works for check-config, patch and translate, not for vgate ${command}: give the path of the vcluster.yaml file\nRun 'vgate ${command} --help' for usage.`;

/**
 * Checks the flags, then reads, parses and validates the config once (config/loaded-vcluster.ts);
 * every problem is reported at once. `namespace` is vgate's own (selfNamespace), which no mapping may target.
 */
export async function loadVCluster(
  values: {
    config?: string;
    "vcluster-name"?: string;
    "vcluster-namespace"?: string;
    namespace?: string;
  },
  command: string,
): Promise<LoadedVCluster> {
  const missing = ["config", "vcluster-name", "vcluster-namespace"].filter(
    (f) => !values[f as keyof typeof values],
  );
  if (missing.length) {
    throw usageError(
      `${command} needs ${missing.map((f) => `--${f}`).join(", ")}\nRun 'vgate ${command} --help' for usage.`,
    );
  }
  if (values.config === "-") announceStdin(command, "the vCluster config (--config -)");
  const { VClusterConfigError } = await import("../config/load-config.js");
  const { loadVClusterFile } = await import("../config/loaded-vcluster.js");
  try {
    return await loadVClusterFile(
      values.config!,
      { name: values["vcluster-name"]!, namespace: values["vcluster-namespace"]! },
      values.namespace,
    );
  } catch (err) {
    if (!(err instanceof VClusterConfigError)) throw err;
    throw new CliError(`invalid config ${err.fileName}:\n  ${err.problems.join("\n  ")}`);
  }
}
