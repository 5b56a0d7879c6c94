// An emulated cluster with vgate installed: the API server emulator with the real OwnedAccessKey
// CRD from manifests/, RBAC, and a real `vgate serve` process wired in through
// manifests/webhook-configurations.yaml (caBundle filled in) and a Service with Endpoints, as an
// install in a cluster would. `make apiserver` and the contract suite start it.

import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { selfSignedTls } from "../../webhook/src/server/tls.js";
import { startApiServer, type KubeObject, type TestApiServer } from "./apiserver/index.js";
import { repoFile, repoRoot } from "./fixtures.js";
import { httpsRequest } from "./https-client.js";

export const VGATE_NAMESPACE = "vgate-system";
export const VGATE_SERVICE = "vgate";
/** The identity vgate runs as, like its pod's service account. */
export const VGATE_USER = `system:serviceaccount:${VGATE_NAMESPACE}:vgate`;

export interface EmulatedClusterOptions {
  /** Port for the API server; a free one unless set. */
  apiPort?: number;
  /** vgate's log lines go here (a file path); discarded unless set. */
  vgateLog?: string;
  /** vgate's --log-level; "info" unless set. */
  logLevel?: string;
}

export interface EmulatedCluster {
  api: TestApiServer;
  /** An admin (system:masters) kubeconfig. */
  kubeconfigPath: string;
  /** https://127.0.0.1:PORT of the vgate process. */
  vgateUrl: string;
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startEmulatedCluster(
  opts: EmulatedClusterOptions = {},
): Promise<EmulatedCluster> {
  const api = await startApiServer({
    crds: "manifests",
    authorization: "rbac",
    clientCertificates: true,
    ...(opts.apiPort ? { port: opts.apiPort } : {}),
  });
  let vgate: ChildProcess | undefined;
  try {
    for (const ns of ["default", "kube-system", "kube-public", VGATE_NAMESPACE]) {
      api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
    const kubeconfig = await vgateIdentity(api);
    const dir = await mkdtemp(join(tmpdir(), "vgate-cluster-"));
    // The serving certificate names the Service, as kube-apiserver checks it against caBundle.
    const tls = await selfSignedTls([`${VGATE_SERVICE}.${VGATE_NAMESPACE}.svc`, "localhost"]);
    await writeFile(join(dir, "tls.crt"), tls.cert);
    await writeFile(join(dir, "tls.key"), tls.key, { mode: 0o600 });
    const port = await freePort();
    vgate = startVgate(dir, port, kubeconfig, opts);
    const vgateUrl = `https://127.0.0.1:${port}`;
    await waitReady(`${vgateUrl}/readyz`, vgate, 20_000);
    registerService(api, port);
    installWebhooks(api, Buffer.from(tls.cert).toString("base64"));
    const child = vgate;
    return {
      api,
      kubeconfigPath: api.kubeconfigPath,
      vgateUrl,
      stop: async () => {
        await stopProcess(child);
        await api.close();
      },
    };
  } catch (err) {
    if (vgate) await stopProcess(vgate);
    await api.close();
    throw err;
  }
}

/** vgate's service account: a token, and the least RBAC it needs (a later issue ships this). */
async function vgateIdentity(api: TestApiServer): Promise<string> {
  const token = `vgate-${Math.random().toString(36).slice(2)}`;
  api.addToken(token, {
    user: VGATE_USER,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${VGATE_NAMESPACE}`],
  });
  const rbac = "rbac.authorization.k8s.io/v1";
  api.put({
    apiVersion: rbac,
    kind: "ClusterRole",
    metadata: { name: "vgate" },
    rules: [
      {
        apiGroups: [`management.${api.groupDomain}`],
        resources: ["ownedaccesskeys"],
        verbs: ["get", "list", "watch"],
      },
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["subjectaccessreviews"],
        verbs: ["create"],
      },
    ],
  });
  api.put({
    apiVersion: rbac,
    kind: "ClusterRoleBinding",
    metadata: { name: "vgate" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "vgate" },
    subjects: [{ kind: "ServiceAccount", name: "vgate", namespace: VGATE_NAMESPACE }],
  });
  return api.writeKubeconfig(token, "vgate");
}

function startVgate(
  dir: string,
  port: number,
  kubeconfig: string,
  opts: EmulatedClusterOptions,
): ChildProcess {
  const child = spawn(
    resolve(repoRoot, "webhook/bin/vgate"),
    [
      "serve",
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      `--tls-cert-file=${join(dir, "tls.crt")}`,
      `--tls-private-key-file=${join(dir, "tls.key")}`,
      `--kubeconfig=${kubeconfig}`,
      `--log-level=${opts.logLevel ?? "info"}`,
    ],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, KUBECONFIG: "" } },
  );
  if (opts.vgateLog) {
    const log = createWriteStream(opts.vgateLog, { flags: "a" });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  return child;
}

/** The Service the webhook configurations name, with Endpoints at the local vgate process. */
function registerService(api: TestApiServer, port: number): void {
  const metadata = { name: VGATE_SERVICE, namespace: VGATE_NAMESPACE };
  api.put({
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: { ports: [{ name: "https", port: 443, targetPort: port, protocol: "TCP" }] },
  });
  api.put({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata,
    subsets: [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port }] }],
  });
}

/** manifests/webhook-configurations.yaml as shipped, with the caBundle an installer fills in. */
function installWebhooks(api: TestApiServer, caBundle: string): void {
  for (const doc of parseAllDocuments(repoFile("manifests/webhook-configurations.yaml"))) {
    const config = doc.toJS() as KubeObject;
    for (const w of (config["webhooks"] as Json[] | undefined) ?? []) {
      (w["clientConfig"] as Json)["caBundle"] = caBundle;
    }
    api.put(config);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolvePort(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`vgate exited with ${child.exitCode} at start`);
    const ok = await httpsRequest(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`vgate did not become ready within ${timeoutMs} ms (${url})`);
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveStop();
    });
    child.kill("SIGTERM");
  });
}
