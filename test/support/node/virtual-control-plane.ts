// A second control plane on the node rig, playing a virtual cluster's: its own etcd and
// kube-apiserver (make kube's binaries) with a CA of their own, started inside the rig's network
// namespace (NodeRig.startInNetns, so the rig stops them, and its keeper if the run dies) and
// listening on the node's address at other ports than the host's (etcd 2479/2480 on loopback,
// kube-apiserver 7443 on the node IP). Pods reach it there, as they reach the node; so does the
// host, by the rig's route. No controller-manager and no vCluster syncer run: the test plays
// their part.

import { mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kubeBinaries } from "../kube/binaries.js";
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
  const files: Record<string, string> = {
    "ca.crt": ca.cert,
    "apiserver.crt": serving.cert,
    "apiserver.key": serving.key,
    "sa.pub": sa.publicPem,
    "sa.key": sa.privatePem,
  };
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), content, { mode: 0o600 });
  }
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
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
  ]);
  await waitUntil(
    "virtual etcd",
    etcd,
    async () => (await rig.inNetns("curl", ["-sf", `${etcdUrl}/health`])).stdout.includes("true"),
    timeout,
  );
  const url = `https://${rig.nodeIp}:${port}`;
  const apiserver = rig.startInNetns("virtual-kube-apiserver", bins.kubeApiserver, [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${rig.nodeIp}`,
    `--advertise-address=${rig.nodeIp}`,
    `--secure-port=${port}`,
    `--cert-dir=${dir}`,
    `--tls-cert-file=${join(dir, "apiserver.crt")}`,
    `--tls-private-key-file=${join(dir, "apiserver.key")}`,
    `--client-ca-file=${join(dir, "ca.crt")}`,
    // The virtual cluster's own range: it only allocates ClusterIPs in its etcd; nothing routes it.
    "--service-cluster-ip-range=10.0.0.0/24",
    "--authorization-mode=RBAC",
    // No controller-manager makes service-account tokens for pods (none run here).
    "--disable-admission-plugins=ServiceAccount",
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
  return {
    url,
    ca,
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
