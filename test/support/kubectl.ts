// The real kubectl as a subprocess. Always asynchronous, so a test's own servers (vgate, a fault
// proxy) keep answering while kubectl waits on them.
//
// Which kubectl (docs/decisions.md ARCH-40): the one of the cluster's own version, which `make kube`
// builds from the Go module proxy (test/kube/build-kubectl.sh), looked up as envtest looks up its
// assets: TEST_ASSET_KUBECTL, then KUBEBUILDER_ASSETS/kubectl, then the make kube cache. Tests that
// compare the plugin with kubectl (parity, plugin discovery, completion) need that one
// (HAVE_KUBECTL) and skip without it, saying to run make kube; CI (VGATE_REQUIRE_KUBE=1, or
// VGATE_REQUIRE_NODE=1) fails instead. Tests that only use kubectl as a tool (kustomize, apply, the
// README's blocks) take any kubectl (HAVE_ANY_KUBECTL): the matching one when there is one, since
// mocha-root.ts puts it first on PATH for the whole run, else the one on PATH.

import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { executable, findKubeBinaries, kubeCacheDir, kubeVersions } from "./kube/binaries.js";

export interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Whether `kubectl` is an executable on PATH (looked up without running anything). */
export function kubectlOnPath(path = process.env["PATH"] ?? ""): boolean {
  return path
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => executable(join(dir, "kubectl")));
}

/** `v1.36` of `v1.36.3`, `Kubernetes v1.36.3` or `v1.36.3-dispatcher`. */
function minorOf(version: string): string | undefined {
  return /v(\d+\.\d+)\./.exec(version)?.[1];
}

