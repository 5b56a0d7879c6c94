// A real cluster with vgate installed, as an install would do it: kube-apiserver and etcd from the
// test rig (test/support/kube/), the OwnedAccessKey CRD and the webhook configurations from
// manifests/, and a real `vgate serve` process running as the vgate-system/vgate service account
// with its own RBAC. As envtest does, each webhook's `service` reference is rewritten to
// `url: https://127.0.0.1:PORT/<path>` (no pods, no Service proxy here) and `caBundle` is filled in.
//
// One cluster serves the whole test run (`sharedCluster()`); `make apiserver` and tests that need
// their own flags start another with `startVgateCluster()`.

import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { DEFAULT_GROUP_DOMAIN } from "../../webhook/src/shared/ownedaccesskey.js";
import { repoFile, repoRoot } from "./fixtures.js";
import { httpsRequest } from "./https-client.js";
import {
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
} from "./kube/control-plane.js";
import { KubeTestClient, type KubeObject } from "./kube/kube-client.js";
import { installCrd } from "./kube/crds.js";
import { clientCert, servingCert, testCa, type CertAndKey } from "./kube/pki.js";
import { clusterRole, clusterRoleBinding, vgateRules } from "./kube/rbac.js";
import { freePort, supervise, waitUntil, type Supervised } from "./kube/processes.js";

export const VGATE_NAMESPACE = "vgate-system";
export const VGATE_SERVICE_ACCOUNT = "vgate";
/** The identity vgate runs as: its pod's service account. */
export const VGATE_USER = `system:serviceaccount:${VGATE_NAMESPACE}:${VGATE_SERVICE_ACCOUNT}`;

export interface VgateClusterOptions extends ControlPlaneOptions {
  /** vgate's --log-level; "info" unless set. */
  logLevel?: string;
  /** Where vgate's log goes; the cluster's working directory (removed at stop) unless set. */
  vgateLog?: string;
  /** More `vgate serve` flags. */
  vgateArgs?: readonly string[];
  /** More environment for the first `vgate serve` (the soak's heap probe). */
  vgateEnv?: Readonly<Record<string, string>>;
  /**
   * kube-apiserver's --authentication-token-webhook-cache-ttl; "1s" unless set, so that a disabled
   * key stops working at once ("0s": no cache).
   */
  tokenCacheTtl?: string;
}

export interface VgateCluster {
  plane: ControlPlane;
  /** https://127.0.0.1:PORT of kube-apiserver. */
  url: string;
  /** The CA of kube-apiserver (and of vgate's serving certificate). */
  caPem: string;
  /** An admin (system:masters) kubeconfig. */
  kubeconfigPath: string;
  /** A client acting as the admin. */
  admin: KubeTestClient;
  /** management.<group domain> */
  group: string;
  /** https://127.0.0.1:PORT of the vgate process. */
  vgateUrl: string;
  /** vgate's log file. */
  vgateLog: string;
  /** A client acting as `user` in `groups` (a client certificate signed by the cluster's CA). */
  clientFor(user: string, groups?: readonly string[]): Promise<KubeTestClient>;
  /**
   * The client certificate kube-apiserver presents to vgate's review routes (CN kube-apiserver,
   * signed by vgate's --client-ca-file), for tests that call them as kube-apiserver does.
   */
  apiserverClient: CertAndKey;
  /**
   * The CA of vgate's --client-ca-file, which signed `apiserverClient`: for tests that need other
   * certificates of it (another common name, an expired one).
   */
  apiserverClientCa: CertAndKey;
  /**
   * Another `vgate serve` process on this cluster, with the first one's identity, serving
   * certificate and client CA, but flags of its own. kube-apiserver does not call it: tests do.
   */
  startVgate(opts: MoreVgateOptions): Promise<MoreVgate>;
  stop(): Promise<void>;
}

