// A second control plane on the node rig, playing a virtual cluster's: its own etcd and
// kube-apiserver (make kube's binaries) with a CA of their own, started inside the rig's network
// namespace (NodeRig.startInNetns, so the rig stops them, and its keeper if the run dies) and
// listening on the node's address at other ports than the host's (etcd 2479/2480 on loopback,
// kube-apiserver 7443 on the node IP). Pods reach it there, as they reach the node; so does the
// host, by the rig's route. By default no controller-manager and no vCluster syncer run: the test
// plays their part. `forVCluster` makes it the control plane vCluster's real syncer expects in front
// of it (test/support/vcluster/): etcd serving TLS with client certificates (the syncer talks to it
// directly), a front-proxy CA, the host's service range (the syncer gives virtual Services their
// host ClusterIPs), no endpoint reconciler (the syncer owns the `kubernetes` Endpoints) and a
// kube-controller-manager with vCluster's controller list.

import { mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kubeBinaries, kubeCacheDir } from "../kube/binaries.js";
import { KubeTestClient } from "../kube/kube-client.js";
import { writeKubeconfig } from "../kube/kubeconfig-file.js";
import {
  clientCert,
  serviceAccountKeys,
  servingCert,
  testCa,
  type CertAndKey,
} from "../kube/pki.js";
import { waitUntil } from "../kube/processes.js";
import type { NodeRig } from "./node-rig.js";

export interface VirtualControlPlane {
  /** https://<node IP>:<port> */
  url: string;
  ca: CertAndKey;
  /** The directory of its certificates, keys (mode 0600) and kubeconfig. */
  dir: string;
  /** With forVCluster: the files vCluster's config names (all in `dir`). */
  files: VirtualFiles;
  /** A system:masters kubeconfig (client certificate), for kubectl from the host. */
  adminKubeconfig: string;
  admin: KubeTestClient;
  /**
   * A bound token of `namespace/name` from the TokenRequest API, valid for `seconds`; the
   * service account must exist.
   */
  serviceAccountToken(namespace: string, name: string, seconds?: number): Promise<string>;
  /** Writes a kubeconfig (mode 0600) for this API server with `token` as its user. */
  tokenKubeconfig(path: string, token: string, name: string): Promise<string>;
}

export interface VirtualControlPlaneOptions {
  /** kube-apiserver's port on the node IP; 7443. etcd takes `etcdPort` and the next; 2479. */
  port?: number;
  etcdPort?: number;
  timeoutMs?: number;
  /** The control plane vCluster's syncer runs against (see the header). */
  forVCluster?: boolean;
}

export interface VirtualFiles {
  caCert: string;
  caKey: string;
  frontProxyCaCert: string;
  etcdUrl: string;
  etcdClientCert: string;
  etcdClientKey: string;
}

