// A real Kubernetes control plane for tests: etcd and kube-apiserver (test/kube/ builds them),
// started the way controller-runtime's envtest starts them. Loopback only, a fresh CA, an admin
// client certificate in system:masters, service-account signing keys, RBAC authorization and a
// service CIDR. No controller-manager runs: no garbage collection, no namespace finalization.

import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeBinaries } from "./binaries.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";
import { KubeTestClient } from "./kube-client.js";
import { writeKubeconfig } from "./kubeconfig-file.js";
import { clientCert, serviceAccountKeys, servingCert, testCa, type CertAndKey } from "./pki.js";
import { freePort, supervise, waitUntil, type Supervised } from "./processes.js";

/** The admin: a client certificate in system:masters, like envtest's. */
export const ADMIN = { user: "admin", groups: ["system:masters"] } as const;

export interface ControlPlaneOptions {
  /** More kube-apiserver flags (`--name=value`), after the defaults, which they may override. */
  apiserverArgs?: readonly string[];
  /** Files written into the working directory before kube-apiserver starts (name → content). */
  files?: Record<string, string>;
  /**
   * More files and flags that must name the working directory (config files that point at each
   * other); called once it exists, before kube-apiserver starts.
   */
  configure?: (dir: string) => Promise<{ files?: Record<string, string>; args?: string[] }>;
  /** Listen on this port instead of a free one. */
  port?: number;
  /** How long each process may take to become ready; 60 s (CI machines are slow). */
  startTimeoutMs?: number;
}

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  url: string;
  /** The CA that signed the serving certificate and the client certificates. */
  ca: CertAndKey;
  /** A kubeconfig for ADMIN (client certificate). */
  adminKubeconfig: string;
  /** The admin's client certificate, for raw HTTPS clients. */
  adminCert: CertAndKey;
  /** http://127.0.0.1:PORT of etcd. */
  etcdUrl: string;
  /** The working directory: certificates, logs (etcd.log, kube-apiserver.log), kubeconfigs. */
  dir: string;
  /** A client acting as ADMIN. */
  admin: KubeTestClient;
  /**
   * Writes a kubeconfig whose user is a client certificate for `user` in `groups`; `server`
   * (a fault proxy's URL, say) instead of the API server's when given.
   */
  clientCertKubeconfig(user: string, groups?: readonly string[], server?: string): Promise<string>;
  /** Writes a kubeconfig whose user is the bearer token `token`. */
  tokenKubeconfig(token: string, name: string, server?: string): Promise<string>;
  /**
   * A bound token of the service account `namespace/name` from the TokenRequest API (what a
   * pod's projected token is); the namespace and service account are made when missing.
   */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  /**
   * A fault-injecting proxy in front of this API server, serving a certificate of this CA (so
   * kubeconfigs for it look like any other). Upstream it speaks as `client` when given, else with
   * the caller's bearer token. Close it when done.
   */
  faultProxy(opts?: { client?: CertAndKey }): Promise<FaultProxy>;
  /**
   * Stops kube-apiserver alone, as a control-plane restart does: etcd keeps running with its data.
   * Resolves once the process is gone (its port refuses connections).
   */
  stopApiServer(): Promise<void>;
  /**
   * Starts kube-apiserver again after stopApiServer(): the same port, flags and certificates, its
   * log appended to kube-apiserver.log. Resolves once /readyz answers 200.
   */
  startApiServer(): Promise<void>;
  stop(): Promise<void>;
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bins = kubeBinaries();
  const dir = await mkdtemp(join(tmpdir(), "vgate-kube-"));
  const timeout = opts.startTimeoutMs ?? 60_000;
  const ca = await testCa("vgate-test-kube-ca");
  const [serving, adminCert] = await Promise.all([
    servingCert(ca, ["localhost", "kubernetes", "kubernetes.default.svc"]),
    clientCert(ca, ADMIN.user, ADMIN.groups),
  ]);
  const sa = serviceAccountKeys();
  const configured = (await opts.configure?.(dir)) ?? {};
  const files: Record<string, string> = {
    ...configured.files,
    "ca.crt": ca.cert,
    "apiserver.crt": serving.cert,
    "apiserver.key": serving.key,
    "sa.pub": sa.publicPem,
    "sa.key": sa.privatePem,
    ...opts.files,
  };
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), content, { mode: 0o600 });
  }
  const etcd = await startEtcd(bins.etcd, dir, timeout);
  const apiserver: { proc?: Supervised } = {};
  try {
    const port = opts.port || (await freePort());
    const url = `https://127.0.0.1:${port}`;
    const args = withArgs(apiserverFlags(dir, port, etcd.url), [
      ...(configured.args ?? []),
      ...(opts.apiserverArgs ?? []),
    ]);
    const tls = { ca: ca.cert, cert: adminCert.cert, key: adminCert.key };
    const startApiServer = async () => {
      const proc = supervise(
        "kube-apiserver",
        bins.kubeApiserver,
        args,
        join(dir, "kube-apiserver.log"),
      );
      apiserver.proc = proc;
      await waitUntil(
        "/readyz",
        proc,
        async () => (await get(`${url}/readyz`, tls)) === 200,
        timeout,
      );
    };
    await startApiServer();
    // envtest waits for the default namespace too: the system namespaces controller makes it.
    await waitUntil(
      "the default namespace",
      apiserver.proc!,
      async () => (await get(`${url}/api/v1/namespaces/default`, tls)) === 200,
      timeout,
    );
    const kubeconfigs = join(dir, "kubeconfigs");
    await mkdir(kubeconfigs);
    const write = (name: string, user: { token?: string; client?: CertAndKey }, server = url) =>
      writeKubeconfig(
        join(kubeconfigs, `${safeName(name)}-${randomBytes(3).toString("hex")}.kubeconfig`),
        { server, caPem: ca.cert, name: safeName(name), ...user },
      );
    const adminKubeconfig = await write("admin", { client: adminCert });
    const admin = new KubeTestClient(url, { ca: ca.cert, client: adminCert });
    const stopProcesses = stopper(apiserver, etcd.proc);
    const proxies = new Set<FaultProxy>();
    return {
      url,
      ca,
      adminKubeconfig,
      adminCert,
      etcdUrl: etcd.url,
      dir,
      admin,
      clientCertKubeconfig: async (user, groups = [], server) =>
        write(user, { client: await clientCert(ca, user, groups) }, server),
      tokenKubeconfig: (token, name, server) => write(name, { token }, server),
      serviceAccountToken: (namespace, name) => serviceAccountToken(admin, namespace, name),
      faultProxy: async (proxyOpts = {}) => {
        const proxy = await startFaultProxy({
          upstream: url,
          upstreamCa: ca.cert,
          serving: await servingCert(ca, ["localhost"]),
          ...(proxyOpts.client ? { client: proxyOpts.client } : {}),
        });
        proxies.add(proxy);
        return proxy;
      },
      stopApiServer: async () => {
        await apiserver.proc?.stop();
        apiserver.proc = undefined;
      },
      startApiServer: async () => {
        if (apiserver.proc && !apiserver.proc.exited())
          throw new Error("kube-apiserver is running");
        await startApiServer();
      },
      stop: async () => {
        admin.close();
        await Promise.all([...proxies].map((p) => p.close()));
        await stopProcesses();
      },
    };
  } catch (err) {
    await stopper(apiserver, etcd.proc)();
    throw err;
  }
}