export interface MoreVgateOptions {
  /** Names its log file (vgate-NAME.log in the cluster's directory). */
  name: string;
  /** More `vgate serve` flags. */
  vgateArgs?: readonly string[];
  /** The API server it talks to (a fault proxy in front of the cluster's, say); the cluster's by default. */
  server?: string;
  /**
   * "ready": returns once /readyz answers 200 (the default); "live": once /healthz does, for a
   * vgate that a fault keeps from becoming ready.
   */
  waitFor?: "ready" | "live";
}

export interface MoreVgate {
  /** https://127.0.0.1:PORT */
  url: string;
  port: number;
  log: string;
  /** Stopped with the cluster too. */
  stop(): Promise<void>;
}

export async function startVgateCluster(opts: VgateClusterOptions = {}): Promise<VgateCluster> {
  // kube-apiserver is started with vgate's token and authorization webhooks, so vgate's port must
  // be known first; vgate itself starts once the API server it watches is up.
  const port = await freePort();
  const client = await apiserverClientCert();
  const plane = await startControlPlane({
    ...opts,
    configure: async (dir) => {
      const wiring = apiserverWiring(
        dir,
        `https://127.0.0.1:${port}`,
        opts.tokenCacheTtl ?? "1s",
        client,
      );
      const own = (await opts.configure?.(dir)) ?? {};
      return {
        files: { ...wiring.files, ...own.files },
        args: [...wiring.args, ...(own.args ?? [])],
      };
    },
  });
  const admin = plane.admin;
  let vgate: Supervised | undefined;
  try {
    await installCrds(admin);
    const identity = await vgateIdentity(plane, admin);
    await publishInfo(admin, opts.vgateArgs ?? []);
    const vgateDir = join(plane.dir, "vgate");
    await mkdir(vgateDir);
    // The serving certificate names the Service too, as an in-cluster install's would.
    const tls = await servingCert(plane.ca, [`vgate.${VGATE_NAMESPACE}.svc`, "localhost"]);
    await writeFile(join(vgateDir, "tls.crt"), tls.cert);
    await writeFile(join(vgateDir, "tls.key"), tls.key, { mode: 0o600 });
    await writeFile(join(vgateDir, "client-ca.crt"), client.ca.cert);
    const vgateUrl = `https://127.0.0.1:${port}`;
    const vgateLog = opts.vgateLog ?? join(plane.dir, "vgate.log");
    const serve = (
      servePort: number,
      kubeconfigFile: string,
      args: readonly string[],
      log: string,
      env: Readonly<Record<string, string>> = {},
    ) =>
      supervise(
        "vgate",
        resolve(repoRoot, "webhook/bin/vgate"),
        [
          "serve",
          `--port=${servePort}`,
          "--bind-address=127.0.0.1",
          `--tls-cert-file=${join(vgateDir, "tls.crt")}`,
          `--tls-private-key-file=${join(vgateDir, "tls.key")}`,
          `--kubeconfig=${kubeconfigFile}`,
          `--client-ca-file=${join(vgateDir, "client-ca.crt")}`,
          `--client-allowed-names=${APISERVER_CLIENT_NAME}`,
          `--log-level=${opts.logLevel ?? "info"}`,
          // No endpoints or kube-proxy to wait for after SIGTERM: the rig stops at once.
          "--shutdown-delay=0",
          ...args,
        ],
        log,
        { env: { ...process.env, KUBECONFIG: "", ...env } },
      );
    vgate = serve(port, identity.kubeconfig, opts.vgateArgs ?? [], vgateLog, opts.vgateEnv);
    const ready = async () =>
      (await httpsRequest(`${vgateUrl}/readyz`, { ca: plane.ca.cert })).status === 200;
    await waitUntil("/readyz", vgate, ready, 30_000);
    await installWebhooks(admin, port, plane.ca.cert);
    await waitForWebhooks(admin, vgate);
    const running = vgate;
    const more: Supervised[] = [];
    const startVgate = async (o: MoreVgateOptions): Promise<MoreVgate> => {
      const morePort = await freePort();
      const url = `https://127.0.0.1:${morePort}`;
      const kubeconfig = o.server
        ? await plane.tokenKubeconfig(identity.token, "vgate", o.server)
        : identity.kubeconfig;
      const log = join(plane.dir, `vgate-${o.name}.log`);
      const proc = serve(morePort, kubeconfig, o.vgateArgs ?? [], log);
      more.push(proc);
      const path = o.waitFor === "live" ? "/healthz" : "/readyz";
      const up = async () =>
        (await httpsRequest(`${url}${path}`, { ca: plane.ca.cert })).status === 200;
      await waitUntil(path, proc, up, 30_000);
      return { url, port: morePort, log, stop: () => proc.stop() };
    };
    let stopped: Promise<void> | undefined;
    return {
      plane,
      url: plane.url,
      caPem: plane.ca.cert,
      kubeconfigPath: plane.adminKubeconfig,
      admin,
      group: `management.${DEFAULT_GROUP_DOMAIN}`,
      vgateUrl,
      vgateLog,
      apiserverClient: { cert: client.cert, key: client.key },
      apiserverClientCa: client.ca,
      startVgate,
      clientFor: async (user, groups = []) =>
        new KubeTestClient(plane.url, {
          ca: plane.ca.cert,
          client: await clientCert(plane.ca, user, groups),
        }),
      stop: () =>
        (stopped ??= (async () => {
          await Promise.all([running, ...more].map((p) => p.stop()));
          await plane.stop();
        })()),
    };
  } catch (err) {
    await vgate?.stop();
    await plane.stop();
    throw err;
  }
}

