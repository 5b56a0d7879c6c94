// `vgate version` and `kubectl accesskey version`: the build as text (one field a line), or as
// JSON or YAML for scripts, as `kubectl version --client -o json|yaml` offers.

import { stringify } from "yaml";
import type { BuildInfo } from "./build-info.js";

export const VERSION_FORMATS = ["json", "yaml"] as const;
export type VersionFormat = (typeof VERSION_FORMATS)[number] | "text";

/** The --output value as a format, or null for one that is not known (a usage error). */
export function versionFormat(output: string | undefined): VersionFormat | null {
  if (output === undefined || output === "") return "text";
  return (VERSION_FORMATS as readonly string[]).includes(output) ? (output as VersionFormat) : null;
}

/** kubectl's message for a bad -o of `kubectl version`. */
export const VERSION_FORMAT_ERROR = "--output must be 'yaml' or 'json'";

export function formatVersion(info: BuildInfo, format: VersionFormat): string {
  if (format === "json") return `${JSON.stringify(info, null, 2)}\n`;
  if (format === "yaml") return stringify(info);
  const rows: [string, string][] = [
    ["Version", info.version],
    ["Git commit", info.gitCommit],
    ["Git tree state", info.gitTreeState],
    ["Build date", info.buildDate],
    ["Node.js", info.nodeVersion],
    ["Platform", info.platform],
  ];
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}\n`).join("");
}
