// Finds the credentials vgate uses to talk to kube-apiserver. The order follows client-go's
// loading rules for a server process: an explicit --kubeconfig, then $KUBECONFIG (a list of files
// merged in order, the first file's current-context winning), then the pod's service account.

import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { cannotRead, fileErrorReason } from "./file-error.js";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { isIPv6 } from "node:net";
import { ClientConfig as KubeConfig } from "./client-config.js";
import { KubeconfigContentError } from "./kubeconfig-document.js";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface LoadKubeConfigOptions {
  /** An explicit kubeconfig path (the --kubeconfig flag). */
  kubeconfig?: string;
  /** Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** When no configuration is found, answer null instead of failing. */
  allowMissing?: boolean;
  /** Where the in-cluster service-account token and CA live; tests point it elsewhere. */
  serviceAccountDir?: string;
  /**
   * Skip the check that the current context exists (the kubectl plugin applies --context,
   * --cluster and --server first, and checks afterwards).
   */
  unchecked?: boolean;
  /**
   * kubectl's loading rules for a command a person runs (vgate certs): the files of $KUBECONFIG
   * that exist, else ~/.kube/config when it exists, then in-cluster.
   */
  kubectlDefaults?: boolean;
}

/**
 * A kubeconfig that cannot be found, read or used. Carries the file name in its message, and the
 * line and field when the text is at fault; never the file's content.
 */
export class KubeConfigError extends Error {
  override readonly name = "KubeConfigError";
}

export const NO_KUBECONFIG_MESSAGE =
  "no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster";

/** When kubectl's rules find nothing. */
export const NO_KUBECTL_KUBECONFIG_MESSAGE =
  "no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config as for kubectl (or run in a cluster)";

export async function loadKubeConfig(opts: LoadKubeConfigOptions = {}): Promise<KubeConfig | null> {
  const env = opts.env ?? process.env;
  const files = opts.kubectlDefaults
    ? kubectlKubeconfigFiles(opts.kubeconfig, env)
    : kubeconfigFiles(opts.kubeconfig, env);
  if (files.length > 0) return loadFiles(files, opts.unchecked ?? false);
  const inCluster = inClusterConfig(env, opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  if (inCluster) return inCluster;
  if (opts.allowMissing) return null;
  if (opts.kubectlDefaults && env["KUBECONFIG"])
    throw new KubeConfigError(
      `no file named in KUBECONFIG exists (${env["KUBECONFIG"]}): fix KUBECONFIG, or pass --kubeconfig`,
    );
  throw new KubeConfigError(
    opts.kubectlDefaults ? NO_KUBECTL_KUBECONFIG_MESSAGE : NO_KUBECONFIG_MESSAGE,
  );
}

/**
 * client-go's default loading rules (clientcmd.NewDefaultClientConfigLoadingRules), as kubectl
 * reads them: an explicit path alone (it must exist); else the files of $KUBECONFIG, skipping
 * those that do not exist; else ~/.kube/config ($HOME's) when it exists. $KUBECONFIG, when set,
 * replaces ~/.kube/config even if none of its files exists.
 */
export function kubectlKubeconfigFiles(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
): string[] {
  if (explicit) return [explicit];
  if (env["KUBECONFIG"]) return kubeconfigFiles(undefined, env).filter((f) => existsSync(f));
  const home = join(env["HOME"] || homedir(), ".kube", "config");
  return existsSync(home) ? [home] : [];
}

/** The files to read: the explicit path alone, else every non-empty entry of $KUBECONFIG. */
export function kubeconfigFiles(explicit: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (explicit) return [explicit];
  const list = env["KUBECONFIG"] ?? "";
  return list.split(delimiter).filter((file) => file !== "");
}

async function loadFiles(files: readonly string[], unchecked: boolean): Promise<KubeConfig> {
  const [first, ...rest] = files;
  const kc = await loadFile(first!);
  for (const file of rest) mergeFirstWins(kc, await loadFile(file));
  return unchecked ? kc : checkUsable(kc, files.join(delimiter));
}

/**
 * client-go's merge of $KUBECONFIG: "the first file to set a particular map key wins", and the
 * first current-context set wins. (client-node's mergeConfig throws on duplicates instead.)
 */
function mergeFirstWins(into: KubeConfig, from: KubeConfig): void {
  const has = (list: readonly { name: string }[], name: string) =>
    list.some((e) => e.name === name);
  for (const c of from.clusters) if (!has(into.clusters, c.name)) into.clusters.push(c);
  for (const u of from.users) if (!has(into.users, u.name)) into.users.push(u);
  for (const c of from.contexts) if (!has(into.contexts, c.name)) into.contexts.push(c);
  if (!into.currentContext) into.currentContext = from.currentContext;
}

async function loadFile(file: string): Promise<KubeConfig> {
  let content: string;
  try {
    content = await readFile(file, "utf8");
  } catch (err) {
    throw new KubeConfigError(cannotRead(`kubeconfig ${JSON.stringify(file)}`, err), {
      cause: err,
    });
  }
  const kc = new KubeConfig();
  const where = `kubeconfig ${JSON.stringify(file)}`;
  try {
    kc.loadFromString(content);
    kc.makePathsAbsolute(dirname(file));
  } catch (err) {
    // Never the parser's own message: it quotes the line, token and all (docs/decisions.md OAK-32).
    if (err instanceof KubeconfigContentError)
      throw new KubeConfigError(`cannot parse ${where}: ${err.message}`, { cause: err });
    if (isFileError(err))
      throw new KubeConfigError(
        `cannot read ${JSON.stringify(err.path)}, named in ${where}: ${fileErrorReason(err)}`,
        { cause: err },
      );
    throw new KubeConfigError(`cannot parse ${where}: it is not a usable kubeconfig`, {
      cause: err,
    });
  }
  return kc;
}

/** Says what is missing without quoting the file's values (docs/decisions.md OAK-32). */
function checkUsable(kc: KubeConfig, source: string): KubeConfig {
  const where = `kubeconfig ${JSON.stringify(source)}`;
  if (!kc.getCurrentContext()) throw new KubeConfigError(`${where} has no current-context`);
  if (!kc.getContextObject(kc.getCurrentContext())) {
    throw new KubeConfigError(`${where}: its current-context names no context in contexts`);
  }
  if (!kc.getCurrentCluster()) {
    throw new KubeConfigError(`${where}: the current context names no known cluster`);
  }
  return kc;
}

/**
 * client-go's InClusterConfig: only when KUBERNETES_SERVICE_HOST/PORT are set and the pod has a
 * service-account token. The token is read through the tokenFile provider (client-config.ts),
 * which re-reads it every minute, so projected-token rotation keeps working.
 */
function inClusterConfig(env: NodeJS.ProcessEnv, saDir: string): KubeConfig | null {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  const tokenFile = join(saDir, "token");
  if (!host || !port || !existsSync(tokenFile)) return null;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    {
      name: "inCluster",
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      caFile: join(saDir, "ca.crt"),
      skipTLSVerify: false,
    },
    { name: "inClusterUser", authProvider: { name: "tokenFile", config: { tokenFile } } },
  );
  return kc;
}

/** A failed read of a file the kubeconfig names (token-file): Node's error, with its path. */
function isFileError(err: unknown): err is NodeJS.ErrnoException & { path: string; code: string } {
  const e = err as NodeJS.ErrnoException | null;
  return typeof e?.code === "string" && typeof e.path === "string" && typeof e.syscall === "string";
}
