// The real kubectl as a subprocess. Always asynchronous, so a test's own servers (vgate, a fault
// proxy) keep answering while kubectl waits on them.

import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

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
    .some((dir) => {
      try {
        accessSync(join(dir, "kubectl"), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

export const HAVE_KUBECTL = kubectlOnPath();

/** Test-name suffix saying why kubectl tests are skipped. */
export const KUBECTL_SKIP_REASON = HAVE_KUBECTL ? "" : " (skipped: kubectl is not on PATH)";

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
        "kubectl",
        ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir, ...args],
        { timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
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
