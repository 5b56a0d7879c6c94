// Where vCluster's syncer is (make kube builds it into the kube cache from the wrapper module
// test/kube/vcluster/) and where its Go module's source is (the module cache make kube filled):
// the tests run the one and read the other's chart values and schema, never copying either.

import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";
import { kubeCacheDir } from "../kube/binaries.js";

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

/**
 * The module's directory in the Go module cache, asked of the go command in the wrapper module with
 * no network (GOPROXY=off): make kube has downloaded it, or it is not there.
 */
export function vclusterModuleDir(): { dir: string } | { missing: string } {
  const go = ["go", "/usr/local/go/bin/go"].find((g) => {
    try {
      execFileSync(g, ["version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  });
  if (!go) return { missing: "Go is not installed (the vCluster module comes from make kube)" };
  try {
    const dir = execFileSync(go, ["list", "-m", "-f", "{{.Dir}}", "github.com/loft-sh/vcluster"], {
      cwd: join(repoRoot, "test/kube/vcluster"),
      env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly", GOPROXY: "off" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
    if (dir && existsSync(join(dir, "chart", "values.yaml"))) return { dir };
    return { missing: "the vCluster module is not in the Go module cache: run `make kube`" };
  } catch {
    return { missing: "the vCluster module is not in the Go module cache: run `make kube`" };
  }
}

export function findVCluster(): { found: VClusterParts } | { missing: string } {
  const binary = join(kubeCacheDir(), "vcluster");
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    return { missing: `no ${binary}: run \`make kube\` (needs Go >= 1.26)` };
  }
  const mod = vclusterModuleDir();
  if ("missing" in mod) return mod;
  return { found: { binary, moduleDir: mod.dir, version: vclusterVersion() } };
}
