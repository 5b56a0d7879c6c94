// vCluster's real syncer (`vcluster start`, v0.34.0, built by make kube) as a plain process inside
// the node rig's network namespace, between a virtual control plane of its own (etcd with TLS,
// kube-apiserver, kube-controller-manager: virtual-control-plane.ts) and the rig's cluster as host.
// What vCluster's Helm chart would make on the host (the namespace, the config Secret, the workload
// ServiceAccount, the Service in front of the syncer) the rig makes itself; the chart's values are
// merged into the syncer's config as Helm merges them (syncer-config.ts), with telemetry off.
//
// Nothing leaves the machine: the namespace has no default route, so any call the syncer made to
// the internet would fail (test/cluster/vcluster-rig.test.ts shows it makes none). Nothing is left
// behind: every process is the node rig's (rig.startInNetns), stopped with it, and the syncer runs
// with its working directory in the rig's.

import { mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kubectlFor, type Kubectl } from "../kubectl.js";
import { waitUntil, type Supervised } from "../kube/processes.js";
import type { NodeRig } from "../node/node-rig.js";
import {
  startVirtualControlPlane,
  type VirtualControlPlane,
} from "../node/virtual-control-plane.js";
import { syncerConfig, type Values } from "./syncer-config.js";
import type { VClusterParts } from "./vcluster-binary.js";

export interface VClusterRigOptions {
  /** The virtual cluster's name; "vc". */
  name?: string;
  /** Its host namespace; "vcluster-<name>". */
  hostNamespace?: string;
  /** The user's values (vcluster.yaml), merged over the chart's. */
  values?: Values;
  /** More environment for the syncer (e.g. VCLUSTER_PHYSICAL_CLIENT_QPS, its host client's limit). */
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface VClusterRig {
  name: string;
  hostNamespace: string;
  virtual: VirtualControlPlane;
  /** kubectl against the virtual cluster (admin). */
  vkubectl: Kubectl;
  /** The syncer's merged config, as written to its --config file. */
  config: string;
  syncer: Supervised;
  /** The host name the syncer gives a namespaced virtual object: `<name>-x-<namespace>-x-<vc>`. */
  hostName(namespace: string, name: string): string;
  /** Restarts the syncer with other user values (the control plane and its data stay). */
  restartSyncer(values: Values): Promise<void>;
  stop(): Promise<void>;
}

const PROXY_PORT = 8443;

export async function startVCluster(
  rig: NodeRig,
  parts: VClusterParts,
  opts: VClusterRigOptions = {},
): Promise<VClusterRig> {
  const name = opts.name ?? "vc";
  const hostNamespace = opts.hostNamespace ?? `vcluster-${name}`;
  const timeout = opts.timeoutMs ?? 120_000;
  const say = opts.log ?? (() => undefined);
  const virtual = await startVirtualControlPlane(rig, { forVCluster: true, timeoutMs: timeout });
  say(`virtual control plane ready at ${virtual.url}`);
  const dir = join(rig.dir, "vcluster");
  mkdirSync(dir, { mode: 0o700 });
  const configFile = join(dir, "vcluster.yaml");
  const files = virtual.files;
  const configFor = (values: Values) =>
    syncerConfig(parts.moduleDir, values, {
      virtualKubeconfig: virtual.adminKubeconfig,
      caCert: files.caCert,
      caKey: files.caKey,
      frontProxyCaCert: files.frontProxyCaCert,
      etcdEndpoint: files.etcdUrl.replace(/^https:\/\//, ""),
      etcdCaFile: files.caCert,
      etcdCertFile: files.etcdClientCert,
      etcdKeyFile: files.etcdClientKey,
      proxyPort: PROXY_PORT,
    });
  let config = configFor(opts.values ?? {});
  await writeFile(configFile, config, { mode: 0o600 });

  // --- what the chart makes on the host ----------------------------------------------------------
  const k = rig.kubectl;
  const must = async (args: string[], input?: string) => {
    const r = await k(args, input === undefined ? {} : { input });
    if (r.code !== 0) throw new Error(`vcluster rig: kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  await must(["create", "namespace", hostNamespace]);
  const writeSecret = async (yaml: string) =>
    must(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `vc-config-${name}`, namespace: hostNamespace },
        stringData: { "config.yaml": yaml },
      }),
    );
  await writeSecret(config);
  await must(["-n", hostNamespace, "create", "serviceaccount", `vc-workload-${name}`]);
  // The Service in front of the syncer's API proxy (the chart's selects the vCluster pod; here it
  // points at the node's address, where the syncer listens).
  await must(
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name, namespace: hostNamespace },
          spec: { ports: [{ name: "https", port: 443, targetPort: PROXY_PORT, protocol: "TCP" }] },
        },
        {
          apiVersion: "v1",
          kind: "Endpoints",
          metadata: { name, namespace: hostNamespace },
          subsets: [
            {
              addresses: [{ ip: rig.nodeIp }],
              ports: [{ name: "https", port: PROXY_PORT, protocol: "TCP" }],
            },
          ],
        },
      ],
    }),
  );

  const vkubectl = kubectlFor(virtual.adminKubeconfig, join(dir, "kubectl-cache"));
  const hostName = (namespace: string, object: string) => `${object}-x-${namespace}-x-${name}`;
  const startSyncer = () =>
    // As in the vCluster pod: POD_NAME and POD_NAMESPACE select the in-cluster start (without them
    // it tries the Pro-only standalone mode); KUBECONFIG is the host's.
    rig.startInNetns("vcluster-syncer", "env", [
      "-C",
      dir,
      `POD_NAME=${name}-0`,
      `POD_NAMESPACE=${hostNamespace}`,
      `NAMESPACE=${hostNamespace}`,
      `VCLUSTER_NAME=${name}`,
      `KUBECONFIG=${rig.adminKubeconfig}`,
      ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
      parts.binary,
      "start",
      `--config=${configFile}`,
    ]);
  let syncer = startSyncer();
  // The pod syncer waits for the virtual kube-dns Service's host copy (CoreDNS is off here, and
  // nothing needs to answer behind it); its host copy also shows the Service syncer at work.
  const ready = async () => {
    await waitUntil(
      "the virtual kube-system/kube-dns Service",
      syncer,
      async () =>
        (
          await vkubectl(["apply", "-f", "-"], {
            input: JSON.stringify({
              apiVersion: "v1",
              kind: "Service",
              metadata: { name: "kube-dns", namespace: "kube-system" },
              spec: {
                ports: [{ name: "dns", port: 53, protocol: "UDP" }],
                selector: { k: "none" },
              },
            }),
          })
        ).code === 0,
      timeout,
    );
    await waitUntil(
      "the syncer's host copy of kube-dns",
      syncer,
      async () =>
        (await k(["-n", hostNamespace, "get", "service", hostName("kube-system", "kube-dns")]))
          .code === 0,
      timeout,
    );
  };
  await ready();
  say("vCluster's syncer is syncing");
  return {
    name,
    hostNamespace,
    virtual,
    vkubectl,
    get config() {
      return config;
    },
    get syncer() {
      return syncer;
    },
    hostName,
    restartSyncer: async (values) => {
      await syncer.stop();
      config = configFor(values);
      await writeFile(configFile, config, { mode: 0o600 });
      await writeSecret(config);
      syncer = startSyncer();
      await ready();
    },
    stop: async () => {
      await syncer.stop();
      virtual.admin.close();
    },
  };
}
