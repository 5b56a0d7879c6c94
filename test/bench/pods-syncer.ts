// `make bench`, the last part: Pods through vgate's webhook, created on the host by vCluster's real
// syncer (v0.34, test/support/vcluster/), with vgate's patches against without, in the same run.
//
// One node rig (test/support/node/), vgate installed as the README's install block says with the
// `patches` component as manifests/README.md says (a Pod patch set like the docs': the
// nodeSelector and the annotations, each a whole map patched) and the virtual cluster's webhook
// for the changes the syncer brings back, then vCluster's syncer.
//
// Two arms, alternating (with, without, without, with, ...), BENCH_PODS_ROUNDS (3) rounds each:
// - with patches: vgate's webhooks for Pods registered, on the host (mutate.patches.<domain> in
//   vgate-ownedaccesskeys) and in the virtual cluster (vgate-patches-virtual);
// - without: both removed, the same vgate still running with the same config. Removing the
//   registration takes vgate out of the Pod's path and changes nothing else; a config without Pod
//   patches would not do (vgate answers 400 to a kind its config does not patch, and the webhook
//   fails closed), and a config change rolls vgate's pods between the arms.
// Each round creates BENCH_PODS (150) virtual Pods, BENCH_PODS_IN_FLIGHT (32) requests at a time,
// and a watch on the host namespace sees each host copy's ADDED. Throughput: N over the time from
// the first virtual create sent to the N-th host copy seen; latency of a Pod: its create sent to
// its host copy's ADDED. Then every virtual Pod is deleted and the round waits until neither side
// has one left. Before each round a probe Pod (not counted) must come out patched or not as the arm
// says, so an arm is measured only once kube-apiserver serves its webhook registration. The Pods
// cost the syncer and the host nothing beyond their creation: a nodeSelector no node matches and a
// schedulerName no scheduler serves keep them Pending, untouched by kube-scheduler and the kubelet,
// and without a service account token (automountServiceAccountToken: false) the syncer makes no
// token for them. Every host copy of a round is checked: in the "with" arm each must carry both
// patches, in the "without" arm neither; a wrong copy fails the bench (exit 1).
//
// Where the time goes, per round: kube-apiserver's histogram of its calls to vgate's webhooks
// (apiserver_admission_webhook_admission_duration_seconds, on both sides), vgate's own
// (vgate_admission_request_duration_seconds of its pods), and the CPU per Pod of the whole rig by
// process (every process in its network namespace, and vgate's pods by their cgroups), above the
// rig's idle CPU read for IDLE_MS before the round. The ratio of the rig's CPU per Pod bounds the
// throughput ratio where CPU is all that limits; on a machine shared with other work the measured
// ratio is lower still: the rig's pods (vgate) share one cgroup, weighed against each other process
// of the machine (kube-apiserver, etcd and the syncer run as plain processes), so vgate waits for a
// CPU far longer than it uses one.
//
// The syncer's host client is limited to 40 requests/s (burst 80) by default
// (VCLUSTER_PHYSICAL_CLIENT_QPS, pkg/setup/config/config.go): BENCH_PODS_SYNCER_QPS sets it (burst
// twice that). `make bench` runs both: 40, the syncer as users run it, where the limit caps both
// arms (with BENCH_PODS=800, so that the burst of 80 is a tenth of a round, not half of it); and
// 1000, where nothing but the machine does, so vgate's own cost shows in full.
//
// A report: exit 0 whether the target is met or not, 1 when a host copy is wrong. Skipped (exit 0)
// without root, the node rig's parts and images, or vCluster's syncer.

import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { performance } from "node:perf_hooks";
import { putMatchingKubectlFirstOnPath } from "../support/kubectl.js";
import type { KubeTestClient } from "../support/kube/kube-client.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate, type PatchesComponent } from "../support/node/vgate-install.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { installVirtualWebhook } from "../support/vcluster/virtual-webhook.js";
import { histogram, type SumAndCount } from "../support/prometheus-text.js";
import { medianOf, percentile, rangeOf } from "./latency-stats.js";
import { cpuMs } from "./process-cpu.js";
import { atLeast, recordSkipped, recordTarget } from "./targets.js";

