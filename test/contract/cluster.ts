// The cluster the contract suite runs against. With VGATE_E2E=1 and KUBECONFIG set it is that
// cluster (its current context), where vgate, the CRD and the webhook configurations are already
// installed and the kubeconfig user is a cluster admin that may impersonate. Otherwise it is the
// test run's shared cluster: a real kube-apiserver and etcd with vgate installed from manifests/
// (test/support/cluster.ts).
//
// Other users are reached the way an admin reaches them on a real cluster: impersonation
// (Impersonate-User / Impersonate-Group headers, `kubectl --as --as-group`).

import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";
import type { RequestContext } from "@kubernetes/client-node";
import { DEFAULT_GROUP_DOMAIN } from "../../webhook/src/shared/ownedaccesskey.js";
import { sharedCluster } from "../support/cluster.js";

export interface ContractCluster {
  /** "test-rig" (the run's shared kube-apiserver), or "kubeconfig" for another cluster. */
  target: "test-rig" | "kubeconfig";
  /** An admin kubeconfig (one file, current context set), for client-node and kubectl. */
  kubeconfigPath: string;
  /** The OwnedAccessKey group: management.<group domain>. */
  group: string;
  /** A short random id; every name a test creates ends with it, so reruns never collide. */
  runId: string;
  /** client-node configuration of the admin. */
  admin(): KubeConfig;
  /** client-node configuration acting as `user` (at most one extra group, see below). */
  as(user: string, groups?: readonly string[]): KubeConfig;
  /** kubectl flags acting as `user` in `groups`. */
  kubectlAs(user: string, groups?: readonly string[]): string[];
  stop(): Promise<void>;
}

/** VGATE_E2E=1 with KUBECONFIG set selects a real cluster. */
export function wantsRealCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return env["VGATE_E2E"] === "1" && Boolean(env["KUBECONFIG"]);
}

export async function startContractCluster(): Promise<ContractCluster> {
  const runId = randomBytes(3).toString("hex");
  if (wantsRealCluster()) return realCluster(runId);
  const cluster = await sharedCluster();
  return contractCluster({
    target: "test-rig",
    kubeconfigPath: cluster.kubeconfigPath,
    group: cluster.group,
    runId,
    // The shared cluster outlives the suite; the run stops it.
    stop: async () => {},
  });
}

/**
 * KUBECONFIG may list several files; kubectl gets one merged file (client-node's view of the
 * current context) so both clients talk to the same cluster as the same user.
 */
async function realCluster(runId: string): Promise<ContractCluster> {
  const env = process.env["KUBECONFIG"] ?? "";
  const domain = process.env["VGATE_GROUP_DOMAIN"] || DEFAULT_GROUP_DOMAIN;
  const group = `management.${domain}`;
  if (!env.includes(delimiter)) {
    return contractCluster({
      target: "kubeconfig",
      kubeconfigPath: env,
      group,
      runId,
      stop: async () => {},
    });
  }
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const dir = await mkdtemp(join(tmpdir(), "vgate-contract-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  await writeFile(kubeconfigPath, kc.exportConfig(), { mode: 0o600 });
  return contractCluster({
    target: "kubeconfig",
    kubeconfigPath,
    group,
    runId,
    stop: () => rm(dir, { recursive: true, force: true }),
  });
}

type Base = Pick<ContractCluster, "target" | "kubeconfigPath" | "group" | "runId" | "stop">;

function contractCluster(base: Base): ContractCluster {
  const load = (): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromFile(base.kubeconfigPath);
    return kc;
  };
  return {
    ...base,
    admin: load,
    as: (user, groups = []) => impersonating(load(), user, groups),
    kubectlAs: (user, groups = []) => [`--as=${user}`, ...groups.map((g) => `--as-group=${g}`)],
  };
}

/**
 * client-node sends Impersonate-User for a kubeconfig user's `as` (impersonateUser), but knows no
 * groups; a subclass adds Impersonate-Group. Its generated clients copy headers as single strings,
 * so more than one group cannot be sent as separate header values: one is the limit.
 */
function impersonating(kc: KubeConfig, user: string, groups: readonly string[]): KubeConfig {
  if (groups.length > 1) throw new Error("client-node impersonation: at most one group");
  const out = new ImpersonatingKubeConfig(groups[0]);
  const current = kc.getCurrentUser();
  out.loadFromOptions({
    clusters: kc.getClusters(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
    users: kc
      .getUsers()
      .map((u): User => (u.name === current?.name ? { ...u, impersonateUser: user } : u)),
  });
  return out;
}

type HttpsOptions = Parameters<KubeConfig["applyToHTTPSOptions"]>[0];

class ImpersonatingKubeConfig extends KubeConfig {
  constructor(private readonly group: string | undefined) {
    super();
  }

  /** Generated API clients (CustomObjectsApi, ...). */
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    if (this.group) context.setHeaderParam("Impersonate-Group", this.group);
  }

  /** Watch and other fetch-based helpers go through here. */
  override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    if (this.group) opts.headers = { ...opts.headers, "Impersonate-Group": this.group };
  }
}