/** envtest's kube-apiserver flags, plus an advertise address so no default route is needed. */
function apiserverFlags(dir: string, port: number, etcdUrl: string): string[] {
  return [
    `--etcd-servers=${etcdUrl}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${port}`,
    `--cert-dir=${dir}`,
    `--tls-cert-file=${join(dir, "apiserver.crt")}`,
    `--tls-private-key-file=${join(dir, "apiserver.key")}`,
    `--client-ca-file=${join(dir, "ca.crt")}`,
    "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    // No controller-manager makes service-account tokens; envtest turns this plugin off too.
    "--disable-admission-plugins=ServiceAccount",
    "--authorization-mode=RBAC",
    `--service-account-issuer=https://127.0.0.1:${port}/`,
    `--service-account-key-file=${join(dir, "sa.pub")}`,
    `--service-account-signing-key-file=${join(dir, "sa.key")}`,
    "--profiling=false",
  ];
}

/**
 * The defaults and then `extra`. A structured --authorization-config replaces --authorization-mode
 * (kube-apiserver refuses both), so the default mode goes when one is given.
 */
function withArgs(defaults: string[], extra: readonly string[]): string[] {
  const config = extra.some((a) => a.startsWith("--authorization-config="));
  return [...defaults.filter((a) => !(config && a.startsWith("--authorization-mode="))), ...extra];
}

async function startEtcd(
  binary: string,
  dir: string,
  timeoutMs: number,
): Promise<{ url: string; proc: Supervised }> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const dataDir = join(dir, "etcd-data");
  const proc = supervise(
    "etcd",
    binary,
    [
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      // Test data need not survive a power cut; fsync dominates etcd's write latency otherwise.
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ],
    join(dir, "etcd.log"),
    // etcd goes last, so the whole working directory goes with it.
    { removeDir: dir },
  );
  try {
    await waitUntil(
      "/health",
      proc,
      async () => (await getHttp(`${url}/health`)) === 200,
      timeoutMs,
    );
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, proc };
}

/** Stops whichever kube-apiserver runs then (it may have been restarted), then etcd. */
function stopper(apiserver: { proc?: Supervised }, etcd: Supervised): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () =>
    (stopped ??= (async () => {
      await apiserver.proc?.stop();
      await etcd.stop();
    })());
}

async function serviceAccountToken(
  admin: KubeTestClient,
  namespace: string,
  name: string,
): Promise<string> {
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  await admin.apply({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } });
  const res = await admin.request<{ status?: { token?: string } }>(
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 24 * 3600 },
    },
  );
  const token = res.body.status?.token;
  if (res.status !== 201 || !token) {
    throw new Error(
      `TokenRequest for ${namespace}/${name}: ${res.status} ${JSON.stringify(res.body)}`,
    );
  }
  return token;
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9.-]+/g, "-").slice(0, 60) || "user";
}

function get(url: string, tls: { ca: string; cert: string; key: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...tls, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

function getHttp(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}