let shared: Promise<VgateCluster> | undefined;

/**
 * The test run's cluster: started by the first test that asks (seconds), stopped when the run
 * ends (test/support/mocha-root.ts), and by the supervisor if the run is killed.
 */
export function sharedCluster(): Promise<VgateCluster> {
  shared ??= startVgateCluster();
  return shared;
}

export async function stopSharedCluster(): Promise<void> {
  if (!shared) return;
  const cluster = await shared.catch(() => undefined);
  shared = undefined;
  await cluster?.stop();
}

/**
 * The OwnedAccessKey CRD of manifests/ for another group domain (management.<domain>), rewritten
 * as manifests/README.md tells users to: a keyspace of its own that no webhook watches, for tests
 * that must see exactly the keys they made. Returns once it is Established.
 */
export async function installAccessKeyCrd(
  admin: KubeTestClient,
  groupDomain: string,
): Promise<void> {
  await installCrds(admin, (yaml) =>
    yaml.replace(/management\.loft\.sh/g, `management.${groupDomain}`),
  );
}

/** The CRDs of manifests/, applied, Established and served. */
async function installCrds(
  admin: KubeTestClient,
  rewrite: (yaml: string) => string = (yaml) => yaml,
): Promise<void> {
  for (const crd of manifestObjects("manifests/crd-ownedaccesskeys.yaml", rewrite)) {
    await installCrd(admin, crd);
  }
}

/**
 * vgate's RBAC, and a kubeconfig with a bound token of its service account from the TokenRequest
 * API: what a pod's projected token gives it.
 */
async function vgateIdentity(
  plane: ControlPlane,
  admin: KubeTestClient,
): Promise<{ token: string; kubeconfig: string }> {
  await admin.apply(clusterRole("vgate", vgateRules(`management.${DEFAULT_GROUP_DOMAIN}`)));
  await admin.apply(
    clusterRoleBinding("vgate", "vgate", [
      { kind: "ServiceAccount", name: VGATE_SERVICE_ACCOUNT, namespace: VGATE_NAMESPACE },
    ]),
  );
  const token = await plane.serviceAccountToken(VGATE_NAMESPACE, VGATE_SERVICE_ACCOUNT);
  return { token, kubeconfig: await plane.tokenKubeconfig(token, "vgate") };
}

