// Where vCluster's syncer is (make kube builds it into the kube cache from the wrapper module
// test/kube/vcluster/) and where its Go module's source is (the module cache make kube filled):
// the tests run the one and read the other's chart values and schema, never copying either.

import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { kubeCacheDir, kubeVersions } from "../kube/binaries.js";
import { findVClusterModule } from "./vcluster-module.js";

export interface VClusterParts {
  /** The syncer binary (`vcluster start`). */
  binary: string;
  /** The module's source directory: chart/values.yaml, chart/values.schema.json, … */
  moduleDir: string;
  version: string;
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
  return { found: { binary, moduleDir: mod.found.dir, version: kubeVersions().vcluster } };
}
