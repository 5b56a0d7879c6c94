// vgate's pods on the node rig as a user sees them, for the cluster tier: their status (restarts,
// why the last container ended), their /metrics through kube-apiserver's pod proxy, and their CPU
// and memory from the kubelet's stats summary (what `kubectl top` and the eviction manager read;
// this rig's kubelet takes them from cAdvisor on cgroup v1).

import { createHash, randomBytes } from "node:crypto";
import { request } from "node:https";
import type { KubeTestClient } from "../kube/kube-client.js";
import type { NodeRig } from "./node-rig.js";

export const VGATE_NAMESPACE = "vgate-system";
const SELECTOR = "app.kubernetes.io/name=vgate,app.kubernetes.io/component=webhook";

export interface VgatePod {
  name: string;
  uid: string;
  ip: string;
  ready: boolean;
  restarts: number;
  /** Why the container's previous run ended (OOMKilled, Error, …); undefined when it never did. */
  lastTermination: string | undefined;
}

interface PodList {
  items: {
    metadata: { name: string; uid: string; deletionTimestamp?: string };
    status: {
      phase?: string;
      podIP?: string;
      containerStatuses?: {
        ready: boolean;
        restartCount: number;
        lastState?: { terminated?: { reason?: string; exitCode?: number } };
      }[];
    };
  }[];
}

