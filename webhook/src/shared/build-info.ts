// Which build this is: package.json's version, and the git commit, tree state and date that
// build/build-info.mjs found when it was built (docs/decisions.md OPS-30). The esbuild bundle of
// the plugin has them inlined (--define); the tsc output reads dist/build-info.json. A build
// without them (a tarball with no git, a bare tsc run) says "unknown" rather than failing.

import { readFileSync } from "node:fs";

export const UNKNOWN = "unknown";

/** What `version -o json` prints; field names as kubectl's version.Info where they mean the same. */
export interface BuildInfo {
  version: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  /** Node.js, which runs the build (kubectl: goVersion). */
  nodeVersion: string;
  /** OS/architecture, with Go's names as kubectl prints them, e.g. linux/amd64. */
  platform: string;
}

type Stamped = Pick<BuildInfo, "version" | "gitCommit" | "gitTreeState" | "buildDate">;

// Replaced by esbuild's --define in the plugin bundle (Makefile: plugin-bundle); undeclared in the
// tsc output, where typeof says "undefined".
declare const __VGATE_BUILD_INFO__: unknown;

/** dist/build-info.json and the repository's package.json, from dist/webhook/src/shared/. */
const BUILD_INFO_FILE = new URL("../../../build-info.json", import.meta.url);
const PACKAGE_JSON = new URL("../../../../package.json", import.meta.url);

const GO_ARCH: Record<string, string> = { x64: "amd64", ia32: "386", arm: "arm", arm64: "arm64" };

function readJson(url: URL): Record<string, unknown> {
  try {
    const value = JSON.parse(readFileSync(url, "utf8")) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined;

function stamped(): Record<string, unknown> {
  if (typeof __VGATE_BUILD_INFO__ === "object" && __VGATE_BUILD_INFO__ !== null)
    return __VGATE_BUILD_INFO__ as Record<string, unknown>;
  return readJson(BUILD_INFO_FILE);
}

/** The build's identity; every field is a string, "unknown" when the build did not record it. */
export function buildInfo(): BuildInfo {
  const s = stamped();
  const fields: Stamped = {
    version: text(s["version"]) ?? text(readJson(PACKAGE_JSON)["version"]) ?? UNKNOWN,
    gitCommit: text(s["gitCommit"]) ?? UNKNOWN,
    gitTreeState: text(s["gitTreeState"]) ?? UNKNOWN,
    buildDate: text(s["buildDate"]) ?? UNKNOWN,
  };
  return {
    ...fields,
    nodeVersion: process.version,
    platform: `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}
