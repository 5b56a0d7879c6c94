// A real single-node Kubernetes cluster for the cluster tier (make test-cluster) and the playground
// (make cluster): etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Debian's containerd
// and runc, kubelet and kube-proxy, each a plain process inside a network namespace this rig makes.
//
// Nothing leaves the machine: every component runs inside the namespace (`nsenter --net`, so
// kubelet and containerd still share the host's mount namespace, which volume mounts need), so
// kube-apiserver reaches a Service's ClusterIP through the kube-proxy rules of that namespace, and
// iptables rules, net sysctls and the CNI bridge stay in it. The host gets one veth pair and
// routes to the rig's pod and service ranges through it; nothing listens on the host's interfaces.
//
// Nothing is left behind: what the rig changes on the host is written to <dir>/rig.json before it
// changes it, and stop() (or the keeper, rig-keeper.ts, when the test run dies) undoes it all.

import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { kubectlFor, type Kubectl } from "../kubectl.js";
import { kubeCacheDir } from "../kube/binaries.js";
import { KubeTestClient } from "../kube/kube-client.js";
import { writeKubeconfig } from "../kube/kubeconfig-file.js";
import {
  clientCert,
  serviceAccountKeys,
  servingCert,
  testCa,
  type CertAndKey,
} from "../kube/pki.js";
import { supervise, waitUntil, type Supervised } from "../kube/processes.js";
import {
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
} from "./component-configs.js";
import { HOST_PATHS_WRITTEN, KUBELET_SYSCTLS } from "./host-state.js";
import type { RigImage } from "./images.js";
import { nodeRigPrerequisites } from "./prerequisites.js";
import { loadState, saveState, teardown, type RigState } from "./teardown.js";

const run = promisify(execFile);
const KEEPER = join(dirname(fileURLToPath(import.meta.url)), "rig-keeper.js");

/** Rigs on one machine take different slots: addresses and names are derived from the slot. */
const SLOTS = 8;

export interface NodeRigOptions {
  /** The pause image containerd runs as each pod's sandbox. */
  pause: RigImage;
  /** More images to load onto the node before it starts. */
  images?: readonly RigImage[];
  /** More kube-apiserver flags (`--name=value`). */
  apiserverArgs?: readonly string[];
  /** How long each component may take to become ready; 120 s (CI machines are slow). */
  startTimeoutMs?: number;
  /** Progress lines ("etcd ready", …); default: none. */
  log?: (line: string) => void;
}

export interface NodeRig {
  /** The rig's directory: certificates, logs/<component>.log, kubeconfigs, containerd, kubelet. */
  dir: string;
  /** The node's address, inside the rig's network namespace, reachable from the host. */
  nodeIp: string;
  /** https://NODE_IP:6443 */
  url: string;
  nodeName: string;
  /** `ip netns` name of the rig's network namespace, and its inode. */
  netns: string;
  netnsInode: number;
  /** The ranges the rig routes from the host into its namespace. */
  podCidr: string;
  serviceCidr: string;
  ca: CertAndKey;
  /** An admin (system:masters) kubeconfig that works from the host. */
  adminKubeconfig: string;
  admin: KubeTestClient;
  kubectl: Kubectl;
  /** Imports an OCI archive into the node's containerd (what `kind load` does). */
  loadImage(image: RigImage): Promise<void>;
  /**
   * Restarts kube-apiserver with `args` replacing its extra flags, as editing a control-plane
   * manifest does; etcd keeps its data. Resolves once /readyz answers 200.
   */
  restartApiServer(args: readonly string[]): Promise<void>;
  /**
   * Starts a long-running process inside the rig's network namespace, supervised like the rig's
   * own (log in <dir>/logs/<name>.log; stopped by stop(), and by the keeper if the run dies).
   */
  startInNetns(name: string, cmd: string, args: readonly string[]): Supervised;
  /** Runs a command inside the rig's network namespace. */
  inNetns(cmd: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }>;
  /** The last lines of a component's log (etcd, kube-apiserver, kubelet, containerd, …). */
  logTail(component: string, lines?: number): Promise<string>;
  stop(): Promise<void>;
}

interface Slot {
  index: number;
  netns: string;
  vethHost: string;
  vethNode: string;
  hostIp: string;
  nodeIp: string;
  podCidr: string;
  nodePodCidr: string;
  serviceCidr: string;
  kubernetesServiceIp: string;
}

