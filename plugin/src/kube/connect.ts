// The connection kubectl would make: the kubeconfig files (--kubeconfig, else every file of
// $KUBECONFIG merged, else ~/.kube/config, else in-cluster), then the command-line overrides
// (--context, --cluster, --user, --server, --token, --insecure-skip-tls-verify, --as, --as-group),
// as client-go's DeferredLoadingClientConfig applies them.

import { constants, existsSync } from "node:fs";
import { access, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import {
  ClientConfig,
  type Cluster,
  type User,
} from "../../../webhook/src/shared/client-config.js";
import { KubeConfigError, loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { KubeconfigError } from "./errors.js";
import {
  fileProblem,
  kubeconfigFix,
  systemErrorIn,
  systemErrorSentence,
} from "../os/system-errors.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export interface ConnectionFlags {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  cluster?: string | undefined;
  user?: string | undefined;
  server?: string | undefined;
  token?: string | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  as?: string | undefined;
  asGroups?: readonly string[] | undefined;
}

export interface Connection {
  config: ClientConfig;
  /** The API server's URL. */
  server: string;
  /** Impersonation headers. */
  headers: Record<string, string | string[]>;
}

export async function connect(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Connection> {
  const config = await loadConfig(flags, env);
  applyOverrides(config, flags);
  const cluster = config.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubeconfigError(
      "no configuration has been provided: pass --kubeconfig or --server, or set KUBECONFIG",
    );
  }
  const headers: Record<string, string | string[]> = {};
  if (flags.as) headers["Impersonate-User"] = flags.as;
  if (flags.asGroups?.length) {
    if (!flags.as)
      throw new KubeconfigError("requesting groups or user-extra for impersonation requires --as");
    headers["Impersonate-Group"] = [...flags.asGroups];
  }
  return { config, server: cluster.server, headers };
}

async function loadConfig(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Promise<ClientConfig> {
  let explicit = flags.kubeconfig;
  if (!explicit && env["KUBECONFIG"]) {
    // client-go skips the files of $KUBECONFIG that do not exist (an explicit --kubeconfig must).
    const files = env["KUBECONFIG"].split(delimiter).filter((f) => f !== "" && existsSync(f));
    env = { ...env, KUBECONFIG: files.join(delimiter) };
    if (files.length === 0) explicit = undefined;
  }
  if (!explicit && !env["KUBECONFIG"]) {
    const home = join(env["HOME"] ?? homedir(), ".kube", "config");
    if (existsSync(home)) explicit = home;
  }
  if (explicit) {
    const flag = flags.kubeconfig ? "--kubeconfig" : "~/.kube/config";
    await checkReadable(
      explicit,
      flag,
      flags.kubeconfig
        ? "give the path of a kubeconfig file, or leave --kubeconfig out to use $KUBECONFIG or ~/.kube/config"
        : "make it a kubeconfig file, or give --kubeconfig",
    );
  } else {
    for (const file of (env["KUBECONFIG"] ?? "").split(delimiter).filter((f) => f !== "")) {
      await checkReadable(
        file,
        "$KUBECONFIG:",
        `KUBECONFIG lists kubeconfig files, separated by "${delimiter}"`,
      );
    }
  }
  try {
    const kc = await loadKubeConfig({
      ...(explicit ? { kubeconfig: explicit } : {}),
      env,
      allowMissing: true,
      unchecked: true,
    });
    return kc ?? new ClientConfig();
  } catch (err) {
    if (!(err instanceof KubeConfigError)) throw err;
    // A file the kubeconfig names (certificate-authority, client-key, …) in words, not errno.
    const system = systemErrorIn(err.cause);
    if (system) {
      throw new KubeconfigError(
        `${systemErrorSentence(system)}, named in the kubeconfig; ${kubeconfigFix(system)}`,
      );
    }
    throw new KubeconfigError(err.message);
  }
}

/** A kubeconfig file that cannot be read, in a sentence: which, why, and what to do. */
async function checkReadable(file: string, source: string, todo: string): Promise<void> {
  const where = source.endsWith(":")
    ? `${JSON.stringify(file)} (in ${source.slice(0, -1)})`
    : `${source} ${JSON.stringify(file)}`;
  let problem: string | undefined;
  try {
    if ((await stat(file)).isDirectory()) problem = "it is a directory";
    else await access(file, constants.R_OK);
  } catch (err) {
    problem = fileProblem(err);
  }
  if (problem) throw new KubeconfigError(`cannot read ${where}: ${problem}; ${todo}`);
}

function applyOverrides(kc: ClientConfig, flags: ConnectionFlags): void {
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) {
      throw new KubeconfigError(`context was not found for specified context: ${flags.context}`);
    }
    kc.currentContext = flags.context;
  }
  const hasContext = kc.getContextObject(kc.currentContext) !== null;
  if (!hasContext) {
    if (kc.currentContext && !flags.server) {
      // The name is the file's current-context: not quoted (docs/decisions.md OAK-32).
      throw new KubeconfigError(
        "context was not found for the kubeconfig's current-context: give --context or --server",
      );
    }
    kc.currentContext = "kubectl-accesskey";
    kc.contexts.push({ name: kc.currentContext, cluster: "", user: "" });
  }
  const ctx = { ...kc.getContextObject(kc.currentContext)! };
  kc.contexts = kc.contexts.map((c) => (c.name === ctx.name ? ctx : c));
  if (flags.cluster) {
    if (!kc.clusters.some((c) => c.name === flags.cluster)) {
      throw new KubeconfigError(`cluster "${flags.cluster}" does not exist in the kubeconfig`);
    }
    ctx.cluster = flags.cluster;
  }
  if (flags.user) {
    if (!kc.users.some((u) => u.name === flags.user)) {
      throw new KubeconfigError(`auth info "${flags.user}" does not exist`);
    }
    ctx.user = flags.user;
  }
  overrideCluster(kc, ctx, flags);
  overrideUser(kc, ctx, flags);
}

function overrideCluster(kc: ClientConfig, ctx: { cluster: string }, flags: ConnectionFlags): void {
  if (!flags.server && !flags.insecureSkipTlsVerify) return;
  const current = kc.clusters.find((c) => c.name === ctx.cluster);
  const cluster: Mutable<Cluster> = current
    ? { ...current }
    : { name: "kubectl-accesskey-cluster", server: "", skipTLSVerify: false };
  if (flags.server) cluster.server = flags.server;
  if (flags.insecureSkipTlsVerify) {
    // client-go drops the CA when the flag is given: both together are refused by Go's TLS config.
    cluster.skipTLSVerify = true;
    delete cluster.caData;
    delete cluster.caFile;
  }
  cluster.name = `${cluster.name}+overrides`;
  kc.clusters.push(cluster);
  ctx.cluster = cluster.name;
}

function overrideUser(kc: ClientConfig, ctx: { user: string }, flags: ConnectionFlags): void {
  if (!flags.token) return;
  // A bearer token on the command line replaces the kubeconfig user's credentials.
  const user: User = { name: "kubectl-accesskey-token", token: flags.token };
  kc.users.push(user);
  ctx.user = user.name;
}