/**
 * manifests/vgate-info.yaml as an install applies it, with keyStorage what vgate's --key-storage
 * says (plain when it says nothing, as the binary's default).
 */
async function publishInfo(admin: KubeTestClient, vgateArgs: readonly string[]): Promise<void> {
  const hashed = vgateArgs.includes("--key-storage=hashed");
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: VGATE_NAMESPACE } });
  for (const obj of manifestObjects("manifests/vgate-info.yaml")) {
    if (obj.kind === "ConfigMap") {
      (obj["data"] as Record<string, string>)["keyStorage"] = hashed ? "hashed" : "plain";
    }
    await admin.apply(obj);
  }
}

/**
 * The `vgate serve` flags of manifests/deployment.yaml that say how vgate behaves (key storage,
 * group domain, namespace), as the install's pod gets them: `$(VGATE_KEY_STORAGE)` from
 * manifests/vgate-info.yaml, `$(POD_NAMESPACE)` vgate-system. Left out are the flags the rig sets
 * itself for where it listens and what it trusts (port, certificates, client CA, log level).
 */
export function manifestServeFlags(): string[] {
  const deployment = manifestObjects("manifests/deployment.yaml").find(
    (o) => o.kind === "Deployment",
  );
  const spec = deployment?.["spec"] as
    { template?: { spec?: { containers?: { name?: string; args?: string[] }[] } } } | undefined;
  const args = spec?.template?.spec?.containers?.find((c) => c.name === "vgate")?.args;
  if (!args) throw new Error("manifests/deployment.yaml has no vgate container with args");
  const values: Record<string, string> = {
    VGATE_KEY_STORAGE: manifestKeyStorage(),
    POD_NAMESPACE: VGATE_NAMESPACE,
  };
  const rigOwn = [
    "--port",
    "--tls-cert-file",
    "--tls-private-key-file",
    "--client-ca-file",
    "--client-allowed-names",
    "--log-level",
  ];
  return args
    .filter((a) => a.startsWith("--") && !rigOwn.includes(a.split("=")[0]!))
    .map((a) =>
      a.replace(/\$\((\w+)\)/g, (_, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`manifests/deployment.yaml: unknown $(${name})`);
        return value;
      }),
    );
}

/** keyStorage of manifests/vgate-info.yaml: how the install stores keys. */
export function manifestKeyStorage(): "plain" | "hashed" {
  const info = manifestObjects("manifests/vgate-info.yaml").find((o) => o.kind === "ConfigMap");
  const mode = (info?.["data"] as Record<string, string> | undefined)?.["keyStorage"];
  if (mode !== "plain" && mode !== "hashed")
    throw new Error(`manifests/vgate-info.yaml: keyStorage is ${JSON.stringify(mode)}`);
  return mode;
}

/** --authentication-token-webhook-cache-ttl of manifests/apiserver/kube-apiserver.flags. */
export function manifestTokenCacheTtl(): string {
  const ttl = /^--authentication-token-webhook-cache-ttl=(\S+)$/m.exec(
    repoFile("manifests/apiserver/kube-apiserver.flags"),
  )?.[1];
  if (!ttl) throw new Error("manifests/apiserver/kube-apiserver.flags sets no token cache TTL");
  return ttl;
}

/** The common name of the client certificate kube-apiserver presents to vgate (--client-allowed-names). */
export const APISERVER_CLIENT_NAME = "kube-apiserver";

/**
 * kube-apiserver's client certificate for vgate, from a CA of its own (as `vgate certs` makes it):
 * vgate trusts that CA only, so no other certificate of the cluster's CA can call its review routes.
 */
async function apiserverClientCert(): Promise<CertAndKey & { ca: CertAndKey }> {
  const ca = await testCa("vgate-apiserver-client-ca");
  return { ...(await clientCert(ca, APISERVER_CLIENT_NAME)), ca };
}

