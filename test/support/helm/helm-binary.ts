// Where Helm is (make kube, or make helm, builds it into the kube cache from the Go module proxy:
// test/kube/build-helm.sh), and how the tests run it: with HELM_CACHE_HOME, HELM_CONFIG_HOME and
// HELM_DATA_HOME in a directory of the test's own, so no user's repositories, registry logins or
// plugins are read, and nothing is written outside it. The tests never add a repository or pull a
// chart: every chart is the local charts/vgate/.

import { execFile, execFileSync } from "node:child_process";
import { accessSync, constants, mkdirSync } from "node:fs";
import { join } from "node:path";
import { kubeCacheDir, kubeVersions } from "../kube/binaries.js";

export type HelmLookup = { found: { binary: string; version: string } } | { missing: string };

/** The helm binary of the kube cache, if it is there and of the version versions.env pins. */
export function findHelm(env: NodeJS.ProcessEnv = process.env): HelmLookup {
  const binary = join(kubeCacheDir(env), "helm");
  const want = kubeVersions().helm;
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    return { missing: `no ${binary}: run \`make helm\` (or make kube; needs Go >= 1.26)` };
  }
  let have: string;
  try {
    have = execFileSync(binary, ["version", "--template", "{{.Version}}"], {
      encoding: "utf8",
      timeout: 10_000,
      env: { PATH: env["PATH"] ?? "", HOME: "/nonexistent" },
    }).trim();
  } catch (err) {
    return { missing: `${binary} does not run (${(err as Error).message}): run \`make helm\`` };
  }
  if (have !== want) {
    return {
      missing: `${binary} is Helm ${have}, test/kube/versions.env pins ${want}: run \`make helm\``,
    };
  }
  return { found: { binary, version: have } };
}

const lookup = findHelm();

/** Whether the chart tests can run here. */
export const HAVE_HELM = "found" in lookup;

/** Test-name suffix saying why the chart tests are skipped, and what to do. */
export const HELM_SKIP_REASON = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";

/** Why Helm is missing, or undefined. */
export const HELM_MISSING = "missing" in lookup ? lookup.missing : undefined;

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs helm with `args`, its homes under `home` (made if missing) and only PATH, HOME and KUBECONFIG
 * from this process; never throws on a non-zero exit.
 */
export function helm(
  args: readonly string[],
  opts: { home: string; kubeconfig?: string; timeoutMs?: number },
): Promise<HelmResult> {
  if (!("found" in lookup)) throw new Error(lookup.missing);
  const binary = lookup.found.binary;
  const env = helmEnv(opts.home, opts.kubeconfig);
  return new Promise((resolve) => {
    execFile(
      binary,
      args,
      { env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr: err && !stderr ? err.message : stderr });
      },
    );
  });
}

/** The environment helm runs with: its three homes under `home`, nothing else of the user's. */
export function helmEnv(home: string, kubeconfig?: string): NodeJS.ProcessEnv {
  const dirs = {
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_DATA_HOME: join(home, "data"),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  return {
    PATH: process.env["PATH"] ?? "",
    HOME: home,
    ...dirs,
    // No kubeconfig of the user's: only the rig's, when given.
    KUBECONFIG: kubeconfig ?? join(home, "no-kubeconfig"),
  };
}

/** The helm binary's path; throws with the reason when it is missing. */
export function helmBinary(): string {
  if ("missing" in lookup) throw new Error(lookup.missing);
  return lookup.found.binary;
}
