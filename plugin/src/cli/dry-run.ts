// --dry-run as kubectl reads it (k8s.io/kubectl/pkg/cmd/util GetDryRunStrategy): "none" (the
// default), "client" (nothing is sent), "server" (the API server runs admission, webhooks included,
// and stores nothing: ?dryRun=All). A bare --dry-run is pflag's NoOptDefVal "unchanged", which
// kubectl takes as client with a deprecation warning.

import { CliError } from "./errors.js";

export type DryRun = "none" | "client" | "server";

/** What pflag puts in a --dry-run given without a value (flags.ts NO_VALUE_DEFAULTS). */
export const DRY_RUN_UNCHANGED = "unchanged";

export function parseDryRun(value: string | undefined, warn: (line: string) => void): DryRun {
  switch (value) {
    case undefined:
    case "none":
      return "none";
    case DRY_RUN_UNCHANGED:
      warn("--dry-run is deprecated and can be replaced with --dry-run=client.");
      return "client";
    case "client":
    case "server":
      return value;
    default:
      throw new CliError(
        `Invalid dry-run value (${value}). Must be "none", "server", or "client".`,
      );
  }
}

/** What kubectl's confirmation adds after "created": " (dry run)", " (server dry run)". */
export function dryRunSuffix(dryRun: DryRun): string {
  if (dryRun === "client") return " (dry run)";
  if (dryRun === "server") return " (server dry run)";
  return "";
}