function slotAddresses(i: number): Slot {
  return {
    index: i,
    netns: `vgate-rig-${i}`,
    vethHost: `vgrig${i}h`,
    vethNode: `vgrig${i}n`,
    hostIp: `10.201.${i}.1`,
    nodeIp: `10.201.${i}.2`,
    podCidr: `10.244.${i * 16}.0/20`,
    nodePodCidr: `10.244.${i * 16}.0/24`,
    serviceCidr: `10.96.${i * 16}.0/20`,
    kubernetesServiceIp: `10.96.${i * 16}.1`,
  };
}

async function netnsInode(name: string): Promise<number> {
  return statSync(`/run/netns/${name}`).ino;
}

/** The first slot whose namespace name is free; `ip netns add` makes taking it atomic. */
async function takeSlot(): Promise<Slot> {
  const { stdout: routes } = await run("ip", ["-4", "route", "show", "table", "all"]);
  for (let i = 0; i < SLOTS; i++) {
    const s = slotAddresses(i);
    // Never shadow a route the host already has (another rig's, or the host's own network).
    const prefixes = [`10.201.${i}.`, s.podCidr, s.serviceCidr];
    if (prefixes.some((p) => routes.includes(p))) continue;
    try {
      await run("ip", ["netns", "add", s.netns]);
      return s;
    } catch {
      // taken: try the next
    }
  }
  throw new Error(`node rig: all ${SLOTS} slots are taken (ip netns list shows vgate-rig-*)`);
}