/** vgate's running pods (of the Deployment vgate-system/vgate), by name. */
export async function vgatePods(rig: NodeRig): Promise<VgatePod[]> {
  const res = await rig.admin.request<PodList>(
    "GET",
    `/api/v1/namespaces/${VGATE_NAMESPACE}/pods?labelSelector=${encodeURIComponent(SELECTOR)}`,
  );
  if (res.status !== 200) throw new Error(`listing vgate's pods: ${res.status}`);
  return res.body.items
    .filter((p) => p.status.phase === "Running" && !p.metadata.deletionTimestamp)
    .map((p) => {
      const c = p.status.containerStatuses?.[0];
      const t = c?.lastState?.terminated;
      return {
        name: p.metadata.name,
        uid: p.metadata.uid,
        ip: p.status.podIP ?? "",
        ready: c?.ready ?? false,
        restarts: c?.restartCount ?? 0,
        lastTermination: t ? `${t.reason ?? "?"} (exit code ${t.exitCode ?? "?"})` : undefined,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A pod's /metrics page, through kube-apiserver's pod proxy (as `kubectl get --raw` reads it). */
export async function podMetrics(rig: NodeRig, pod: string): Promise<string> {
  const res = await rig.admin.request<string>(
    "GET",
    `/api/v1/namespaces/${VGATE_NAMESPACE}/pods/https:${pod}:8443/proxy/metrics`,
    undefined,
    { Accept: "text/plain" },
  );
  if (res.status !== 200 || typeof res.body !== "string") {
    throw new Error(`${pod}'s /metrics: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  }
  return res.body;
}

/** One reading of a container's CPU and memory from the kubelet's stats summary. */
export interface ContainerUsage {
  pod: string;
  /** When the kubelet took the CPU figure (ms since the epoch; whole seconds). */
  cpuAt: number;
  /** CPU time used since the container started, in ns. */
  cpuNs: number;
  /** The kubelet's own rate over its last sampling period, in millicores. */
  millicores: number;
  /** What the kubelet evicts on and the memory limit is measured against (bytes). */
  workingSetBytes: number;
  rssBytes: number;
}

interface Summary {
  pods: {
    podRef: { name: string; namespace: string };
    containers?: {
      name: string;
      cpu?: { time: string; usageNanoCores?: number; usageCoreNanoSeconds?: number };
      memory?: { workingSetBytes?: number; rssBytes?: number };
    }[];
  }[];
}

/** The vgate container of each of vgate's pods, from /api/v1/nodes/<node>/proxy/stats/summary. */
export async function vgateUsage(rig: NodeRig): Promise<ContainerUsage[]> {
  return containerUsage(rig, VGATE_NAMESPACE, "vgate-", "vgate");
}

/** The container `container` of each pod in `namespace` named `prefix…`, from the kubelet. */
export async function containerUsage(
  rig: NodeRig,
  namespace: string,
  prefix: string,
  container: string,
): Promise<ContainerUsage[]> {
  const res = await rig.admin.request<Summary>(
    "GET",
    `/api/v1/nodes/${rig.nodeName}/proxy/stats/summary`,
  );
  if (res.status !== 200) throw new Error(`the kubelet's stats summary: ${res.status}`);
  const out: ContainerUsage[] = [];
  for (const p of res.body.pods) {
    if (p.podRef.namespace !== namespace || !p.podRef.name.startsWith(prefix)) continue;
    const c = p.containers?.find((x) => x.name === container);
    if (!c?.cpu || !c.memory) continue;
    out.push({
      pod: p.podRef.name,
      cpuAt: Date.parse(c.cpu.time),
      cpuNs: c.cpu.usageCoreNanoSeconds ?? 0,
      millicores: (c.cpu.usageNanoCores ?? 0) / 1e6,
      workingSetBytes: c.memory.workingSetBytes ?? 0,
      rssBytes: c.memory.rssBytes ?? 0,
    });
  }
  return out.sort((a, b) => a.pod.localeCompare(b.pod));
}

/** A pod's figures over a window of readings: mean CPU, and the highest memory seen. */
export interface UsageOverWindow {
  pod: string;
  /** CPU time used in the window over its length, in millicores. */
  millicores: number;
  /** The kubelet's highest own rate in the window, in millicores. */
  peakMillicores: number;
  peakWorkingSetBytes: number;
  peakRssBytes: number;
  seconds: number;
  readings: number;
}

/**
 * Folds readings (many vgateUsage() results over time) into one figure per pod. The mean CPU is
 * the difference of the cumulative CPU time between the first and the last reading over the time
 * between them, so it is exact however the kubelet samples.
 */
export function usageOverWindow(readings: readonly ContainerUsage[][]): UsageOverWindow[] {
  const byPod = new Map<string, ContainerUsage[]>();
  for (const r of readings.flat()) byPod.set(r.pod, [...(byPod.get(r.pod) ?? []), r]);
  return [...byPod.entries()].map(([pod, rs]) => {
    const first = rs[0]!;
    const last = rs[rs.length - 1]!;
    const ms = last.cpuAt - first.cpuAt;
    return {
      pod,
      millicores: ms > 0 ? (last.cpuNs - first.cpuNs) / 1e3 / ms : NaN,
      peakMillicores: Math.max(...rs.map((r) => r.millicores)),
      peakWorkingSetBytes: Math.max(...rs.map((r) => r.workingSetBytes)),
      peakRssBytes: Math.max(...rs.map((r) => r.rssBytes)),
      seconds: ms / 1000,
      readings: rs.length,
    };
  });
}

/** Reads vgateUsage() every `everyMs` until stop(); stop() returns every reading. */
export function sampleUsage(rig: NodeRig, everyMs = 2000): { stop(): Promise<ContainerUsage[][]> } {
  const readings: ContainerUsage[][] = [];
  let running = true;
  let failure: unknown;
  const loop = (async () => {
    while (running) {
      try {
        readings.push(await vgateUsage(rig));
      } catch (err) {
        failure ??= err;
      }
      // A sampler a failed test never stopped must not keep the test run alive.
      await new Promise((r) => setTimeout(r, everyMs).unref());
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      readings.push(await vgateUsage(rig));
      if (failure !== undefined) throw failure;
      return readings;
    },
  };
}

/** A token as `kubectl accesskey create` makes one, and the spec.key stored for it when hashed. */
export function hashedKey(): { token: string; stored: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, stored: `sha256:${createHash("sha256").update(token).digest("hex")}` };
}

/**
 * Creates OwnedAccessKeys `<prefix>-<i>` for i in [0, count) through kube-apiserver (vgate's
 * admission webhooks included), `inFlight` POSTs at a time, with hashed keys (the client hashes,
 * as the plugin does when vgate-info says hashed). Returns their tokens. Any answer but 201 stops.
 */
export async function createHashedKeys(
  admin: KubeTestClient,
  prefix: string,
  count: number,
  inFlight: number,
  user: (i: number) => string = (i) => `user-${i % 1000}`,
): Promise<string[]> {
  const tokens: string[] = new Array<string>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const { token, stored } = hashedKey();
      tokens[i] = token;
      const res = await admin.request("POST", "/apis/management.loft.sh/v1/ownedaccesskeys", {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: `${prefix}-${String(i).padStart(6, "0")}` },
        spec: { user: user(i), type: "User", key: stored },
      });
      if (res.status !== 201) {
        throw new Error(`creating ${prefix}-${i}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return tokens;
}

/** A TokenReview sent to one pod directly, as kube-apiserver sends it (with its client certificate). */
export async function podTokenReview(
  ip: string,
  token: string,
  tls: { ca: string; cert: string; key: string },
): Promise<{ authenticated: boolean; error?: string }> {
  const body = JSON.stringify({
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token },
  });
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      `https://${ip}:8443/authenticate`,
      {
        method: "POST",
        ...tls,
        // vgate's serving certificate names the Service, not the pod's address.
        servername: `vgate.${VGATE_NAMESPACE}.svc`,
        checkServerIdentity: () => undefined,
        headers: { "Content-Type": "application/json" },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`TokenReview to ${ip} timed out`)));
    req.on("error", reject);
    req.end(body);
  });
  const status = (JSON.parse(text) as { status?: { authenticated?: boolean; error?: string } })
    .status;
  return {
    authenticated: status?.authenticated === true,
    ...(status?.error ? { error: status.error } : {}),
  };
}
