// Where the Go module behind one of make kube's wrapper modules (test/kube/<wrapper>/) is: the
// version the wrapper pins, in the Go module cache that `make kube` fills. Tests read the module's
// files (charts, schemas, CRDs) as facts; nothing is downloaded here (GOPROXY=off).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";

export type ModuleLookup = { found: { dir: string; version: string } } | { missing: string };

/** Go as make kube finds it: on PATH, else where the official tarball puts it. */
const GO = existsSync("/usr/local/go/bin/go") ? ["go", "/usr/local/go/bin/go"] : ["go"];

/**
 * `go list -m module` in test/kube/<wrapper>, read-only and offline; missing unless the module's
 * directory holds `probe` (a file the caller needs).
 */
export function findWrapperModule(
  wrapper: string,
  module: string,
  probe: string,
  env: NodeJS.ProcessEnv = process.env,
): ModuleLookup {
  const list = (go: string) =>
    spawnSync(go, ["list", "-m", "-f", "{{.Dir}}\t{{.Version}}", module], {
      cwd: join(repoRoot, "test/kube", wrapper),
      encoding: "utf8",
      env: { ...env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly", GOPROXY: "off" },
      timeout: 60_000,
    });
  let r = list(GO[0]!);
  if (r.error && GO[1]) r = list(GO[1]);
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return { missing: code === "ENOENT" ? "Go is not installed" : `go list failed: ${code}` };
  }
  if (r.status !== 0) {
    const why = r.stderr.trim().split("\n")[0] ?? `exit status ${r.status}`;
    return { missing: `go list -m ${module} failed (${why}); run \`make kube\`` };
  }
  const [dir = "", version = ""] = r.stdout.trim().split("\t");
  if (dir === "" || !existsSync(join(dir, probe))) {
    return { missing: `${module}@${version} is not in the Go module cache; run \`make kube\`` };
  }
  return { found: { dir, version } };
}
