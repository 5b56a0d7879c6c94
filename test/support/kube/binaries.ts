// Where the test rig's kube-apiserver and etcd are, looked up the way controller-runtime's envtest
// looks up its assets: TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD first, then the
// KUBEBUILDER_ASSETS directory, then the cache that `make kube` builds into
// (${XDG_CACHE_HOME:-~/.cache}/vgate/kube/<version>/). Versions come from test/kube/versions.env.

import { accessSync, constants, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";

export interface KubeVersions {
  kube: string;
  etcd: string;
  /** vCluster's syncer (test/support/vcluster/). */
  vcluster: string;
  /** cert-manager's controller and cainjector (test/support/cert-manager/). */
  certManager: string;
  /** Helm, a test tool (test/support/helm/). */
  helm: string;
}

/** test/kube/versions.env, the one place the versions are pinned. */
export function kubeVersions(): KubeVersions {
  const text = readFileSync(join(repoRoot, "test/kube/versions.env"), "utf8");
  const value = (key: string): string => {
    const m = new RegExp(`^${key}=(\\S+)$`, "m").exec(text);
    if (!m) throw new Error(`test/kube/versions.env has no ${key}`);
    return m[1]!;
  };
  return {
    kube: value("KUBE_VERSION"),
    etcd: value("ETCD_VERSION"),
    vcluster: value("VCLUSTER_VERSION"),
    certManager: value("CERT_MANAGER_VERSION"),
    helm: value("HELM_VERSION"),
  };
}

export interface KubeBinaries {
  kubeApiserver: string;
  etcd: string;
}

export type BinaryLookup = { found: KubeBinaries } | { missing: string };

/** The cache directory `make kube` writes: envtest's assets layout, keyed by version. */
export function kubeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  return join(cache, "vgate", "kube", kubeVersions().kube);
}

/** Whether `path` is a file this process may run. */
export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findKubeBinaries(env: NodeJS.ProcessEnv = process.env): BinaryLookup {
  const dir = env["KUBEBUILDER_ASSETS"] || kubeCacheDir(env);
  const where = env["KUBEBUILDER_ASSETS"] ? "KUBEBUILDER_ASSETS" : "the make kube cache";
  const kubeApiserver = env["TEST_ASSET_KUBE_APISERVER"] || join(dir, "kube-apiserver");
  const etcd = env["TEST_ASSET_ETCD"] || join(dir, "etcd");
  const absent = [kubeApiserver, etcd].filter((p) => !executable(p));
  if (absent.length === 0) return { found: { kubeApiserver, etcd } };
  return {
    missing:
      `no ${absent.join(" or ")} (${where}); run \`make kube\` (needs Go >= 1.26) ` +
      `or set KUBEBUILDER_ASSETS to a directory with kube-apiserver and etcd`,
  };
}

const lookup = findKubeBinaries();

// CI sets VGATE_REQUIRE_KUBE=1 after make kube: there a cluster test that skips is a failure.
if ("missing" in lookup && process.env["VGATE_REQUIRE_KUBE"] === "1") {
  throw new Error(`VGATE_REQUIRE_KUBE=1, but the cluster tests cannot run: ${lookup.missing}`);
}

/** Whether the cluster tests can run here. */
export const HAVE_KUBE = "found" in lookup;

/** Test-name suffix saying why cluster tests are skipped, and how to get the binaries. */
export const KUBE_SKIP_REASON = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";

/** The binaries; throws with the same reason when they are missing. */
export function kubeBinaries(): KubeBinaries {
  if ("found" in lookup) return lookup.found;
  throw new Error(lookup.missing);
}