function httpsStatus(url: string, tls: { ca: string; cert: string; key: string }): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { ...tls, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

export async function startNodeRig(opts: NodeRigOptions): Promise<NodeRig> {
  const missing = nodeRigPrerequisites();
  if (missing) throw new Error(missing);
  const say = opts.log ?? (() => undefined);
  const timeout = opts.startTimeoutMs ?? 120_000;
  const bins = kubeCacheDir();
  const dir = await mkdtemp("/tmp/vgate-node-");
  const logs = join(dir, "logs");
  mkdirSync(logs);

  // Record what exists before anything is made, so teardown removes only what the rig made.
  const netnsBefore = existsSync("/run/netns") ? readdirSync("/run/netns") : [];
  const mounted = (p: string) =>
    readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .some((l) => l.split(" ")[4] === p);
  const madePaths = HOST_PATHS_WRITTEN.filter((p) => !existsSync(p));
  const madeNetnsMount = !mounted("/run/netns");
  const slot = await takeSlot();
  const state: RigState = {
    dir,
    netns: slot.netns,
    netnsInode: await netnsInode(slot.netns),
    vethHost: slot.vethHost,
    routes: [],
    cgroup: `/vgate-rig-${slot.index}`,
    madePaths: [...madePaths],
    madeNetnsMount,
    netnsBefore,
    sysctlsBefore: Object.fromEntries(
      KUBELET_SYSCTLS.map((k) => [k, readFileSync(join("/proc/sys", k), "utf8").trim()]),
    ),
  };
  saveState(state);
  // From here on, the keeper undoes everything if this process dies.
  const keeper = spawn(process.execPath, [KEEPER, dir], {
    detached: true,
    stdio: ["pipe", "ignore", "inherit"],
  });
  keeper.unref();
  (keeper.stdin as unknown as { unref?: () => void }).unref?.();

  const procs = new Map<string, Supervised>();
  const ns = ["nsenter", `--net=/run/netns/${slot.netns}`];
  const startIn = (name: string, cmd: string, args: readonly string[]): Supervised => {
    const p = supervise(name, ns[0]!, [...ns.slice(1), cmd, ...args], join(logs, `${name}.log`));
    procs.set(name, p);
    return p;
  };
  const stopAll = async () => {
    await teardown(dir);
    await Promise.all([...procs.values()].map((p) => p.stop()));
    await stopKeeper(keeper);
  };

  try {
    // --- network -----------------------------------------------------------------------------
    await run("ip", ["link", "add", slot.vethHost, "type", "veth", "peer", "name", slot.vethNode]);
    await run("ip", ["link", "set", slot.vethNode, "netns", slot.netns]);
    await run("ip", ["addr", "add", `${slot.hostIp}/30`, "dev", slot.vethHost]);
    await run("ip", ["link", "set", slot.vethHost, "up"]);
    const inNs = (cmd: string, args: readonly string[]) =>
      run("ip", ["netns", "exec", slot.netns, cmd, ...args]);
    await inNs("ip", ["link", "set", "lo", "up"]);
    await inNs("ip", ["addr", "add", `${slot.nodeIp}/30`, "dev", slot.vethNode]);
    await inNs("ip", ["link", "set", slot.vethNode, "up"]);
    // No default route: the namespace reaches the host's end of the veth and nothing else, so no
    // packet from the rig can leave the machine, even on a host that forwards. The service range
    // needs a route all the same: a locally made packet (kube-apiserver calling a webhook's
    // ClusterIP) is routed before kube-proxy's DNAT rewrites it to a pod and routes it again. An
    // address no Service has goes to the host's end of the veth, whose routes send it back.
    await inNs("ip", ["route", "add", slot.serviceCidr, "dev", slot.vethNode, "src", slot.nodeIp]);
    for (const [key, value] of [
      ["net.ipv4.ip_forward", "1"],
      ["net.bridge.bridge-nf-call-iptables", "1"],
      ["net.ipv4.conf.all.route_localnet", "1"],
    ] as const) {
      await inNs("sysctl", ["-qw", `${key}=${value}`]);
    }
    for (const cidr of [slot.podCidr, slot.serviceCidr]) {
      const route = `${cidr} via ${slot.nodeIp}`;
      state.routes.push(route);
      saveState(state);
      await run("ip", ["route", "add", ...route.split(" ")]);
    }
    say(
      `network namespace ${slot.netns}: node ${slot.nodeIp}, pods ${slot.podCidr}, services ${slot.serviceCidr}`,
    );

    // --- certificates --------------------------------------------------------------------------
    const pki = join(dir, "pki");
    mkdirSync(pki, { mode: 0o700 });
    const ca = await testCa("vgate-node-rig-ca");
    const [serving, adminCert] = await Promise.all([
      servingCert(
        ca,
        [
          "localhost",
          "kubernetes",
          "kubernetes.default",
          "kubernetes.default.svc",
          "kubernetes.default.svc.cluster.local",
        ],
        [slot.nodeIp, slot.kubernetesServiceIp],
      ),
      clientCert(ca, "admin", ["system:masters"]),
    ]);
    const kubeletServing = await servingCert(ca, ["vgate-node"], [slot.nodeIp]);
    const sa = serviceAccountKeys();
    const files: Record<string, string> = {
      "ca.crt": ca.cert,
      "ca.key": ca.key,
      "apiserver.crt": serving.cert,
      "apiserver.key": serving.key,
      "admin.crt": adminCert.cert,
      "admin.key": adminCert.key,
      "kubelet.crt": kubeletServing.cert,
      "kubelet.key": kubeletServing.key,
      "sa.pub": sa.publicPem,
      "sa.key": sa.privatePem,
    };
    for (const [name, content] of Object.entries(files)) {
      await writeFile(join(pki, name), content, { mode: 0o600 });
    }
    const url = `https://${slot.nodeIp}:6443`;
    const adminKubeconfig = await writeKubeconfig(join(dir, "admin.kubeconfig"), {
      server: url,
      caPem: ca.cert,
      name: "vgate-node-rig",
      client: adminCert,
    });
    const tls = { ca: ca.cert, cert: adminCert.cert, key: adminCert.key };

    // --- control plane -------------------------------------------------------------------------
    const etcd = startIn("etcd", join(bins, "etcd"), [
      `--data-dir=${join(dir, "etcd")}`,
      "--listen-client-urls=http://127.0.0.1:2379",
      "--advertise-client-urls=http://127.0.0.1:2379",
      "--listen-peer-urls=http://127.0.0.1:2380",
      "--listen-metrics-urls=http://127.0.0.1:2381",
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ]);
    const apiserverBase = [
      "--etcd-servers=http://127.0.0.1:2379",
      "--bind-address=0.0.0.0",
      `--advertise-address=${slot.nodeIp}`,
      "--secure-port=6443",
      `--cert-dir=${pki}`,
      `--tls-cert-file=${join(pki, "apiserver.crt")}`,
      `--tls-private-key-file=${join(pki, "apiserver.key")}`,
      `--client-ca-file=${join(pki, "ca.crt")}`,
      `--kubelet-client-certificate=${join(pki, "admin.crt")}`,
      `--kubelet-client-key=${join(pki, "admin.key")}`,
      `--kubelet-certificate-authority=${join(pki, "ca.crt")}`,
      "--kubelet-preferred-address-types=InternalIP",
      `--service-cluster-ip-range=${slot.serviceCidr}`,
      "--allow-privileged=true",
      "--service-account-issuer=https://kubernetes.default.svc",
      `--service-account-key-file=${join(pki, "sa.pub")}`,
      `--service-account-signing-key-file=${join(pki, "sa.key")}`,
      "--profiling=false",
      "--v=1",
    ];
    const withDefaultAuthz = (args: readonly string[]) =>
      args.some(
        (a) => a.startsWith("--authorization-config=") || a.startsWith("--authorization-mode="),
      )
        ? args
        : ["--authorization-mode=Node,RBAC", ...args];
    let apiserverExtra = withDefaultAuthz(opts.apiserverArgs ?? []);
    const startApiserver = async () => {
      const p = startIn("kube-apiserver", join(bins, "kube-apiserver"), [
        ...apiserverBase,
        ...apiserverExtra,
      ]);
      await waitUntil(
        "kube-apiserver /readyz",
        p,
        async () => (await httpsStatus(`${url}/readyz`, tls)) === 200,
        timeout,
      );
    };
    await waitUntil(
      "etcd",
      etcd,
      async () =>
        (await inNs("curl", ["-sf", "http://127.0.0.1:2379/health"])).stdout.includes("true"),
      timeout,
    );
    await startApiserver();
    say("kube-apiserver ready");
    const kcKubeconfig = adminKubeconfig;
    startIn("kube-controller-manager", join(bins, "kube-controller-manager"), [
      `--kubeconfig=${kcKubeconfig}`,
      `--authentication-kubeconfig=${kcKubeconfig}`,
      `--authorization-kubeconfig=${kcKubeconfig}`,
      "--bind-address=127.0.0.1",
      "--secure-port=10257",
      `--service-account-private-key-file=${join(pki, "sa.key")}`,
      `--root-ca-file=${join(pki, "ca.crt")}`,
      `--cluster-signing-cert-file=${join(pki, "ca.crt")}`,
      `--cluster-signing-key-file=${join(pki, "ca.key")}`,
      "--use-service-account-credentials=true",
      "--leader-elect=false",
      "--controllers=*",
      "--allocate-node-cidrs=true",
      `--cluster-cidr=${slot.podCidr}`,
      "--node-cidr-mask-size=24",
      `--service-cluster-ip-range=${slot.serviceCidr}`,
    ]);
    startIn("kube-scheduler", join(bins, "kube-scheduler"), [
      `--kubeconfig=${kcKubeconfig}`,
      `--authentication-kubeconfig=${kcKubeconfig}`,
      `--authorization-kubeconfig=${kcKubeconfig}`,
      "--bind-address=127.0.0.1",
      "--secure-port=10259",
      "--leader-elect=false",
    ]);

    // --- container runtime ---------------------------------------------------------------------
    const ctrd = join(dir, "containerd");
    const cni = join(dir, "cni");
    mkdirSync(join(cni, "net.d"), { recursive: true });
    const sock = join(ctrd, "containerd.sock");
    await writeFile(join(dir, "containerd.toml"), containerdConfig(ctrd, cni, opts.pause.ref));
    await writeFile(join(cni, "net.d", "10-vgate-rig.conflist"), cniConfig(cni, slot.nodePodCidr));
    const containerd = startIn("containerd", "containerd", [
      "--config",
      join(dir, "containerd.toml"),
    ]);
    const ctr = (args: readonly string[]) =>
      run("ctr", ["--address", sock, "-n", "k8s.io", ...args], { maxBuffer: 16 << 20 });
    await waitUntil(
      "containerd",
      containerd,
      async () => (await ctr(["version"])).stdout.includes("Server"),
      timeout,
    );
    const loadImage = async (image: RigImage) => {
      await ctr(["images", "import", "--no-unpack=false", image.archive]).catch(async () =>
        ctr(["images", "import", image.archive]),
      );
      const { stdout } = await ctr(["images", "ls", "-q"]);
      if (!stdout.split("\n").includes(image.ref)) {
        throw new Error(
          `node rig: ${image.archive} was imported, but containerd has no image ${image.ref} (it has: ${stdout.trim().split("\n").join(", ")})`,
        );
      }
    };
    for (const image of [opts.pause, ...(opts.images ?? [])]) await loadImage(image);
    say("containerd ready, images loaded");

    // --- kubelet and kube-proxy ----------------------------------------------------------------
    // Pods go under a cgroup of the rig's own (in every v1 hierarchy), which teardown empties.
    for (const h of readdirSync("/sys/fs/cgroup")) {
      const p = join("/sys/fs/cgroup", h, state.cgroup);
      if (statSync(join("/sys/fs/cgroup", h)).isDirectory() && !existsSync(p)) {
        try {
          mkdirSync(p);
        } catch {
          // a hierarchy that refuses (unified with no controllers): kubelet does not use it
        }
      }
    }
    const nodeName = "vgate-node";
    const kubeletDir = join(dir, "kubelet");
    mkdirSync(kubeletDir);
    await writeFile(
      join(kubeletDir, "config.yaml"),
      kubeletConfig({ dir: kubeletDir, sock, pki, nodeIp: slot.nodeIp, cgroup: state.cgroup }),
    );
    const kubelet = startIn("kubelet", join(bins, "kubelet"), [
      `--config=${join(kubeletDir, "config.yaml")}`,
      `--kubeconfig=${adminKubeconfig}`,
      `--root-dir=${join(kubeletDir, "root")}`,
      `--cert-dir=${join(kubeletDir, "pki")}`,
      `--hostname-override=${nodeName}`,
      `--node-ip=${slot.nodeIp}`,
      "--v=1",
    ]);
    const admin = new KubeTestClient(url, { ca: ca.cert, client: adminCert });
    await waitUntil(
      `node ${nodeName} Ready`,
      kubelet,
      async () => {
        const res = await admin.request<{
          status?: { conditions?: { type: string; status: string }[] };
        }>("GET", `/api/v1/nodes/${nodeName}`);
        return (
          res.status === 200 &&
          (res.body.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
        );
      },
      timeout,
    );
    await writeFile(
      join(dir, "kube-proxy.yaml"),
      kubeProxyConfig(adminKubeconfig, slot.podCidr, nodeName),
    );
    const proxy = startIn("kube-proxy", join(bins, "kube-proxy"), [
      `--config=${join(dir, "kube-proxy.yaml")}`,
    ]);
    // kube-proxy has synced its rules once it has a NAT rule for the kubernetes Service.
    await waitUntil(
      "kube-proxy's rules for the kubernetes Service",
      proxy,
      async () =>
        (await inNs("iptables-save", ["-t", "nat"])).stdout.includes(
          `${slot.kubernetesServiceIp}/32`,
        ),
      timeout,
    );
    // Pods need their namespace's default ServiceAccount (kube-controller-manager makes it).
    await waitUntil(
      "the default ServiceAccount",
      procs.get("kube-controller-manager")!,
      async () =>
        (await admin.request("GET", "/api/v1/namespaces/default/serviceaccounts/default"))
          .status === 200,
      timeout,
    );
    say(`node ${nodeName} ready`);

    const kubectl = kubectlFor(adminKubeconfig, join(dir, "kubectl-cache"));
    let stopped = false;
    return {
      dir,
      nodeIp: slot.nodeIp,
      url,
      nodeName,
      netns: slot.netns,
      netnsInode: state.netnsInode,
      podCidr: slot.podCidr,
      serviceCidr: slot.serviceCidr,
      ca,
      adminKubeconfig,
      admin,
      kubectl,
      loadImage,
      restartApiServer: async (args) => {
        await procs.get("kube-apiserver")?.stop();
        apiserverExtra = withDefaultAuthz(args);
        await startApiserver();
      },
      startInNetns: (name, cmd, args) => {
        if (procs.has(name) && !procs.get(name)!.exited()) {
          throw new Error(`node rig: ${name} is running already`);
        }
        return startIn(name, cmd, args);
      },
      inNetns: (cmd, args) => inNs(cmd, args),
      logTail: async (component, lines = 30) => (await procs.get(component)?.logTail(lines)) ?? "",
      stop: async () => {
        if (stopped) return;
        stopped = true;
        admin.close();
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}

async function stopKeeper(keeper: ChildProcess): Promise<void> {
  if (keeper.exitCode !== null) return;
  const gone = new Promise<void>((r) => keeper.once("exit", () => r()));
  keeper.ref();
  keeper.stdin?.end();
  await gone;
}

/** Whether a state file says a rig in `dir` is still up (for the keeper test). */
export function rigIsUp(dir: string): boolean {
  const s = loadState(dir);
  return !!s && !s.down;
}
