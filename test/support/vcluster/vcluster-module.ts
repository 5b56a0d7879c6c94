// Where vCluster's Go module source is: the version test/kube/vcluster's wrapper module pins
// (test/kube/versions.env), in the Go module cache that `make kube` fills. Tests read its chart
// schema, values and example configs as facts; nothing is downloaded here (GOPROXY=off).

import { findWrapperModule, type ModuleLookup } from "../kube/wrapper-module.js";

export type { ModuleLookup };

export const VCLUSTER_MODULE = "github.com/loft-sh/vcluster";

/** `go list -m` in the wrapper module, read-only and offline. */
export function findVClusterModule(env: NodeJS.ProcessEnv = process.env): ModuleLookup {
  return findWrapperModule("vcluster", VCLUSTER_MODULE, "chart/values.schema.json", env);
}
