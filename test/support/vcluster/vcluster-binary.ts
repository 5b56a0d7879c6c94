// Where vCluster's syncer is (make kube builds it into the kube cache from the wrapper module
// test/kube/vcluster/) and where its Go module's source is (the module cache make kube filled):
// the tests run the one and read the other's chart values and schema, never copying either.

import { accessSync, constants, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";
import { kubeCacheDir } from "../kube/binaries.js";
import { findVClusterModule } from "./vcluster-module.js";

export interface VClusterParts {
  /** The syncer binary (`vcluster start`). */
  binary: string;
  /** The module's source directory: chart/values.yaml, chart/values.schema.json, … */
  moduleDir: string;
  version: string;
}

/** VCLUSTER_VERSION in test/kube/versions.env. */
export function vclusterVersion(): string {
  const text = readFileSync(join(repoRoot, "test/kube/versions.env"), "utf8");
  const m = /^VCLUSTER_VERSION=(\S+)$/m.exec(text);
  if (!m) throw new Error("test/kube/versions.env has no VCLUSTER_VERSION");
  return m[1]!;
}

export function findVCluster(): { found: VClusterParts } | { missing: string } {
  const binary = join(kubeCacheDir(), "vcluster");
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    return { missing: `no ${binary}: run \`make kube\` (needs Go >= 1.26)` };
  }
  const mod = findVClusterModule();
  if ("missing" in mod) return mod;
  return { found: { binary, moduleDir: mod.found.dir, version: vclusterVersion() } };
}