/** Where manifests/apiserver/ expects vgate and its CA, rewritten for the test rig. */
const MANIFEST_VGATE_URL = "https://vgate.vgate-system.svc:443";
const MANIFEST_VGATE_DIR = "/etc/kubernetes/vgate/";

/**
 * manifests/apiserver/ as a cluster admin installs it: the two webhook kubeconfigs, the
 * AuthorizationConfiguration and the flags of kube-apiserver.flags, with vgate's address made
 * `vgateUrl` and /etc/kubernetes/vgate/ made the rig's working directory (whose ca.crt signed
 * vgate's serving certificate, and whose client.crt and client.key are `client`). Only the token
 * cache TTL differs from the file: `tokenCacheTtl`.
 */
export function apiserverWiring(
  dir: string,
  vgateUrl: string,
  tokenCacheTtl: string,
  client: CertAndKey,
): { files: Record<string, string>; args: string[] } {
  const rewrite = (text: string): string =>
    text.replaceAll(MANIFEST_VGATE_URL, vgateUrl).replaceAll(MANIFEST_VGATE_DIR, `${dir}/`);
  const files: Record<string, string> = { "client.crt": client.cert, "client.key": client.key };
  for (const name of [
    "token-webhook.kubeconfig",
    "authorization-webhook.kubeconfig",
    "authorization-config.yaml",
  ]) {
    files[name] = rewrite(repoFile(`manifests/apiserver/${name}`));
  }
  const args = repoFile("manifests/apiserver/kube-apiserver.flags")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("--"))
    .map((flag) =>
      flag.startsWith("--authentication-token-webhook-cache-ttl=")
        ? `--authentication-token-webhook-cache-ttl=${tokenCacheTtl}`
        : rewrite(flag),
    );
  return { files, args };
}

/** manifests/webhook-configurations.yaml with service references made URLs, caBundle filled. */
async function installWebhooks(admin: KubeTestClient, port: number, caPem: string): Promise<void> {
  for (const config of manifestObjects("manifests/webhook-configurations.yaml")) {
    for (const w of (config["webhooks"] as Record<string, Record<string, unknown>>[]) ?? []) {
      const clientConfig = w["clientConfig"] as { service?: { path?: string }; url?: string };
      const path = clientConfig.service?.path ?? "/";
      w["clientConfig"] = {
        url: `https://127.0.0.1:${port}${path}`,
        caBundle: Buffer.from(caPem).toString("base64"),
      };
    }
    await admin.apply(config);
  }
}

/**
 * kube-apiserver picks up webhook configurations through an informer, a moment after they are
 * written; a server-side dry run shows when the mutating webhook is called (it fills spec.key).
 */
async function waitForWebhooks(admin: KubeTestClient, vgate: Supervised): Promise<void> {
  const probe = {
    apiVersion: `management.${DEFAULT_GROUP_DOMAIN}/v1`,
    kind: "OwnedAccessKey",
    metadata: { name: "vgate-install-probe" },
    // A key of its own, so the probe passes with --key-storage=hashed too; the mutating webhook's
    // default displayName shows that it ran.
    spec: { user: "admin", type: "User", key: randomBytes(32).toString("base64url") },
  };
  await waitUntil(
    "its webhooks called by kube-apiserver",
    vgate,
    async () => {
      const res = await admin.request<{ spec?: { displayName?: string } }>(
        "POST",
        `/apis/management.${DEFAULT_GROUP_DOMAIN}/v1/ownedaccesskeys?dryRun=All`,
        probe,
      );
      return res.status === 201 && res.body.spec?.displayName === probe.metadata.name;
    },
    30_000,
  );
}

function manifestObjects(file: string, rewrite: (yaml: string) => string = (y) => y): KubeObject[] {
  return parseAllDocuments(rewrite(repoFile(file)))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => Boolean(o));
}
