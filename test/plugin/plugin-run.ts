// kubectl accesskey as a subprocess: plugin/bin/kubectl-accesskey run directly, or through kubectl's
// own plugin discovery with plugin/bin first on PATH. Always asynchronous, so servers of the test
// process (a fault proxy) keep answering while the plugin waits on them. The environment is clean:
// no KUBECONFIG, no in-cluster variables, and a HOME of its own (no ~/.kube/config).

import { execFile, spawnSync } from "node:child_process";
import { delimiter, join, resolve } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { processTempDir } from "../support/temp-dir.js";

export const PLUGIN_BIN_DIR = resolve(repoRoot, "plugin/bin");
export const PLUGIN = join(PLUGIN_BIN_DIR, "kubectl-accesskey");
/** make plugin-binary's single executable (Linux only), which the krew archive ships. */
export const SINGLE_BINARY = resolve(repoRoot, "plugin/dist/bin/kubectl-accesskey");

/** Whether fish is installed, for the tests of `completion fish` (skipped without it). */
export const HAVE_FISH = spawnSync("fish", ["--version"]).status === 0;

/**
 * Whether PowerShell (pwsh) is installed, for running `completion powershell` (skipped without it:
 * Debian has no package, and the npm package pwsh downloads PowerShell from GitHub at install).
 */
export const HAVE_PWSH = spawnSync("pwsh", ["-NoProfile", "-Command", "exit 0"]).status === 0;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** KUBECONFIG for the run (a path, or several joined with ':'). */
  kubeconfig?: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

const home = processTempDir("accesskey-home-");

export function pluginEnv(opts: RunOptions = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env["KUBECONFIG"];
  delete env["KUBERNETES_SERVICE_HOST"];
  delete env["KUBERNETES_SERVICE_PORT"];
  delete env["KUBE_EDITOR"];
  env["PATH"] = `${PLUGIN_BIN_DIR}${delimiter}${process.env["PATH"] ?? ""}`;
  if (opts.kubeconfig) env["KUBECONFIG"] = opts.kubeconfig;
  return { ...env, ...opts.env };
}

function exec(file: string, args: readonly string[], opts: RunOptions): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      file,
      [...args],
      { env: pluginEnv(opts), timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
    child.stdin?.end(opts.input ?? "");
  });
}

/** plugin/bin/kubectl-accesskey ARGS */
export function plugin(args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  return exec(PLUGIN, args, opts);
}

/** plugin/dist/bin/kubectl-accesskey ARGS: the single executable. */
export function singleBinary(args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  return exec(SINGLE_BINARY, args, opts);
}

/** kubectl ARGS, with plugin/bin first on PATH (`kubectl accesskey …` finds the plugin there). */
export function kubectl(args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  return exec("kubectl", args, opts);
}

/** `kubectl accesskey ARGS` with `kubeconfig`: the plugin as kubectl finds it on the PATH. */
export function accesskey(
  kubeconfig: string,
  args: readonly string[],
  opts: RunOptions = {},
): Promise<Run> {
  return kubectl(["accesskey", ...args], { kubeconfig, ...opts });
}

/**
 * A describe with its relative times ("(3s ago)", "(in 29d)") replaced: two runs of the same
 * describe may fall in different seconds.
 */
export function withoutAges(text: string): string {
  return text.replace(/ \((?:in \S+|\S+ ago)\)/g, " (age)");
}