const PODS = Math.max(10, Math.floor(Number(process.env["BENCH_PODS"]) || 150));
const ROUNDS = Math.max(1, Math.floor(Number(process.env["BENCH_PODS_ROUNDS"]) || 3));
const IN_FLIGHT = Math.max(1, Math.floor(Number(process.env["BENCH_PODS_IN_FLIGHT"]) || 32));
const SYNCER_QPS = Math.max(1, Math.floor(Number(process.env["BENCH_PODS_SYNCER_QPS"]) || 1000));
const TARGET_RATIO = 0.8;
const FIGURE = `host Pod creates/s by vCluster's syncer (${SYNCER_QPS} req/s), with vgate's Pod patches vs without`;
const ROUND_TIMEOUT_MS = 120_000 + PODS * 1000;
/** How long the rig's idle CPU is read before each round. */
const IDLE_MS = 3000;

const VC_NAME = "vc";
const HOST_NS = "vcluster-vc";
/** The virtual namespace the Pods are made in. */
const NS = "bench";
const OS = "kubernetes.io/os";
/**
 * The key the annotation patch adds. Not the kinds test's cluster-autoscaler safe-to-evict: the
 * syncer itself writes that one on every host Pod ("false" for a Pod without a controller,
 * pods/translate/translator.go), so a copy would look patched without vgate.
 */
const SYNCED_BY = "example.com/synced-by";
/** The virtual Pods' own nodeSelector: no node has this label. */
const NO_NODE = "bench.vgate.loft.sh/node";

// What a platform team writes for Pods (as in docs/patches.md): run on Linux nodes only, and say
// who synced them. A patch never creates a missing key, so each adds its key to the whole map.
const CONFIG = `sync:
  toHost:
    pods:
      patches:
        - path: spec.nodeSelector
          expression: '({...value, "${OS}": "linux"})'
        - path: metadata.annotations
          expression: '({...value, "${SYNCED_BY}": "vgate"})'
`;
const KINDS: PatchesComponent["kinds"] = [{ group: "", resource: "pods", status: true }];
const VIRTUAL_WEBHOOK = "vgate-patches-virtual";
const HOST_WEBHOOKS = "vgate-ownedaccesskeys";
const WEBHOOKS_PATH = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

type Arm = "with" | "without";
const ARMS: readonly Arm[] = ["with", "without"];
const ARM_NAME: Record<Arm, string> = { with: "with patches", without: "without" };

interface Pod {
  metadata: {
    name: string;
    namespace?: string;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  spec?: { nodeSelector?: Record<string, string> };
}

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---- The two arms: vgate's webhook registrations for Pods, there or not ----

interface Webhook {
  name: string;
  clientConfig: { service?: { path?: string } };
}
interface WebhookConfiguration {
  metadata: { name: string; resourceVersion?: string; uid?: string; [k: string]: unknown };
  webhooks: Webhook[];
}

async function must<T>(client: KubeTestClient, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> =
    method === "PATCH" ? { "Content-Type": "application/json-patch+json" } : {};
  const res = await client.request<T>(method, path, body, headers);
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  }
  return res.body;
}

/** Registers or removes vgate's webhooks for Pods on both sides, as saved at install. */
class Registrations {
  private constructor(
    private readonly rig: NodeRig,
    private readonly vc: VClusterRig,
    /** The host's patches webhook, as installed (caBundle included). */
    readonly hostHook: Webhook,
    /** The virtual cluster's configuration, as installed. */
    readonly virtualConfig: WebhookConfiguration,
  ) {}

  static async save(rig: NodeRig, vc: VClusterRig): Promise<Registrations> {
    const host = await must<WebhookConfiguration>(
      rig.admin,
      "GET",
      `${WEBHOOKS_PATH}/${HOST_WEBHOOKS}`,
    );
    const hook = host.webhooks.find((w) => w.clientConfig.service?.path === "/mutate/patches");
    if (!hook) throw new Error(`${HOST_WEBHOOKS} has no webhook at /mutate/patches`);
    const virtual = await must<WebhookConfiguration>(
      vc.virtual.admin,
      "GET",
      `${WEBHOOKS_PATH}/${VIRTUAL_WEBHOOK}`,
    );
    return new Registrations(rig, vc, hook, virtual);
  }