export async function startVirtualControlPlane(
  rig: NodeRig,
  opts: VirtualControlPlaneOptions = {},
): Promise<VirtualControlPlane> {
  const port = opts.port ?? 7443;
  const etcdPort = opts.etcdPort ?? 2479;
  const timeout = opts.timeoutMs ?? 120_000;
  const bins = kubeBinaries();
  const dir = join(rig.dir, "virtual");
  mkdirSync(dir, { mode: 0o700 });
  const ca = await testCa("vgate-virtual-cluster-ca");
  const [serving, adminCert] = await Promise.all([
    servingCert(ca, ["localhost", "kubernetes", "kubernetes.default.svc"], [rig.nodeIp]),
    clientCert(ca, "admin", ["system:masters"]),
  ]);
  const sa = serviceAccountKeys();
  const tlsEtcd = opts.forVCluster === true;
  const files: Record<string, string> = {
    "ca.crt": ca.cert,
    "ca.key": ca.key,
    "apiserver.crt": serving.cert,
    "apiserver.key": serving.key,
    "sa.pub": sa.publicPem,
    "sa.key": sa.privatePem,
  };
  if (tlsEtcd) {
    const frontProxyCa = await testCa("vgate-virtual-front-proxy-ca");
    const [etcdServing, etcdClient, frontProxyClient] = await Promise.all([
      servingCert(ca, ["localhost"]),
      clientCert(ca, "etcd-client"),
      clientCert(frontProxyCa, "front-proxy-client"),
    ]);
    Object.assign(files, {
      "etcd-server.crt": etcdServing.cert,
      "etcd-server.key": etcdServing.key,
      "etcd-client.crt": etcdClient.cert,
      "etcd-client.key": etcdClient.key,
      "front-proxy-ca.crt": frontProxyCa.cert,
      "front-proxy-client.crt": frontProxyClient.cert,
      "front-proxy-client.key": frontProxyClient.key,
    });
  }
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), content, { mode: 0o600 });
  }
  const f = (name: string) => join(dir, name);
  const scheme = tlsEtcd ? "https" : "http";
  const etcdUrl = `${scheme}://127.0.0.1:${etcdPort}`;
  const peerUrl = `http://127.0.0.1:${etcdPort + 1}`;
  const etcd = rig.startInNetns("virtual-etcd", bins.etcd, [
    `--data-dir=${join(dir, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    "--unsafe-no-fsync=true",
    "--log-level=warn",
    ...(tlsEtcd
      ? [
          `--cert-file=${f("etcd-server.crt")}`,
          `--key-file=${f("etcd-server.key")}`,
          `--trusted-ca-file=${f("ca.crt")}`,
          "--client-cert-auth=true",
        ]
      : []),
  ]);
  const etcdTls = tlsEtcd
    ? ["--cacert", f("ca.crt"), "--cert", f("etcd-client.crt"), "--key", f("etcd-client.key")]
    : [];
  await waitUntil(
    "virtual etcd",
    etcd,
    async () =>
      (await rig.inNetns("curl", ["-sf", ...etcdTls, `${etcdUrl}/health`])).stdout.includes("true"),
    timeout,
  );
  const url = `https://${rig.nodeIp}:${port}`;
  const modeArgs = tlsEtcd
    ? [
        `--etcd-cafile=${f("ca.crt")}`,
        `--etcd-certfile=${f("etcd-client.crt")}`,
        `--etcd-keyfile=${f("etcd-client.key")}`,
        // vCluster's syncer gives each virtual Service its host copy's ClusterIP, and writes the
        // `kubernetes` Service's Endpoints itself.
        `--service-cluster-ip-range=${rig.serviceCidr}`,
        "--endpoint-reconciler-type=none",
        `--proxy-client-cert-file=${f("front-proxy-client.crt")}`,
        `--proxy-client-key-file=${f("front-proxy-client.key")}`,
        `--requestheader-client-ca-file=${f("front-proxy-ca.crt")}`,
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      ]
    : [
        // The virtual cluster's own range: it only allocates ClusterIPs in its etcd; nothing
        // routes it.
        "--service-cluster-ip-range=10.0.0.0/24",
        // No controller-manager makes service-account tokens for pods (none run here).
        "--disable-admission-plugins=ServiceAccount",
      ];
  const apiserver = rig.startInNetns("virtual-kube-apiserver", bins.kubeApiserver, [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${rig.nodeIp}`,
    `--advertise-address=${rig.nodeIp}`,
    `--secure-port=${port}`,
    `--cert-dir=${dir}`,
    `--tls-cert-file=${join(dir, "apiserver.crt")}`,
    `--tls-private-key-file=${join(dir, "apiserver.key")}`,
    `--client-ca-file=${join(dir, "ca.crt")}`,
    ...modeArgs,
    "--authorization-mode=RBAC",
    "--allow-privileged=true",
    `--service-account-issuer=${url}`,
    `--service-account-key-file=${join(dir, "sa.pub")}`,
    `--service-account-signing-key-file=${join(dir, "sa.key")}`,
    "--profiling=false",
  ]);
  const admin = new KubeTestClient(url, { ca: ca.cert, client: adminCert });
  try {
    await waitUntil(
      "the virtual kube-apiserver's kube-system namespace",
      apiserver,
      async () =>
        (await admin.request("GET", "/readyz")).status === 200 &&
        (await admin.request("GET", "/api/v1/namespaces/kube-system")).status === 200,
      timeout,
    );
  } catch (err) {
    admin.close();
    throw err;
  }
  const adminKubeconfig = await writeKubeconfig(join(dir, "admin.kubeconfig"), {
    server: url,
    caPem: ca.cert,
    name: "virtual",
    client: adminCert,
  });
  if (tlsEtcd) {
    // vCluster's controller list for its own kube-controller-manager: no node IPAM or lifecycle,
    // no volume binding (the host does those).
    rig.startInNetns(
      "virtual-kube-controller-manager",
      join(kubeCacheDir(), "kube-controller-manager"),
      [
        `--kubeconfig=${adminKubeconfig}`,
        `--authentication-kubeconfig=${adminKubeconfig}`,
        `--authorization-kubeconfig=${adminKubeconfig}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${port + 2914}`,
        `--service-account-private-key-file=${f("sa.key")}`,
        `--root-ca-file=${f("ca.crt")}`,
        `--cluster-signing-cert-file=${f("ca.crt")}`,
        `--cluster-signing-key-file=${f("ca.key")}`,
        "--use-service-account-credentials=true",
        "--leader-elect=false",
        `--service-cluster-ip-range=${rig.serviceCidr}`,
        "--controllers=*,-nodeipam,-nodelifecycle,-persistentvolume-binder,-attachdetach,-persistentvolume-expander,-cloud-node-lifecycle,-ttl",
        "--node-monitor-grace-period=1h",
        "--node-monitor-period=1h",
      ],
    );
  }
  return {
    url,
    ca,
    dir,
    files: {
      caCert: f("ca.crt"),
      caKey: f("ca.key"),
      frontProxyCaCert: f("front-proxy-ca.crt"),
      etcdUrl,
      etcdClientCert: f("etcd-client.crt"),
      etcdClientKey: f("etcd-client.key"),
    },
    adminKubeconfig,
    admin,
    serviceAccountToken: async (namespace, name, seconds = 3600) => {
      const res = await admin.request<{ status?: { token?: string } }>(
        "POST",
        `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
        {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: seconds },
        },
      );
      const token = res.body.status?.token;
      // Never the body: a 201 carries the token.
      if (res.status !== 201 || !token) {
        throw new Error(
          `TokenRequest for ${namespace}/${name} in the virtual cluster: ${res.status}`,
        );
      }
      return token;
    },
    tokenKubeconfig: (path, token, name) =>
      writeKubeconfig(path, { server: url, caPem: ca.cert, name, token }),
  };
}
