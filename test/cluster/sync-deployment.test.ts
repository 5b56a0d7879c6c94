// `vgate sync` as a Deployment on a real node (manifests/sync/, installed as manifests/README.md
// says, command for command), syncing a virtual cluster whose kube-apiserver runs on the node too
// (test/support/node/virtual-control-plane.ts). The test plays vCluster's part: it makes the host
// namespace, and a selector-less Service with its Endpoints in the virtual cluster, whose host
// copy vgate sync writes with the patches of manifests/sync/vcluster.yaml.
//
// Failover: while the virtual Endpoints change every 200 ms, the leader pod (the Lease's holder)
// goes, once with `kubectl delete pod` (SIGTERM: it releases the Lease) and once by SIGKILL of its
// process (no release: the Lease must expire). The standby takes over, and no update is lost: the
// host copy ends as the translation of the last virtual state, and a watch on it never sees an
// update applied out of order.

import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import type { OpenWatch } from "../support/kube/kube-client.js";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  startVirtualControlPlane,
  type VirtualControlPlane,
} from "../support/node/virtual-control-plane.js";
import { bash, userEnv } from "../support/node/vgate-install.js";
import { containerUsage, type ContainerUsage } from "../support/node/vgate-pods.js";
import { until } from "../support/until.js";

/** A Kubernetes memory quantity (Mi, Gi, or bytes) in bytes. */
function bytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(q);
  if (!m) throw new Error(`unexpected memory quantity ${q}`);
  return Number(m[1]) * { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, "": 1 }[m[2] ?? ""]!;
}

/** A Kubernetes CPU quantity ("1", "500m") in millicores. */
function millicores(q: string): number {
  return q.endsWith("m") ? Number(q.slice(0, -1)) : Number(q) * 1000;
}

/** manifests/sync/vcluster.env, as the kustomization reads it. */
function vclusterEnv(): { name: string; namespace: string; secret: string } {
  const env = Object.fromEntries(
    repoFile("manifests/sync/vcluster.env")
      .split("\n")
      .filter((l) => /^[a-z-]+=/.test(l))
      .map((l) => l.split("=") as [string, string]),
  );
  return {
    name: env["vcluster-name"]!,
    namespace: env["vcluster-namespace"]!,
    secret: env["virtual-kubeconfig-secret"]!,
  };
}

const VC = vclusterEnv();
const LEASE = `vgate-sync-${VC.name}`;
const SELECTOR = "app.kubernetes.io/name=vgate,app.kubernetes.io/component=sync";
/** The Deployment's leader election: --leader-elect-lease-duration, and the default retry period. */
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;
/** A candidate waits retryPeriod * (1 + up to 1.2) between attempts (client-go's jitter). */
const MAX_RETRY_MS = RETRY_MS * 2.2;
/** Room for API round trips on a shared, slow machine. */
const SLACK_MS = 1_500;
const STREAM_PERIOD_MS = 200;

/** The virtual Endpoints the stream updates, and its host copy (vCluster's naming). */
const V_NS = "team-a";
const V_NAME = "web";
const HOST_NAME = `${V_NAME}-x-${V_NS}-x-${VC.name}`;
/** The annotation manifests/sync/vcluster.yaml patches ("tenant-" + value), and a plain one. */
const OWNER = "example.com/owner";
const SEQ = "example.com/seq";

type Meta = {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
};
interface Endpoints {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  subsets?: {
    addresses?: { ip: string }[];
    ports?: { name?: string; port: number; protocol?: string }[];
  }[];
  [k: string]: unknown;
}
interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: {
    containers: { livenessProbe?: unknown; readinessProbe?: unknown; startupProbe?: unknown }[];
  };
  status: {
    phase: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      ready: boolean;
      restartCount: number;
      image: string;
      containerID?: string;
    }[];
  };
}
interface LeaseSeen {
  at: number;
  holder: string;
  acquireTime: string;
  renewTime: string;
  transitions: number;
}
interface HostSeen {
  at: number;
  seq: number;
  consistent: boolean;
  text: string;
}

/** A distinct address per update, so the subsets change with every step too. */
const ipOf = (seq: number) => `10.99.${Math.floor(seq / 250) % 250}.${(seq % 250) + 1}`;

function virtualEndpoints(seq: number, resourceVersion?: string): Endpoints {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: V_NAME,
      namespace: V_NS,
      ...(resourceVersion && { resourceVersion }),
      annotations: { [OWNER]: `seq-${seq}`, [SEQ]: String(seq) },
    },
    subsets: [
      {
        addresses: [{ ip: ipOf(seq) }],
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      },
    ],
  };
}