  async set(arm: Arm): Promise<void> {
    const host = await must<WebhookConfiguration>(
      this.rig.admin,
      "GET",
      `${WEBHOOKS_PATH}/${HOST_WEBHOOKS}`,
    );
    const at = host.webhooks.findIndex((w) => w.name === this.hostHook.name);
    if (arm === "with" && at < 0) {
      await must(this.rig.admin, "PATCH", `${WEBHOOKS_PATH}/${HOST_WEBHOOKS}`, [
        { op: "add", path: "/webhooks/-", value: this.hostHook },
      ]);
    }
    if (arm === "without" && at >= 0) {
      await must(this.rig.admin, "PATCH", `${WEBHOOKS_PATH}/${HOST_WEBHOOKS}`, [
        { op: "test", path: `/webhooks/${at}/name`, value: this.hostHook.name },
        { op: "remove", path: `/webhooks/${at}` },
      ]);
    }
    const v = this.vc.virtual.admin;
    const there = (await v.request("GET", `${WEBHOOKS_PATH}/${VIRTUAL_WEBHOOK}`)).status === 200;
    if (arm === "with" && !there) {
      const metadata = { ...this.virtualConfig.metadata };
      delete metadata.resourceVersion;
      delete metadata.uid;
      await must(v, "POST", WEBHOOKS_PATH, { ...this.virtualConfig, metadata });
    }
    if (arm === "without" && there) await must(v, "DELETE", `${WEBHOOKS_PATH}/${VIRTUAL_WEBHOOK}`);
  }
}

// ---- The Pods ----

function virtualPod(name: string, image: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS, labels: { app: "bench" } },
    spec: {
      schedulerName: "vgate-bench-no-scheduler",
      nodeSelector: { [NO_NODE]: "none" },
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: "main", image, imagePullPolicy: "Never", command: ["sleep", "3600"] }],
    },
  };
}

/** What is wrong with a host copy for `arm`; "" when nothing is. */
function copyProblem(pod: Pod, arm: Arm): string {
  const selector = pod.spec?.nodeSelector ?? {};
  const annotations = pod.metadata.annotations ?? {};
  if (selector[NO_NODE] !== "none")
    return `nodeSelector ${JSON.stringify(selector)}: not the Pod's`;
  const os = selector[OS];
  const by = annotations[SYNCED_BY];
  if (arm === "with" && (os !== "linux" || by !== "vgate")) {
    return `not patched: nodeSelector ${JSON.stringify(selector)}, ${SYNCED_BY}=${String(by)}`;
  }
  if (arm === "without" && (os !== undefined || by !== undefined)) {
    return `patched without the webhook: ${OS}=${String(os)}, ${SYNCED_BY}=${String(by)}`;
  }
  return "";
}

async function list(client: KubeTestClient, namespace: string) {
  const res = await client.request<{ metadata: { resourceVersion: string }; items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods`,
  );
  if (res.status !== 200) throw new Error(`list Pods in ${namespace}: ${res.status}`);
  return res.body;
}

/** The host copies of the bench's virtual Pods. */
const hostCopies = async (rig: NodeRig, vc: VClusterRig) =>
  (await list(rig.admin, HOST_NS)).items.filter((p) =>
    p.metadata.name.endsWith(vc.hostName(NS, "")),
  );

/** Deletes every virtual Pod of the bench and waits until neither side has one. */
async function clear(rig: NodeRig, vc: VClusterRig): Promise<void> {
  await must(vc.virtual.admin, "DELETE", `/api/v1/namespaces/${NS}/pods`);
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (;;) {
    const virtual = (await list(vc.virtual.admin, NS)).items.length;
    const host = (await hostCopies(rig, vc)).length;
    if (virtual === 0 && host === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`${virtual} virtual and ${host} host Pods left after deleting them all`);
    }
    await sleep(250);
  }
}

/** A virtual Pod whose host copy must come out as `arm` says, until it does (the registration). */
async function probe(rig: NodeRig, vc: VClusterRig, arm: Arm, image: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    const name = `probe-${attempt}`;
    await must(vc.virtual.admin, "POST", `/api/v1/namespaces/${NS}/pods`, virtualPod(name, image));
    let copy: Pod | undefined;
    while (!copy) {
      if (Date.now() > deadline) throw new Error(`no host copy of the probe Pod ${name}`);
      await sleep(100);
      const res = await rig.admin.request<Pod>(
        "GET",
        `/api/v1/namespaces/${HOST_NS}/pods/${vc.hostName(NS, name)}`,
      );
      if (res.status === 200) copy = res.body;
    }
    const problem = copyProblem(copy, arm);
    await clear(rig, vc);
    if (problem === "") return attempt;
    if (Date.now() > deadline) {
      throw new Error(`the probe Pod of the "${ARM_NAME[arm]}" arm, still: ${problem}`);
    }
    await sleep(500);
  }
}

// ---- What the webhooks did: kube-apiserver's own histogram of its calls to each ----

const ADMISSION = "apiserver_admission_webhook_admission_duration_seconds";

interface Calls {
  create: SumAndCount;
  update: SumAndCount;
  virtual: SumAndCount;
}

async function metricsPage(client: KubeTestClient): Promise<string> {
  const res = await client.request<string>("GET", "/metrics", undefined, { Accept: "text/plain" });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  return typeof res.body === "string" ? res.body : JSON.stringify(res.body);
}

async function calls(rig: NodeRig, vc: VClusterRig, reg: Registrations): Promise<Calls> {
  const host = await metricsPage(rig.admin);
  const virtual = await metricsPage(vc.virtual.admin);
  const name = reg.hostHook.name;
  return {
    create: histogram(host, ADMISSION, { name, operation: "CREATE", type: "admit" }),
    update: histogram(host, ADMISSION, { name, operation: "UPDATE", type: "admit" }),
    virtual: histogram(virtual, ADMISSION, {
      name: reg.virtualConfig.webhooks[0]?.name ?? "",
      type: "admit",
    }),
  };
}

const minus = (a: SumAndCount, b: SumAndCount): SumAndCount => ({
  sum: a.sum - b.sum,
  count: a.count - b.count,
});
const meanMs = (c: SumAndCount) => (c.count > 0 ? (c.sum / c.count) * 1000 : 0);

// ---- vgate's CPU: its pods' cgroups under the rig's cgroup root (kubelet's cgroupfs driver) ----

interface VgatePod {
  metadata: { uid: string };
  status?: { qosClass?: string; podIP?: string };
}

const vgatePods = async (rig: NodeRig) =>
  (
    await must<{ items: VgatePod[] }>(
      rig.admin,
      "GET",
      `/api/v1/namespaces/vgate-system/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=vgate")}`,
    )
  ).items;

