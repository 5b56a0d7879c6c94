// Where vCluster's Go module source is: the version test/kube/vcluster's wrapper module pins
// (test/kube/versions.env), in the Go module cache that `make kube` fills. Tests read its chart
// schema, values and example configs as facts; nothing is downloaded here (GOPROXY=off).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";
import { findWrapperModule, type ModuleLookup } from "../kube/wrapper-module.js";

export type { ModuleLookup };

export const VCLUSTER_MODULE = "github.com/loft-sh/vcluster";

/** `go list -m` in the wrapper module, read-only and offline. */
export function findVClusterModule(env: NodeJS.ProcessEnv = process.env): ModuleLookup {
  return findWrapperModule("vcluster", VCLUSTER_MODULE, "chart/values.schema.json", env);
}

/** A key of test/kube/versions.env. */
function pinned(key: string): string {
  const text = readFileSync(join(repoRoot, "test/kube/versions.env"), "utf8");
  const m = new RegExp(`^${key}=(\\S+)$`, "m").exec(text);
  if (!m) throw new Error(`test/kube/versions.env has no ${key}`);
  return m[1]!;
}

/**
 * The newer vCluster module whose chart schema has the Gateway API kinds (VCLUSTER_SCHEMA_VERSION
 * of test/kube/versions.env), from the Go module cache that make kube fills
 * (test/kube/fetch-vcluster-schema.sh): `go mod download -json` offline (GOPROXY=off), outside any
 * module; missing, saying why, unless it is there with the hash versions.env pins.
 */
export function findVClusterSchemaModule(env: NodeJS.ProcessEnv = process.env): ModuleLookup {
  const version = pinned("VCLUSTER_SCHEMA_VERSION");
  const module = `${VCLUSTER_MODULE}@${version}`;
  const gos = existsSync("/usr/local/go/bin/go") ? ["go", "/usr/local/go/bin/go"] : ["go"];
  const download = (go: string) =>
    spawnSync(go, ["mod", "download", "-json", module], {
      cwd: tmpdir(),
      encoding: "utf8",
      env: { ...env, GOTOOLCHAIN: "local", GOFLAGS: "", GOPROXY: "off", GO111MODULE: "on" },
      timeout: 60_000,
    });
  let r = download(gos[0]!);
  if (r.error && gos[1]) r = download(gos[1]);
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return {
      missing: code === "ENOENT" ? "Go is not installed" : `go mod download failed: ${code}`,
    };
  }
  let info: { Dir?: string; Sum?: string; Error?: string } = {};
  try {
    info = JSON.parse(r.stdout) as typeof info;
  } catch {
    return { missing: `go mod download -json ${module} printed no JSON (exit ${r.status})` };
  }
  if (info.Error !== undefined || info.Dir === undefined) {
    return { missing: `${module} is not in the Go module cache; run \`make kube\`` };
  }
  const sum = pinned("VCLUSTER_SCHEMA_SUM");
  if (info.Sum !== sum) {
    return { missing: `${module} in the module cache has hash ${info.Sum}, not ${sum}` };
  }
  if (!existsSync(join(info.Dir, "chart/values.schema.json"))) {
    return { missing: `${module} has no chart/values.schema.json` };
  }
  return { found: { dir: info.Dir, version } };
}