/**
 * The lines of manifests/README.md's ```sh block whose first line starts with `first`; its blocks
 * sit in a numbered list, so the fence and its lines are indented alike.
 */
function manifestsReadmeBlock(first: string): string[] {
  const readme = repoFile("manifests/README.md");
  for (const m of readme.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)) {
    const lines = m[2]!
      .trimEnd()
      .split("\n")
      .map((l) => l.slice(m[1]!.length));
    if (lines[0]!.startsWith(first)) return lines;
  }
  throw new Error(`manifests/README.md has no sh block starting with ${JSON.stringify(first)}`);
}

const podOf = (holder: string) => holder.slice(0, holder.lastIndexOf("_"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET http://<pod IP>:<port><path> from the host (the rig routes pod addresses). */
function podGet(ip: string, port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(`http://${ip}:${port}${path}`, { timeout: 3000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", () => resolve({ status: 0, text: "" }));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** The sum of a metric's series whose labels include `labels`; undefined when it has none. */
function metricValue(text: string, name: string, labels = ""): number | undefined {
  const re = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, "gm");
  let sum: number | undefined;
  for (const m of text.matchAll(re)) {
    if (!labels || (m[1] ?? "").includes(labels)) sum = (sum ?? 0) + Number(m[2]);
  }
  return sum;
}

/**
 * The host PID of a container's first process: the process in the container's cgroup (its path
 * names the container ID, whichever cgroup driver) that is PID 1 in its own PID namespace.
 */
function containerInitPid(containerId: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cgroup`, "utf8").includes(containerId)) continue;
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (nspid?.trim().split(/\s+/).pop() === "1") return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process of container ${containerId}`);
}

(HAVE_NODE ? describe : describe.skip)(
  `vgate sync as a Deployment on a real node${NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);
    let rig: NodeRig;
    let vc: VirtualControlPlane;
    let installOutput = "";
    let installMs = 0;
    let seq = 0;
    const leaseSeen: LeaseSeen[] = [];
    const hostSeen: HostSeen[] = [];
    const watches: OpenWatch[] = [];
    /** Why a watch ended early, if one did (the figures would miss events). */
    const watchErrors: string[] = [];
    const watch = (path: string, onEvent: Parameters<NodeRig["admin"]["watch"]>[1]) => {
      const w = rig.admin.watch(path, onEvent);
      w.done.catch((err: Error) => watchErrors.push(`${path}: ${err.message}`));
      watches.push(w);
    };

    const pods = async (): Promise<Pod[]> => {
      const r = await rig.kubectl([
        "-n",
        VC.namespace,
        "get",
        "pods",
        "-l",
        SELECTOR,
        "-o",
        "json",
      ]);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { items: Pod[] }).items;
    };
    const isReady = (p: Pod) =>
      !p.metadata.deletionTimestamp &&
      (p.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
    /** Until exactly two pods run, both Ready through the kubelet's probes and on /readyz. */
    const bothReady = async (ms = 120_000): Promise<Pod[]> => {
      let last: Pod[] = [];
      try {
        await until(
          async () => {
            last = await pods();
            if (last.length !== 2 || !last.every(isReady)) return false;
            const direct = await Promise.all(
              last.map((p) => podGet(p.status.podIP!, 8081, "/readyz")),
            );
            return direct.every((d) => d.status === 200);
          },
          "two vgate-sync pods Ready",
          ms,
        );
      } catch (err) {
        const seen = last.map((p) => [p.metadata.name, p.status.phase, p.status.conditions]);
        throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(seen)}`, {
          cause: err,
        });
      }
      return last;
    };
    const holder = () => leaseSeen.at(-1)?.holder ?? "";
    /** The Lease's changes from leaseSeen[from], for messages. */
    const leaseHistory = (from: number, t0: number) =>
      leaseSeen
        .slice(from)
        .map((l) => `${l.at - t0}: ${l.holder || "(released)"} renewed ${l.renewTime}`)
        .join("; ");

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.vgate] });
      vc = await startVirtualControlPlane(rig);

      // vCluster's part: the host namespace it runs in, and a Service without a selector (whose
      // Endpoints the user writes) in the virtual cluster.
      await rig.admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: VC.namespace },
      });
      await vc.admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: V_NS } });
      await vc.admin.create({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: V_NAME, namespace: V_NS },
        spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      });
      await vc.admin.create(virtualEndpoints(seq));

      // manifests/README.md's steps 2 to 4, as written, in a folder where manifests/ is this
      // checkout's, virtual.kubeconfig the virtual cluster's admin and vgate-sync.kubeconfig a
      // kubeconfig of the virtual kube-system/vgate-sync with a server the pods reach.
      const work = mkdtempSync(join(rig.dir, "sync-user-"));
      symlinkSync(join(repoRoot, "manifests"), join(work, "manifests"));
      copyFileSync(vc.adminKubeconfig, join(work, "virtual.kubeconfig"));
      const env = userEnv(rig);
      const block = (first: string) => manifestsReadmeBlock(first).join("\n");
      await bash(block("# In the virtual cluster: vgate sync's service account"), work, env);
      const token = await vc.serviceAccountToken("kube-system", "vgate-sync");
      await vc.tokenKubeconfig(join(work, "vgate-sync.kubeconfig"), token, "vgate-sync");
      await bash(block("# Only without exportKubeConfig"), work, env);

      // Every change of the Lease and of the host copy, as a watch sees them.
      const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${VC.namespace}/leases?watch=true&fieldSelector=metadata.name%3D${LEASE}`;
      watch(leasePath, (ev) => {
        const spec = (ev.object["spec"] ?? {}) as Record<string, unknown>;
        if (ev.type !== "ADDED" && ev.type !== "MODIFIED") return;
        leaseSeen.push({
          at: Date.now(),
          holder: String(spec["holderIdentity"] ?? ""),
          acquireTime: String(spec["acquireTime"] ?? ""),
          renewTime: String(spec["renewTime"] ?? ""),
          transitions: Number(spec["leaseTransitions"] ?? 0),
        });
      });
      const hostPath = `/api/v1/namespaces/${VC.namespace}/endpoints?watch=true&fieldSelector=metadata.name%3D${HOST_NAME}`;
      watch(hostPath, (ev) => {
        if (ev.type !== "ADDED" && ev.type !== "MODIFIED") return;
        const e = ev.object as unknown as Endpoints;
        const a = e.metadata.annotations ?? {};
        const s = Number(a[SEQ]);
        const ip = e.subsets?.[0]?.addresses?.[0]?.ip;
        hostSeen.push({
          at: Date.now(),
          seq: s,
          // One virtual state, translated whole: the patched annotation and the address belong
          // to the same update as the counter.
          consistent: a[OWNER] === `tenant-seq-${s}` && ip === ipOf(s),
          text: JSON.stringify({ annotations: { [OWNER]: a[OWNER], [SEQ]: a[SEQ] }, ip }),
        });
      });

      const start = Date.now();
      installOutput = await bash(
        block("# In the host cluster: vgate sync's Deployment"),
        work,
        env,
      );
      installMs = Date.now() - start;
    });

    after(async () => {
      for (const w of watches) w.stop();
      vc?.admin.close();
      await rig?.stop();
    });

    it("installs from manifests/README.md: two replicas, both Ready through their probes", async () => {
      assert.match(installOutput, /successfully rolled out/);
      const running = await bothReady();
      for (const pod of running) {
        const c = pod.spec.containers[0]!;
        assert.ok(c.startupProbe && c.readinessProbe && c.livenessProbe, "the Deployment's probes");
        const s = pod.status.containerStatuses![0]!;
        assert.equal(s.restartCount, 0, `${pod.metadata.name} never restarted`);
        assert.equal(s.image, nodeImages().vgate.ref, "the image the kustomization names");
      }
      await until(() => holder() !== "", "a Lease holder");
      const leader = running.find((p) => p.metadata.name === podOf(holder()));
      assert.ok(leader, `the holder ${holder()} is one of the pods`);
      const standby = running.find((p) => p !== leader)!;
      const status = async (p: Pod) =>
        metricValue(
          (await podGet(p.status.podIP!, 8080, "/metrics")).text,
          "leader_election_master_status",
          `name="${LEASE}"`,
        );
      assert.equal(await status(leader), 1, "the holder leads");
      assert.equal(await status(standby), 0, "the other replica stands by");
      // The host copy, written by the leader from the virtual cluster through the pod's kubeconfig.
      await until(
        () => hostSeen.some((h) => h.seq === seq && h.consistent),
        `the host copy ${HOST_NAME} of the first state`,
        60_000,
      );
      const writes = async (p: Pod) =>
        metricValue(
          (await podGet(p.status.podIP!, 8080, "/metrics")).text,
          "vgate_sync_writes_total",
        ) ?? 0;
      assert.ok((await writes(leader)) > 0, "the leader wrote the host copy");
      assert.equal(await writes(standby), 0, "the standby wrote nothing");
      console.log(
        `      (README blocks applied and rolled out in ${installMs} ms; leader ${leader.metadata.name})`,
      );
    });

    /**
     * Runs the stream of virtual updates, does `disrupt` to the leader pod once the host copy
     * follows, keeps streaming until the new leader has synced for a while, stops, and checks that
     * nothing was lost. Returns the figures.
     */
    const failover = async (
      how: string,
      disrupt: (leader: Pod) => Promise<void>,
      /** Which pods may take the Lease over (`who` says it in words). */
      opts: { who: string; mayLead: (pod: string, leader: string, standby: string) => boolean },
    ): Promise<{
      t0: number;
      oldHolder: string;
      newPod: string;
      updates: number;
      hostStates: number;
      newLease: LeaseSeen;
      lastOldRenew: string;
      released: LeaseSeen | undefined;
      resumed: HostSeen;
      lastBefore: HostSeen | undefined;
    }> => {
      const running = await bothReady();
      const oldHolder = holder();
      const leader = running.find((p) => p.metadata.name === podOf(oldHolder));
      assert.ok(leader, `the holder ${oldHolder} is a running pod`);
      const standby = running.find((p) => p !== leader)!;
      const firstSeen = hostSeen.length;
      const firstLease = leaseSeen.length;

      // The stream: one update at a time, every 200 ms, each a PUT with the resourceVersion of
      // the test's own last write, so a write by anyone else (vgate sync writing the virtual
      // Endpoints back) would show as a conflict.
      let streaming = true;
      let conflicts = 0;
      let rv = (await vc.admin.get<Endpoints>(virtualEndpoints(seq)))!.metadata.resourceVersion;
      const stream = (async () => {
        while (streaming) {
          const tick = Date.now();
          const next = seq + 1;
          const res = await vc.admin.request<Endpoints>(
            "PUT",
            `/api/v1/namespaces/${V_NS}/endpoints/${V_NAME}`,
            virtualEndpoints(next, rv),
          );
          if (res.status === 200) {
            seq = next;
            rv = res.body.metadata.resourceVersion;
          } else if (res.status === 409) {
            conflicts += 1;
            rv = (await vc.admin.get<Endpoints>(virtualEndpoints(seq)))!.metadata.resourceVersion;
          } else {
            throw new Error(`PUT of the virtual Endpoints: ${res.status}`);
          }
          await sleep(Math.max(0, STREAM_PERIOD_MS - (Date.now() - tick)));
        }
      })();
      try {
        // Steady state: the host copy follows the stream.
        const from = seq;
        await until(
          () => hostSeen.some((h) => h.seq >= from + 5),
          "the host copy following the stream",
          30_000,
        );
        const t0 = Date.now();
        await disrupt(leader);
        let newLease: LeaseSeen | undefined;
        await until(
          () =>
            (newLease = leaseSeen
              .slice(firstLease)
              .find((l) => l.holder !== "" && l.holder !== oldHolder)) !== undefined,
          `a new Lease holder after ${how}`,
          LEASE_MS + 2 * MAX_RETRY_MS + 30_000,
        );
        const newPod = podOf(newLease!.holder);
        assert.ok(
          opts.mayLead(newPod, leader.metadata.name, standby.metadata.name),
          `${newLease!.holder} took the Lease over, not ${opts.who}; ` +
            `the Lease since ${how} (ms after it): ${leaseHistory(firstLease, t0)}`,
        );
        const before = leaseSeen.slice(0, leaseSeen.indexOf(newLease!)).at(-1);
        assert.equal(newLease!.transitions, (before?.transitions ?? 0) + 1, "one more transition");
        const acquired = Date.parse(newLease!.acquireTime);
        let resumed: HostSeen | undefined;
        await until(
          () => (resumed = hostSeen.slice(firstSeen).find((h) => h.at > acquired)) !== undefined,
          `the host copy moving again after ${how}`,
          30_000,
        );
        // A few more seconds of updates under the new leader, then the last one.
        await sleep(2_000);
        streaming = false;
        await stream;
        const last = seq;
        await until(
          () => hostSeen.at(-1)?.seq === last,
          `the host copy at the last update ${last} (last seen ${hostSeen.at(-1)?.text})`,
          30_000,
        );

        // No update lost: the host copy is the translation of the last virtual state.
        const virtual = (await vc.admin.get<Endpoints>(virtualEndpoints(last)))!;
        const host = (await rig.admin.get<Endpoints>({
          apiVersion: "v1",
          kind: "Endpoints",
          metadata: { name: HOST_NAME, namespace: VC.namespace },
        }))!;
        assert.equal(virtual.metadata.annotations?.[SEQ], String(last), "the virtual state");
        assert.equal(
          host.metadata.annotations?.[OWNER],
          `tenant-${virtual.metadata.annotations?.[OWNER]}`,
        );
        assert.equal(host.metadata.annotations?.[SEQ], String(last));
        assert.equal(host.metadata.annotations?.["vcluster.loft.sh/object-name"], V_NAME);
        assert.equal(host.metadata.annotations?.["vcluster.loft.sh/object-namespace"], V_NS);
        assert.equal(
          host.metadata.annotations?.["vcluster.loft.sh/object-uid"],
          virtual.metadata.uid,
        );
        assert.equal(host.metadata.labels?.["vcluster.loft.sh/managed-by"], VC.name);
        assert.deepEqual(host.subsets, virtual.subsets, "the addresses of the last update");
        assert.equal(conflicts, 0, "nobody but the test wrote the virtual Endpoints");
        assert.deepEqual(watchErrors, [], "the watches saw every change");

        // Never out of order: as a watch saw them, the host copy's updates only moved forward,
        // each a whole virtual state.
        const seen = hostSeen.slice(firstSeen);
        const torn = seen.filter((h) => !h.consistent);
        assert.deepEqual(torn, [], "every host state is one virtual update, translated whole");
        for (let i = 1; i < seen.length; i++) {
          assert.ok(
            seen[i]!.seq >= seen[i - 1]!.seq,
            `the host copy went back from ${seen[i - 1]!.seq} to ${seen[i]!.seq}`,
          );
        }

        const leases = leaseSeen.slice(firstLease);
        // The old holder's last renew, however long before this phase it was.
        const old = leaseSeen.filter((l) => l.holder === oldHolder && l.at <= newLease!.at);
        const lastBefore = seen.filter((h) => h.at <= acquired).at(-1);
        return {
          t0,
          oldHolder,
          newPod:
            newPod === standby.metadata.name
              ? "the standby"
              : newPod === leader.metadata.name
                ? "the killed pod's restarted container"
                : "the Deployment's replacement pod",
          updates: last - from,
          hostStates: seen.length,
          newLease: newLease!,
          lastOldRenew: old.at(-1)?.renewTime ?? "",
          released: leases.find((l) => l.holder === "" && l.at >= t0),
          resumed: resumed!,
          lastBefore,
        };
      } finally {
        streaming = false;
        await stream.catch(() => undefined);
      }
    };

    const figures = (f: Awaited<ReturnType<typeof failover>>) =>
      `host copy moving again ${f.resumed.at - f.t0} ms after it, ` +
      `${f.resumed.at - (f.lastBefore?.at ?? f.t0)} ms without a host write; ` +
      `${f.updates} virtual updates, ${f.hostStates} host states seen`;

    it("kubectl delete pod of the leader: it releases the Lease, a ready replica takes over, nothing lost", async () => {
      const f = await failover(
        "kubectl delete pod",
        async (leader) => {
          const r = await rig.kubectl([
            "-n",
            VC.namespace,
            "delete",
            "pod",
            leader.metadata.name,
            "--wait=false",
          ]);
          assert.equal(r.code, 0, r.stderr);
        },
        {
          // A released Lease goes to the first ready replica that asks: the warm standby, or the
          // Deployment's replacement pod once its caches are synced (docs/decisions.md EPS-24).
          who: "a pod other than the deleted one",
          mayLead: (pod, leader) => pod !== leader,
        },
      );
      const acquired = Date.parse(f.newLease.acquireTime);
      assert.ok(f.released, "the leader released the Lease on SIGTERM (holderIdentity emptied)");
      const releasedAt = Date.parse(f.released.renewTime);
      // Released, the Lease is taken at the standby's next attempt.
      assert.ok(
        acquired - releasedAt <= MAX_RETRY_MS + SLACK_MS,
        `taken ${acquired - releasedAt} ms after the release`,
      );
      assert.ok(
        acquired - f.t0 <= LEASE_MS + MAX_RETRY_MS,
        `taken ${acquired - f.t0} ms after the delete`,
      );
      console.log(
        `      (graceful: released ${releasedAt - f.t0} ms after the delete, taken over by ` +
          `${f.newPod} ${acquired - f.t0} ms after it; ${figures(f)})`,
      );
    });

    it("SIGKILL of the leader's process: another replica takes over once the Lease expires, nothing lost", async () => {
      const f = await failover(
        "SIGKILL of the leader",
        async (leader) => {
          const id = leader.status.containerStatuses?.[0]?.containerID?.replace(/^[a-z]+:\/\//, "");
          assert.ok(id, `${leader.metadata.name} has a container`);
          process.kill(containerInitPid(id), "SIGKILL");
        },
        {
          // The kubelet restarts the killed container at once, as a new candidate (a new
          // identity) that may outrun the standby: each waits a whole Lease duration from when it
          // first saw the last renew, and the restarted one may have seen it first.
          who: "the standby or the killed pod's restarted container",
          mayLead: (pod, leader, standby) => pod === standby || pod === leader,
        },
      );
      const acquired = Date.parse(f.newLease.acquireTime);
      const lastRenew = Date.parse(f.lastOldRenew);
      assert.equal(
        f.released,
        undefined,
        "a killed leader cannot release the Lease: the new leader waited for it to expire",
      );
      // Never two leaders: a candidate's clock for the Lease starts when it sees the last renew.
      assert.ok(
        acquired - lastRenew >= LEASE_MS,
        `taken ${acquired - lastRenew} ms after the last renew (${f.lastOldRenew}), before the Lease expired`,
      );
      // The standby sees the last renew at most one attempt after it was made, and the expiry at
      // most one attempt after it passed.
      assert.ok(
        acquired - f.t0 <= LEASE_MS + 2 * MAX_RETRY_MS + SLACK_MS,
        `taken ${acquired - f.t0} ms after the kill`,
      );
      console.log(
        `      (SIGKILL: taken over by ${f.newPod} ${acquired - f.t0} ms after the kill, ` +
          `${acquired - lastRenew} ms after the last renew; ${figures(f)})`,
      );
    });

    it("both replicas are Ready again afterwards: the killed one restarted, the deleted one replaced", async () => {
      const start = Date.now();
      const running = await bothReady();
      const restarts = running.map((p) => p.status.containerStatuses![0]!.restartCount);
      assert.deepEqual(
        restarts.sort(),
        [0, 1],
        "the killed container restarted once in its pod; the replacement never restarted",
      );
      console.log(`      (both Ready ${Date.now() - start} ms after the last failover check)`);
    });

    it("each replica's CPU and memory, from the kubelet, stay well under the Deployment's limits", async () => {
      const deployment = JSON.parse(
        (await rig.kubectl(["-n", VC.namespace, "get", "deployment", "vgate-sync", "-o", "json"]))
          .stdout,
      ) as {
        spec: {
          template: { spec: { containers: { resources: { limits: Record<string, string> } }[] } };
        };
      };
      const limits = deployment.spec.template.spec.containers[0]!.resources.limits;
      const memLimit = bytes(limits["memory"]!);
      const cpuLimit = millicores(limits["cpu"]!);
      // The kubelet's first stats of a restarted container come a few seconds after it starts.
      let usage: ContainerUsage[] = [];
      await until(
        async () =>
          (usage = await containerUsage(rig, VC.namespace, "vgate-sync-", "vgate-sync")).length ===
          2,
        "the kubelet's stats of both vgate-sync containers",
        60_000,
      );
      for (const u of usage) {
        console.log(
          `      ${u.pod}: ${u.millicores.toFixed(0)} m CPU, working set ${(u.workingSetBytes / 2 ** 20).toFixed(0)} MiB ` +
            `(limits ${limits["cpu"]} CPU, ${limits["memory"]}), after the update streams of the failovers`,
        );
        // The sandboxes' children are in the container too: their memory counts against the limit.
        assert.ok(
          u.workingSetBytes < (memLimit * 2) / 3,
          `${u.pod}: working set within 2/3 of the limit`,
        );
        assert.ok(u.millicores < cpuLimit, `${u.pod}: CPU under the limit`);
      }
    });
  },
);
