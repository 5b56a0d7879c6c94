// The test rig of `vgate sync`: two real control planes, one playing the virtual cluster and one
// the host (test/support/kube/control-plane.ts; each with its own etcd), with vgate sync's RBAC
// applied from manifests/sync/ exactly as an install applies it, and `vgate sync` processes that
// run with service-account tokens of those identities (so the controller has exactly the rights a
// real install gives it). Each process runs under the supervisor, on free loopback ports for its
// probes and metrics, its log in the rig's directory; it can be stopped (SIGTERM) or killed
// (SIGKILL, as a node failure would).

import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { repoFile, repoRoot } from "./fixtures.js";
import { startControlPlane, type ControlPlane } from "./kube/control-plane.js";
import type { KubeObject, KubeTestClient } from "./kube/kube-client.js";
import { freePort, supervise, waitUntil, type Supervised } from "./kube/processes.js";
import { waitForAccess } from "./kube/rbac.js";

/** The virtual cluster's name and host namespace that manifests/sync/ is written for. */
export const MANIFEST_VCLUSTER = { name: "my-vcluster", namespace: "vcluster-my-vcluster" };
/** vgate sync's identity in each cluster (manifests/sync/). */
export const SYNC_SERVICE_ACCOUNT = "vgate-sync";
const VIRTUAL_SA_NAMESPACE = "kube-system";

export interface SyncRigOptions {
  /** --vcluster-name and --vcluster-namespace; manifests/sync/'s own unless set. */
  vcluster?: { name: string; namespace: string };
}

export interface SyncProcessOptions {
  /** A label for the log file and error messages. */
  name: string;
  /** The config file (SyncRig.writeConfig). */
  config: string;
  /** More flags, after the rig's. */
  args?: readonly string[];
  /** Another host identity and vCluster (SyncRig.hostIdentity) instead of the rig's own. */
  host?: { kubeconfig: string; vcluster: { name: string; namespace: string } };
}

export interface SyncProcess {
  readonly name: string;
  readonly logFile: string;
  /** http://127.0.0.1:PORT of --health-probe-bind-address. */
  readonly probeUrl: string;
  /** http://127.0.0.1:PORT of --metrics-bind-address. */
  readonly metricsUrl: string;
  exited(): boolean;
  /** The vgate process's pid (not its supervisor's); null once it is gone. */
  pid(): number | null;
  /** Resolves once /readyz answers 200; fails early (with the log's end) if the process exits. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** GET of a probe or metrics path: the status and body, or status 0 when nothing answers. */
  get(path: "/healthz" | "/readyz" | "/metrics"): Promise<{ status: number; text: string }>;
  /** The whole log so far. */
  log(): Promise<string>;
  /** Sends `signal` to the vgate process itself and resolves once it is gone. */
  kill(signal: "SIGKILL" | "SIGTERM"): Promise<void>;
  /** SIGTERM (SIGKILL after the supervisor's grace period); resolves once it is gone. */
  stop(): Promise<void>;
  /** How the vgate process ended: its exit status (128 when a signal ended it), null while it runs. */
  exitCode(): number | null;
}

export interface SyncRig {
  virtual: ControlPlane;
  host: ControlPlane;
  vcluster: { name: string; namespace: string };
  /** The rig's directory: kubeconfigs, configs, logs. */
  dir: string;
  /** Kubeconfigs of vgate sync's service accounts (manifests/sync/). */
  virtualKubeconfig: string;
  hostKubeconfig: string;
  /**
   * Applies another host RBAC file of manifests/sync/ for `vcluster` (as the rig's own: its
   * namespace made vcluster.namespace, every rule granted); returns its service account's
   * kubeconfig, for SyncProcessOptions.host.
   */
  hostIdentity(file: string, vcluster: { name: string; namespace: string }): Promise<string>;
  /** Writes `content` to `file` in the rig's directory (replacing it); returns its path. */
  writeConfig(file: string, content: string): Promise<string>;
  /** Starts `vgate sync` with the rig's kubeconfigs and vCluster, and free probe/metrics ports. */
  startSync(opts: SyncProcessOptions): Promise<SyncProcess>;
  /** Every process startSync started, in order. */
  processes(): SyncProcess[];
  stop(): Promise<void>;
}