/** The version kubectl says it is (`kubectl version --client -o json`), or why it cannot say. */
function clientVersion(kubectl: string): string {
  try {
    const out = execFileSync(kubectl, ["version", "--client", "-o", "json"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const parsed = JSON.parse(out) as { clientVersion?: { gitVersion?: unknown } };
    const v = parsed.clientVersion?.gitVersion;
    return typeof v === "string" ? v : "an unknown version";
  } catch {
    return "an unknown version (kubectl version --client failed)";
  }
}

/** The test rig's Kubernetes version: KUBE_VERSION, or what a kube-apiserver given by env says. */
function clusterVersion(env: NodeJS.ProcessEnv): string {
  const kube = findKubeBinaries(env);
  if (!env["KUBEBUILDER_ASSETS"] && !env["TEST_ASSET_KUBE_APISERVER"]) return kubeVersions().kube;
  if (!("found" in kube)) return kubeVersions().kube;
  try {
    return execFileSync(kube.found.kubeApiserver, ["--version"], {
      encoding: "utf8",
      timeout: 10_000,
    }).trim();
  } catch {
    return kubeVersions().kube;
  }
}

export type KubectlLookup = { found: string; version: string } | { missing: string };

/** The kubectl of the test rig's Kubernetes version, or why there is none. */
export function findMatchingKubectl(env: NodeJS.ProcessEnv = process.env): KubectlLookup {
  const candidates: [string, string][] = [];
  if (env["TEST_ASSET_KUBECTL"]) candidates.push([env["TEST_ASSET_KUBECTL"], "TEST_ASSET_KUBECTL"]);
  if (env["KUBEBUILDER_ASSETS"])
    candidates.push([join(env["KUBEBUILDER_ASSETS"], "kubectl"), "KUBEBUILDER_ASSETS"]);
  candidates.push([join(kubeCacheDir(env), "kubectl"), "the make kube cache"]);
  const found = candidates.find(([path]) => executable(path));
  const cluster = clusterVersion(env);
  if (!found) {
    const where = candidates.map(([path]) => path).join(" or ");
    return { missing: `no kubectl ${cluster} to compare with (${where}); run \`make kube\`` };
  }
  const [path, where] = found;
  const version = clientVersion(path);
  if (minorOf(version) !== undefined && minorOf(version) === minorOf(cluster)) {
    return { found: path, version };
  }
  return {
    missing:
      `${path} (${where}) is kubectl ${version}, the cluster is ${cluster}; ` +
      `run \`make kube\`, or point TEST_ASSET_KUBECTL at a kubectl of the cluster's version`,
  };
}

const lookup = findMatchingKubectl();

// CI sets VGATE_REQUIRE_KUBE=1 (make test) and VGATE_REQUIRE_NODE=1 (make test-cluster) after make
// kube: there a parity test that skips is a failure, not a pass.
const required = ["VGATE_REQUIRE_KUBE", "VGATE_REQUIRE_NODE"].find((v) => process.env[v] === "1");
if (required && "missing" in lookup) {
  throw new Error(`${required}=1, but the kubectl parity tests cannot run: ${lookup.missing}`);
}

/** The kubectl of the cluster's version (make kube's), or undefined. */
export const MATCHING_KUBECTL = "found" in lookup ? lookup.found : undefined;

/** Whether kubectl of the cluster's version is here: parity, plugin discovery, completion. */
export const HAVE_KUBECTL = MATCHING_KUBECTL !== undefined;

/** Test-name suffix saying why kubectl parity tests are skipped, and how to get kubectl. */
export const KUBECTL_SKIP_REASON = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";

/** Whether some kubectl is here to use as a tool: the matching one, else one on PATH. */
export const HAVE_ANY_KUBECTL = HAVE_KUBECTL || kubectlOnPath();

/** Test-name suffix saying why tests that use kubectl as a tool are skipped. */
export const ANY_KUBECTL_SKIP_REASON = HAVE_ANY_KUBECTL
  ? ""
  : " (skipped: kubectl is not on PATH; `make kube` builds one)";

/** What tests run as `kubectl`: the matching kubectl when there is one, else PATH's. */
export const KUBECTL_COMMAND = MATCHING_KUBECTL ?? "kubectl";

/**
 * Puts the matching kubectl first on this process's PATH, so every child that runs `kubectl` (the
 * plugin's discovery, make targets, the README's blocks as a user types them) runs it: a directory
 * holding only a link named kubectl, removed when the process exits. Without a matching kubectl,
 * PATH stays as it is. Called once per mocha process by mocha-root.ts.
 */
export function putMatchingKubectlFirstOnPath(): void {
  if (!MATCHING_KUBECTL) return;
  const dir = mkdtempSync(join(tmpdir(), "vgate-kubectl-path-"));
  symlinkSync(resolve(MATCHING_KUBECTL), join(dir, "kubectl"));
  process.env["PATH"] = `${dir}${delimiter}${process.env["PATH"] ?? ""}`;
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
}

export interface KubectlOptions {
  /** Written to kubectl's stdin (for `-f -`). */
  input?: string;
}

/** kubectl bound to one kubeconfig and a discovery cache of its own. */
export interface Kubectl {
  (args: readonly string[], opts?: KubectlOptions): Promise<KubectlRun>;
}

/**
 * Runs `kubectl --kubeconfig <kubeconfig> --cache-dir <cacheDir> <args>`; never rejects, the exit
 * code is in the result. Test clusters' ports are reused between runs, so a shared discovery cache
 * could describe another server.
 */
export function kubectlFor(kubeconfig: string, cacheDir: string): Kubectl {
  return (args, opts = {}) =>
    new Promise((resolve) => {
      const child = execFile(
        KUBECTL_COMMAND,
        ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir, ...args],
        { timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      // kubectl that exits before reading its stdin (most commands never read it) closes the
      // pipe: the write then fails with EPIPE, which says nothing the exit code does not.
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(opts.input ?? "");
    });
}

/** kubectl's table output as rows of cells (columns are separated by 3 or more spaces). */
export function tableRows(stdout: string): string[][] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s{3,}/));
}

/** A manifest for `kubectl ... -f -`: JSON is YAML. */
export function stdinManifest(obj: unknown): KubectlOptions {
  return { input: JSON.stringify(obj) };
}