/** GET https://<pod IP>:8443/metrics from the host (the rig routes pod addresses); "" on no answer. */
function podMetrics(ip: string): Promise<string> {
  return new Promise((resolve) => {
    // A rig pod's self-signed serving certificate, read for figures only.
    const req = httpsRequest(
      `https://${ip}:8443/metrics`,
      { rejectUnauthorized: false, timeout: 10_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve(res.statusCode === 200 ? text : ""));
      },
    );
    req.on("error", () => resolve(""));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** vgate's own histogram of its answers to host Pod creates, summed over its pods. */
async function vgateAnswers(rig: NodeRig): Promise<SumAndCount> {
  const pages = await Promise.all(
    (await vgatePods(rig)).map((p) => podMetrics(p.status?.podIP ?? "")),
  );
  return pages
    .map((page) =>
      histogram(page, "vgate_admission_request_duration_seconds", {
        route: "mutate/patches",
        operation: "CREATE",
      }),
    )
    .reduce((a, b) => ({ sum: a.sum + b.sum, count: a.count + b.count }), { sum: 0, count: 0 });
}

/** CPU ns of one pod's cgroup (v1 cpuacct, or v2 cpu.stat); undefined when not found. */
function podCpuNs(rig: NodeRig, pod: VgatePod): number | undefined {
  const qos = pod.status?.qosClass ?? "";
  const dir = `kubepods/${qos === "Guaranteed" ? "" : `${qos.toLowerCase()}/`}pod${pod.metadata.uid}`;
  try {
    return Number(readFileSync(`/sys/fs/cgroup/cpuacct/${rig.netns}/${dir}/cpuacct.usage`, "utf8"));
  } catch {
    try {
      const stat = readFileSync(`/sys/fs/cgroup/${rig.netns}/${dir}/cpu.stat`, "utf8");
      return Number(/^usage_usec (\d+)$/m.exec(stat)?.[1]) * 1000;
    } catch {
      return undefined;
    }
  }
}

/** CPU ms of every vgate pod (the server and its sandbox processes); NaN when not readable. */
async function vgateCpuMs(rig: NodeRig): Promise<number> {
  const each = (await vgatePods(rig)).map((p) => podCpuNs(rig, p));
  if (each.length === 0 || each.some((ns) => ns === undefined)) return NaN;
  return each.reduce<number>((sum, ns) => sum + ns!, 0) / 1e6;
}

/** CPU ms so far by process of the rig, and of vgate's pods. */
type CpuByProcess = Map<string, number>;

/** Which of the rig's processes `pid` is: its command, and "(virtual)" for the virtual cluster's. */
function processLabel(pid: string): string {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return /--secure-port=7443|:2479\b|--secure-port=10357/.test(args) ? `${comm} (virtual)` : comm;
  } catch {
    return "";
  }
}

/**
 * CPU ms of the whole rig, by process: every process in its network namespace (etcd, both
 * kube-apiservers, the syncer, kube-controller-manager, kube-scheduler, kubelet, containerd,
 * kube-proxy) and vgate's pods (in network namespaces of their own: by their cgroups).
 */
async function rigCpu(rig: NodeRig): Promise<CpuByProcess> {
  const by: CpuByProcess = new Map([["vgate pods", await vgateCpuMs(rig)]]);
  const pids = execFileSync("ip", ["netns", "pids", rig.netns], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
  for (const pid of pids) {
    const ms = cpuMs(Number(pid));
    const label = processLabel(pid);
    if (label && !Number.isNaN(ms)) by.set(label, (by.get(label) ?? 0) + ms);
  }
  return by;
}

/** `after` - `before` - `idle` (per ms) × `ms`, by process. */
function cpuSpent(after: CpuByProcess, before: CpuByProcess, idle?: CpuByProcess, ms = 0) {
  const out: CpuByProcess = new Map();
  for (const [label, v] of after) {
    out.set(label, v - (before.get(label) ?? v) - (idle?.get(label) ?? 0) * ms);
  }
  return out;
}

const sumOf = (by: CpuByProcess) => [...by.values()].reduce((a, b) => a + b, 0);

// ---- One round ----

interface Round {
  arm: Arm;
  podsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Seconds until every virtual create was answered. */
  createSeconds: number;
  seconds: number;
  probes: number;
  problems: string[];
  /** kube-apiserver's calls to vgate's webhooks while the round's copies were made. */
  calls: Calls;
  /** Host writes to the round's copies after their create, while they were made. */
  hostUpdates: number;
  /** vgate's own timing of its answers to the host Pod creates. */
  answers: SumAndCount;
  /** CPU ms of the whole rig per Pod, vgate's pods included, over the same span, above idle. */
  rigCpuMsPerPod: number;
  /** The same by process. */
  cpuPerPod: CpuByProcess;
  /** CPU ms of vgate's pods per Pod, from the first create to the last host copy. */
  vgateCpuMsPerPod: number;
}

async function round(
  rig: NodeRig,
  vc: VClusterRig,
  reg: Registrations,
  arm: Arm,
  index: number,
  image: string,
): Promise<Round> {
  const probes = await probe(rig, vc, arm, image);
  const names = Array.from({ length: PODS }, (_, i) => `p${index}-${String(i).padStart(4, "0")}`);
  const hostToIndex = new Map(names.map((n, i) => [vc.hostName(NS, n), i]));
  const sent: number[] = new Array<number>(PODS);
  const added: number[] = new Array<number>(PODS);
  const copies: Pod[] = new Array<Pod>(PODS);
  let seen = 0;
  let hostUpdates = 0;
  const rv = (await list(rig.admin, HOST_NS)).metadata.resourceVersion;
  const watch = rig.admin.watch(
    `/api/v1/namespaces/${HOST_NS}/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`,
    (event) => {
      const pod = event.object as unknown as Pod;
      if (event.type === "MODIFIED" && seen < PODS && hostToIndex.has(pod.metadata.name)) {
        hostUpdates++;
      }
      if (event.type !== "ADDED") return;
      const i = hostToIndex.get(pod.metadata.name);
      if (i === undefined || added[i] !== undefined) return;
      added[i] = performance.now();
      copies[i] = pod;
      seen++;
    },
  );
  let watchError: unknown;
  watch.done.catch((err: unknown) => (watchError = err));
  try {
    const before = await calls(rig, vc, reg);
    // The rig's CPU while idle, taken off the round's: a slower round is not charged more of it.
    const idle0 = [await rigCpu(rig), performance.now()] as const;
    await sleep(IDLE_MS);
    const idleMs = performance.now() - idle0[1];
    const idlePerMs = new Map(
      [...cpuSpent(await rigCpu(rig), idle0[0])].map(([k, v]) => [k, v / idleMs]),
    );
    const cpuBefore = await vgateCpuMs(rig);
    const rigBefore = await rigCpu(rig);
    const rigSince = performance.now();
    const answersBefore = await vgateAnswers(rig);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < PODS; i = next++) {
        sent[i] = performance.now();
        await must(
          vc.virtual.admin,
          "POST",
          `/api/v1/namespaces/${NS}/pods`,
          virtualPod(names[i]!, image),
        );
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const createSeconds = (performance.now() - t0) / 1000;
    const deadline = Date.now() + ROUND_TIMEOUT_MS;
    while (seen < PODS) {
      if (watchError !== undefined) throw watchError as Error;
      if (Date.now() > deadline) {
        throw new Error(`${seen} of ${PODS} host copies within ${ROUND_TIMEOUT_MS / 1000} s`);
      }
      await sleep(20);
    }
    const cpuAfter = await vgateCpuMs(rig);
    const spent = cpuSpent(await rigCpu(rig), rigBefore, idlePerMs, performance.now() - rigSince);
    const cpuPerPod = new Map([...spent].map(([k, v]) => [k, v / PODS]));
    const answersAfter = await vgateAnswers(rig);
    const after = await calls(rig, vc, reg);
    const first = Math.min(...sent);
    const seconds = (Math.max(...added) - first) / 1000;
    const latencies = added.map((a, i) => a - sent[i]!);
    const problems = copies
      .map((c, i) => [names[i], copyProblem(c, arm)] as const)
      .filter(([, p]) => p !== "")
      .map(([n, p]) => `${n}: ${p}`);
    const creates = after.create.count - before.create.count;
    if (arm === "with" ? creates < PODS : creates !== 0) {
      problems.push(`kube-apiserver called vgate's webhook for ${creates} Pod creates`);
    }
    return {
      arm,
      podsPerSecond: PODS / seconds,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: Math.max(...latencies),
      createSeconds,
      seconds,
      probes,
      problems,
      calls: {
        create: minus(after.create, before.create),
        update: minus(after.update, before.update),
        virtual: minus(after.virtual, before.virtual),
      },
      hostUpdates,
      answers: minus(answersAfter, answersBefore),
      vgateCpuMsPerPod: (cpuAfter - cpuBefore) / PODS,
      rigCpuMsPerPod: sumOf(cpuPerPod),
      cpuPerPod,
    };
  } finally {
    watch.stop();
    await clear(rig, vc);
  }
}

// ---- Report ----

function ratioLine(
  what: string,
  runs: Record<Arm, Round[]>,
  f: (r: Round) => number,
  unit: string,
  target?: string,
): { line: string; ratio: number } {
  const ratios = runs.with.map((r, i) => f(r) / f(runs.without[i]!));
  const m = (arm: Arm) => runs[arm].map(f);
  const ratio = medianOf(ratios);
  return {
    ratio,
    line: `${what}: with patches ${medianOf(m("with")).toFixed(1)} ${unit} (${rangeOf(m("with"))}), without ${medianOf(m("without")).toFixed(1)} ${unit} (${rangeOf(m("without"))}); ratio ${ratio.toFixed(2)} (${rangeOf(ratios)})${target ?? ""}`,
  };
}

async function main(): Promise<number> {
  if (!HAVE_VCLUSTER) {
    const why = VCLUSTER_SKIP_REASON.replace(/^ \(skipped: (.*)\)$/s, "$1");
    log(`pods bench skipped: it needs the node rig and vCluster's syncer: ${why}`);
    recordSkipped(FIGURE, `>= ${TARGET_RATIO}`, why);
    return 0;
  }
  putMatchingKubectlFirstOnPath();
  const started = performance.now();
  log(
    `pods bench: Pods created on the host by vCluster's syncer, through vgate's webhook with its Pod patches vs without; starting a node ...`,
  );
  const images = nodeImages();
  const rig = await startNodeRig({ pause: images.pause, images: [images.test] });
  running.rig = rig;
  try {
    // vgate first: with failurePolicy Fail its webhook must answer before the syncer writes.
    const install = await installVgate(rig, images.vgate, {
      patches: { vclusterName: VC_NAME, vclusterNamespace: HOST_NS, config: CONFIG, kinds: KINDS },
    });
    const vc = await startVCluster(rig, vclusterParts(), {
      name: VC_NAME,
      hostNamespace: HOST_NS,
      env: {
        VCLUSTER_PHYSICAL_CLIENT_QPS: String(SYNCER_QPS),
        VCLUSTER_PHYSICAL_CLIENT_BURST: String(SYNCER_QPS * 2),
      },
    });
    running.vc = vc;
    await installVirtualWebhook(install, vc.virtual.adminKubeconfig, "patches");
    await must(vc.virtual.admin, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    // The virtual Pods need their namespace's default ServiceAccount (the ServiceAccount admission).
    const saDeadline = Date.now() + 60_000;
    while (
      (await vc.virtual.admin.request("GET", `/api/v1/namespaces/${NS}/serviceaccounts/default`))
        .status !== 200
    ) {
      if (Date.now() > saDeadline) throw new Error(`no ServiceAccount ${NS}/default`);
      await sleep(250);
    }
    const registrations = await Registrations.save(rig, vc);
    log(
      `  ready in ${((performance.now() - started) / 1000).toFixed(0)} s; ${ROUNDS} rounds of each arm, interleaved; ${PODS} Pods a round, ${IN_FLIGHT} creates in flight; the syncer's host client at ${SYNCER_QPS} requests/s`,
    );
    const runs: Record<Arm, Round[]> = { with: [], without: [] };
    let index = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ARMS : [...ARMS].reverse();
      for (const arm of order) {
        await registrations.set(arm);
        const result = await round(rig, vc, registrations, arm, index++, images.test.ref);
        runs[arm].push(result);
        log(
          `  ${ARM_NAME[arm].padEnd(12)} ${PODS} Pods: created in ${result.createSeconds.toFixed(1)} s, host copies in ${result.seconds.toFixed(1)} s → ${result.podsPerSecond.toFixed(1)} Pods/s; create → host copy p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms, max ${result.max.toFixed(0)} ms; ${PODS - result.problems.length}/${PODS} copies right${result.probes > 1 ? ` (${result.probes} probes)` : ""}`,
        );
        const c = result.calls;
        log(
          `               vgate's webhooks: host ${c.create.count} CREATE (mean ${meanMs(c.create).toFixed(1)} ms; vgate's own answer ${meanMs(result.answers).toFixed(1)} ms of ${result.answers.count}), ${c.update.count} UPDATE (mean ${meanMs(c.update).toFixed(1)} ms); virtual ${c.virtual.count} (mean ${meanMs(c.virtual).toFixed(1)} ms); CPU-ms per Pod: vgate's pods ${result.vgateCpuMsPerPod.toFixed(1)}, the whole rig ${result.rigCpuMsPerPod.toFixed(1)} above idle; ${result.hostUpdates} host Pod updates`,
        );
      }
    }
    await registrations.set("with");
    const throughput = ratioLine(
      "host Pod creates/s",
      runs,
      (r) => r.podsPerSecond,
      "Pods/s",
      ` (target ≥ ${TARGET_RATIO}×)`,
    );
    const p99 = ratioLine("p99 create → host copy", runs, (r) => r.p99, "ms");
    const p50 = ratioLine("p50 create → host copy", runs, (r) => r.p50, "ms");
    const pad = (s: string | number, n: number) => String(s).padEnd(n);
    const med = (arm: Arm, f: (r: Round) => number) => medianOf(runs[arm].map(f)).toFixed(1);
    log("");
    log(
      `Pods through vgate's webhook, host copies by vCluster's syncer (median of ${ROUNDS} rounds each; ratios: medians of the per-round ratios)`,
    );
    log(`${pad("", 30)}${pad("with patches", 14)}${pad("without", 10)}ratio`);
    log(
      `${pad("host Pod creates/s", 30)}${pad(
        med("with", (r) => r.podsPerSecond),
        14,
      )}${pad(
        med("without", (r) => r.podsPerSecond),
        10,
      )}${throughput.ratio.toFixed(2)}`,
    );
    log(
      `${pad("p50 ms create → host copy", 30)}${pad(
        med("with", (r) => r.p50),
        14,
      )}${pad(
        med("without", (r) => r.p50),
        10,
      )}${p50.ratio.toFixed(2)}`,
    );
    log(
      `${pad("p99 ms create → host copy", 30)}${pad(
        med("with", (r) => r.p99),
        14,
      )}${pad(
        med("without", (r) => r.p99),
        10,
      )}${p99.ratio.toFixed(2)}`,
    );
    log(
      `${pad("rig CPU-ms per Pod", 30)}${pad(
        med("with", (r) => r.rigCpuMsPerPod),
        14,
      )}${pad(
        med("without", (r) => r.rigCpuMsPerPod),
        10,
      )}`,
    );
    log(throughput.line);
    log(p99.line);
    log(p50.line);
    const rigCpu = ratioLine(
      "the rig's CPU per Pod above idle",
      runs,
      (r) => r.rigCpuMsPerPod,
      "CPU-ms",
    );
    log(
      `${rigCpu.line}: where CPU is all that limits, the throughput ratio is about ${(1 / rigCpu.ratio).toFixed(2)}`,
    );
    const labels = [
      ...new Set([...runs.with, ...runs.without].flatMap((r) => [...r.cpuPerPod.keys()])),
    ];
    const byLabel = (arm: Arm, label: string) =>
      medianOf(runs[arm].map((r) => r.cpuPerPod.get(label) ?? 0));
    const rows = labels
      .map((l) => ({ l, w: byLabel("with", l), o: byLabel("without", l) }))
      .filter((r) => Math.abs(r.w) >= 0.1 || Math.abs(r.o) >= 0.1)
      .sort((a, b) => b.w - b.o - (a.w - a.o));
    log(
      `the rig's CPU-ms per Pod above idle, by process (medians): with patches / without / difference`,
    );
    for (const r of rows) {
      log(
        `  ${pad(r.l, 32)}${pad(r.w.toFixed(2), 8)}${pad(r.o.toFixed(2), 8)}${(r.w - r.o).toFixed(2)}`,
      );
    }
    const hookMs = runs.with.map((r) => meanMs(r.calls.create));
    const ownMs = runs.with.map((r) => meanMs(r.answers));
    const cpu = (arm: Arm) => runs[arm].map((r) => r.vgateCpuMsPerPod);
    log(
      `where it goes: kube-apiserver waits ${medianOf(hookMs).toFixed(1)} ms (${rangeOf(hookMs)}) on vgate's webhook per host Pod create (mean of a round), of which vgate's own answer (body received to response written) ${medianOf(ownMs).toFixed(1)} ms (${rangeOf(ownMs)}); vgate's pods use ${medianOf(cpu("with")).toFixed(1)} CPU-ms per Pod (${rangeOf(cpu("with"))}) with patches, ${medianOf(cpu("without")).toFixed(1)} (${rangeOf(cpu("without"))}) without`,
    );
    const bad = [...runs.with, ...runs.without].flatMap((r) =>
      r.problems.slice(0, 5).map((p) => `${ARM_NAME[r.arm]}: ${p}`),
    );
    log(
      bad.length === 0
        ? `every host copy was right: ${ROUNDS * PODS} patched with the webhook, ${ROUNDS * PODS} untouched without`
        : "PROBLEMS (the bench measured the wrong thing):",
    );
    for (const line of bad) log(`  ${line}`);
    if (bad.length === 0) recordTarget(atLeast(FIGURE, throughput.ratio, TARGET_RATIO));
    log(
      throughput.ratio >= TARGET_RATIO
        ? "target met"
        : `target NOT met: throughput ratio ${throughput.ratio.toFixed(2)} < ${TARGET_RATIO}`,
    );
    log(`(whole run ${((performance.now() - started) / 1000).toFixed(0)} s)`);
    return bad.length === 0 ? 0 : 1;
  } catch (err) {
    // Stopped by a signal: what failed then is the rig going away.
    if (stopping) return 130;
    throw err;
  } finally {
    const interrupted = stopping !== undefined;
    await stopAll();
    if (!interrupted) {
      // By inode: another rig may take the same name as soon as this one gave it up.
      let left = false;
      try {
        left = statSync(`/run/netns/${rig.netns}`).ino === rig.netnsInode;
      } catch {
        // gone
      }
      log(
        `  node rig stopped; its network namespace ${rig.netns} ${left ? "is STILL THERE" : "is gone"}`,
      );
      if (left) process.exitCode = 1;
    }
  }
}

const running: { rig?: NodeRig; vc?: VClusterRig } = {};
let stopping: Promise<void> | undefined;
/** Stops the syncer and the rig, once (a signal and main's own end may both ask). */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await running.vc?.stop().catch(() => undefined);
    await running.rig?.stop();
  })();
  return stopping;
}
// A signal before the rig has started leaves it to the rig's keeper, which stops it once this
// process has gone.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the rig`);
    void stopAll()
      .catch(() => undefined)
      .finally(() => process.exit(130));
  });
}
process.exitCode = Math.max(await main(), Number(process.exitCode ?? 0));
