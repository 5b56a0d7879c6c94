// Checks shared by the version tests of vgate and kubectl accesskey: the build they report is this
// checkout's (git rev-parse HEAD), with a date that parses.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { parse } from "yaml";
import { repoFile, repoRoot } from "./fixtures.js";

export const HEAD = execFileSync("git", ["rev-parse", "HEAD"], {
  cwd: repoRoot,
  encoding: "utf8",
}).trim();

export const PACKAGE_VERSION = (JSON.parse(repoFile("package.json")) as { version: string })
  .version;

const STALE = "the build is not of this checkout's HEAD: run make build (or make plugin-bundle)";

/** `version -o json` (or yaml) output, checked; returns it parsed. */
export function assertThisBuild(output: string, format: "json" | "yaml"): Record<string, string> {
  const info = (format === "json" ? JSON.parse(output) : parse(output)) as Record<string, string>;
  assert.deepEqual(Object.keys(info), [
    "version",
    "gitCommit",
    "gitTreeState",
    "buildDate",
    "nodeVersion",
    "platform",
  ]);
  assert.equal(info["gitCommit"], HEAD, STALE);
  assert.equal(info["version"], PACKAGE_VERSION);
  assert.match(info["gitTreeState"]!, /^(clean|dirty)$/);
  assert.match(info["buildDate"]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Number.isFinite(Date.parse(info["buildDate"]!)), info["buildDate"]);
  assert.equal(info["nodeVersion"], process.version);
  assert.match(info["platform"]!, /^linux\/(amd64|arm64)$/);
  return info;
}

/** The text form: one `Field: value` a line, the same values as -o json. */
export function assertTextMatches(text: string, info: Record<string, string>): void {
  assert.equal(
    text,
    [
      `Version:        ${info["version"]}`,
      `Git commit:     ${info["gitCommit"]}`,
      `Git tree state: ${info["gitTreeState"]}`,
      `Build date:     ${info["buildDate"]}`,
      `Node.js:        ${info["nodeVersion"]}`,
      `Platform:       ${info["platform"]}`,
      "",
    ].join("\n"),
  );
}