export async function startSyncRig(opts: SyncRigOptions = {}): Promise<SyncRig> {
  const vcluster = opts.vcluster ?? MANIFEST_VCLUSTER;
  const dir = await mkdtemp(join(tmpdir(), "vgate-sync-rig-"));
  const started = await Promise.allSettled([startControlPlane(), startControlPlane()]);
  const planes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    await Promise.all(planes.map((p) => p.stop()));
    await rm(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const [virtual, host] = planes as [ControlPlane, ControlPlane];
  const processes = new Set<SyncProcess>();
  try {
    const [virtualKubeconfig, hostKubeconfig] = await Promise.all([
      installIdentity(virtual, "manifests/sync/rbac-virtual.yaml", vcluster, VIRTUAL_SA_NAMESPACE),
      installIdentity(host, "manifests/sync/rbac-host.yaml", vcluster, vcluster.namespace),
    ]);
    const rig: SyncRig = {
      virtual,
      host,
      vcluster,
      dir,
      virtualKubeconfig,
      hostKubeconfig,
      hostIdentity: (file, vc) => installIdentity(host, file, vc, vc.namespace),
      writeConfig: async (file, content) => {
        const path = join(dir, file);
        await writeFile(path, content);
        return path;
      },
      startSync: async (procOpts) => {
        const proc = await startSyncProcess(rig, procOpts);
        processes.add(proc);
        return proc;
      },
      processes: () => [...processes],
      stop: async () => {
        await Promise.all([...processes].map((p) => p.stop()));
        await Promise.all([virtual.stop(), host.stop()]);
        // VGATE_SYNC_RIG_KEEP=1 keeps the configs and controller logs for a look after the run.
        if (process.env["VGATE_SYNC_RIG_KEEP"] === "1") console.error(`sync rig kept: ${dir}`);
        else await rm(dir, { recursive: true, force: true });
      },
    };
    return rig;
  } catch (err) {
    await Promise.all([virtual.stop(), host.stop()]);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Applies a manifests/sync/ file (its namespace made the rig's vCluster namespace), waits until
 * RBAC grants every rule in it, and returns a kubeconfig with a bound token of its service account.
 */
async function installIdentity(
  plane: ControlPlane,
  file: string,
  vcluster: { namespace: string },
  saNamespace: string,
): Promise<string> {
  const objects = manifestObjects(file, (text) =>
    text.replaceAll(MANIFEST_VCLUSTER.namespace, vcluster.namespace),
  );
  await plane.admin.apply({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: saNamespace },
  });
  for (const obj of objects) await plane.admin.apply(obj);
  const user = `system:serviceaccount:${saNamespace}:${SYNC_SERVICE_ACCOUNT}`;
  for (const role of objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole")) {
    await rulesGranted(plane.admin, user, role);
  }
  const token = await plane.serviceAccountToken(saNamespace, SYNC_SERVICE_ACCOUNT);
  return plane.tokenKubeconfig(token, `vgate-sync-${saNamespace}`);
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
}

/** Waits until the API server's RBAC allows `user` every verb on every resource of `role`. */
async function rulesGranted(admin: KubeTestClient, user: string, role: KubeObject): Promise<void> {
  const namespace = role.metadata.namespace ?? "default";
  const groups = ["system:serviceaccounts", "system:authenticated"];
  for (const rule of (role["rules"] as Rule[] | undefined) ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        const resourceAttributes = { group: rule.apiGroups?.[0] ?? "", resource, verb, namespace };
        await waitForAccess(admin, { user, groups, resourceAttributes }, true);
      }
    }
  }
}

export function manifestObjects(file: string, rewrite: (text: string) => string): KubeObject[] {
  return parseAllDocuments(rewrite(repoFile(file)))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => Boolean(o));
}

async function startSyncProcess(rig: SyncRig, opts: SyncProcessOptions): Promise<SyncProcess> {
  const [probePort, metricsPort] = [await freePort(), await freePort()];
  const logFile = join(rig.dir, `${opts.name}-${Date.now()}.log`);
  const host = opts.host ?? { kubeconfig: rig.hostKubeconfig, vcluster: rig.vcluster };
  const proc = supervise(
    `vgate sync (${opts.name})`,
    resolve(repoRoot, "webhook/bin/vgate"),
    [
      "sync",
      `--config=${opts.config}`,
      `--virtual-kubeconfig=${rig.virtualKubeconfig}`,
      `--host-kubeconfig=${host.kubeconfig}`,
      `--vcluster-name=${host.vcluster.name}`,
      `--vcluster-namespace=${host.vcluster.namespace}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      ...(opts.args ?? []),
    ],
    logFile,
    // No ambient kubeconfig: the flags are the only way to a cluster.
    { env: { ...process.env, KUBECONFIG: "" } },
  );
  return syncProcess(opts.name, proc, probePort, metricsPort);
}

function syncProcess(
  name: string,
  proc: Supervised,
  probePort: number,
  metricsPort: number,
): SyncProcess {
  const probeUrl = `http://127.0.0.1:${probePort}`;
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const get = (path: "/healthz" | "/readyz" | "/metrics") =>
    httpGet(`${path === "/metrics" ? metricsUrl : probeUrl}${path}`);
  const gone = new Promise<void>((r) => {
    if (proc.exited()) r();
    else proc.child.once("exit", () => r());
  });
  let exitCode: number | null = null;
  proc.child.once("exit", (code) => (exitCode = code));
  return {
    name,
    logFile: proc.logFile,
    probeUrl,
    metricsUrl,
    exited: () => proc.exited(),
    pid: () => childPid(proc),
    waitReady: (timeoutMs = 30_000) =>
      waitUntil("/readyz", proc, async () => (await get("/readyz")).status === 200, timeoutMs),
    get,
    log: () => readFile(proc.logFile, "utf8").catch(() => ""),
    kill: async (signal) => {
      const pid = childPid(proc);
      proc.child.ref();
      if (pid !== null) process.kill(pid, signal);
      else if (!proc.exited()) throw new Error(`${proc.name}: no vgate process to ${signal}`);
      await gone;
    },
    stop: () => proc.stop(),
    exitCode: () => exitCode,
  };
}

/** The supervisor's child: the vgate process itself (Linux /proc). */
function childPid(proc: Supervised): number | null {
  const pid = proc.child.pid;
  if (pid === undefined || proc.exited()) return null;
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    const first = children.split(/\s+/)[0];
    return first ? Number(first) : null;
  } catch {
    return null;
  }
}

function httpGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", () => resolve({ status: 0, text: "" }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve({ status: 0, text: "" }));
    req.end();
  });
}
