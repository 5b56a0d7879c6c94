// vgate installed on the node rig the way the README's install section says, command for command:
// its `sh` block runs as written (bash, KUBECONFIG the rig's admin, a working directory where
// `manifests/` and `webhook/` are this checkout's), with vgate's image loaded onto the node under
// the name manifests/kustomization.yaml gives it. Then kube-apiserver is wired to vgate's token and
// authorization webhooks as "Wiring kube-apiserver" says: manifests/apiserver/'s files copied to
// the control plane (here: a folder of the rig) with the CA and client certificate from the
// Secrets, the server replaced by the Service's ClusterIP, and kube-apiserver restarted with
// kube-apiserver.flags.

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { request as httpsRequest } from "node:https";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { parse, stringify } from "yaml";
import { safeConcatName } from "../../../webhook/src/patches/host-names.js";
import { docBlock } from "../readme-blocks.js";
import { apiserverWiring, manifestTokenCacheTtl } from "../cluster.js";
import { repoRoot } from "../fixtures.js";
import type { RigImage } from "./images.js";
import type { NodeRig } from "./node-rig.js";

const run = promisify(execFile);

export const README_INSTALL_FIRST_LINE = "mkdir -p vgate-install";
/** docs/certificates.md's install block: the same kustomization with the cert-manager Component. */
export const CERT_MANAGER_INSTALL_FIRST_LINE = "# vgate with its certificates from cert-manager";

/** Where vgate's certificates come from: `vgate certs` (the README's install) or cert-manager. */
export type Certificates = "self-managed" | "cert-manager";

export interface VgateInstall {
  /** The working directory the README's block ran in (vgate-install/ is there). */
  workDir: string;
  /** Environment for commands run as the README's user: KUBECONFIG, plugin/bin on PATH. */
  env: NodeJS.ProcessEnv;
  /** The Service's ClusterIP, which kube-apiserver calls the token and authorization webhooks at. */
  clusterIp: string;
  /** What the README's block printed. */
  output: string;
  /** How long after kube-apiserver's restart (the wiring) the webhooks answered again. */
  recoveryMs: number;
  /** kube-apiserver's flags for the wiring, to restart it as it runs now. */
  apiserverArgs: readonly string[];
  /** The folder standing for /etc/kubernetes/vgate/ (ca.crt, client.crt, the kubeconfigs). */
  apiserverDir: string;
}

/** Runs `script` with bash in `cwd`: its standard output; rejects with all its output on failure. */
export async function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 300_000,
): Promise<string> {
  try {
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
      cwd,
      env,
      timeout: timeoutMs,
      maxBuffer: 16 << 20,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`, { cause: err });
  }
}

/** The environment of a user of this checkout: the rig's kubeconfig, the plugin on PATH. */
export function userEnv(rig: NodeRig): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KUBECONFIG: rig.adminKubeconfig,
    PATH: `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`,
  };
}

/**
 * The Endpoints webhook, as the README's install section says to add it: the `endpoints` component
 * in the kustomization, the virtual cluster's name and host namespace in its vcluster.env, and the
 * config in its vcluster.yaml.
 */
export interface EndpointsComponent {
  vclusterName: string;
  vclusterNamespace: string;
  /** The vcluster.yaml text. */
  config: string;
}

const CERTIFICATES_LINES = [
  "  - ../manifests/overlays/self-managed",
  "  - ../manifests/overlays/cert-manager",
];

/** An install block with the endpoints component added after the certificate one. */
export function withEndpointsComponent(block: string): string {
  return withComponent(block, "endpoints");
}

/** An install block with `manifests/overlays/<name>` added after the certificate component. */
export function withComponent(block: string, name: "endpoints" | "patches"): string {
  const lines = block.split("\n");
  const at = lines.findIndex((l) => CERTIFICATES_LINES.includes(l));
  if (at < 0)
    throw new Error(
      `the install block has no line ${CERTIFICATES_LINES.map((l) => JSON.stringify(l)).join(" or ")}`,
    );
  lines.splice(at + 1, 0, `  - ../manifests/overlays/${name}`);
  return lines.join("\n");
}

/**
 * The webhook for every kind, as manifests/README.md says to add it: the `patches` component in
 * the kustomization, with vcluster.env, vcluster.yaml and the rules of patches-webhook.yaml (and of
 * virtual-cluster.yaml, for installVirtualWebhook) edited to the kinds the config patches.
 */
export interface PatchesComponent extends EndpointsComponent {
  /**
   * The kinds the config has sync.toHost patches for; `status` where vCluster copies it back;
   * `scope: "Cluster"` for a cluster-scoped one (cluster-patches-webhook.yaml's rules).
   */
  kinds: readonly { group: string; resource: string; status?: boolean; scope?: "Cluster" }[];
  /** The sync.fromHost kinds it has patches for: virtual-cluster.yaml rules, CREATE and UPDATE. */
  fromHost?: readonly { group: string; resource: string; status?: boolean; scope: string }[];
}

type JsonPatchOp = { op: string; path: string; value: { rules?: unknown } };

/** The component's files edited as manifests/README.md says, in the user's copy of manifests/. */
function editPatchesComponent(workDir: string, c: PatchesComponent): void {
  const dir = join(workDir, "manifests/overlays/patches");
  // The cluster marker as manifests/README.md computes it: SafeConcatName(namespace, "x", name).
  const marker = safeConcatName(c.vclusterNamespace, "x", c.vclusterName);
  writeFileSync(
    join(dir, "vcluster.env"),
    `vcluster-name=${c.vclusterName}\nvcluster-namespace=${c.vclusterNamespace}\nvcluster-cluster-marker=${marker}\n`,
  );
  writeFileSync(join(dir, "vcluster.yaml"), c.config);
  for (const [file, scope] of [
    ["patches-webhook.yaml", "Namespaced"],
    ["cluster-patches-webhook.yaml", "Cluster"],
  ] as const) {
    const hookFile = join(dir, file);
    const ops = parse(readFileSync(hookFile, "utf8")) as JsonPatchOp[];
    const hook = ops.find((o) => o.path === "/webhooks/-");
    if (!hook) throw new Error(`${hookFile} adds no webhook`);
    hook.value.rules = c.kinds
      .filter((k) => (k.scope ?? "Namespaced") === scope)
      .map((k) => ({
        apiGroups: [k.group],
        apiVersions: ["*"],
        resources: [k.resource],
        operations: ["CREATE", "UPDATE"],
        scope,
      }));
    writeFileSync(hookFile, stringify(ops));
  }
  // virtual-cluster.yaml: the same kinds, updates only, with <resource>/status where it comes back.
  const virtualFile = join(dir, "virtual-cluster.yaml");
  const docs = readFileSync(virtualFile, "utf8").split(/^---$/m);
  const at = docs.findIndex((d) => /^kind: MutatingWebhookConfiguration$/m.test(d));
  const config = parse(docs[at] ?? "") as { webhooks: { rules: unknown }[] } | null;
  if (!config?.webhooks[0]) throw new Error(`${virtualFile} has no webhook configuration`);
  config.webhooks[0].rules = [
    ...c.kinds.map((k) => ({
      apiGroups: [k.group],
      apiVersions: ["*"],
      resources: k.status ? [k.resource, `${k.resource}/status`] : [k.resource],
      operations: ["UPDATE"],
      scope: k.scope ?? "Namespaced",
    })),
    ...(c.fromHost ?? []).map((k) => ({
      apiGroups: [k.group],
      apiVersions: ["*"],
      resources: k.status ? [k.resource, `${k.resource}/status`] : [k.resource],
      operations: ["CREATE", "UPDATE"],
      scope: k.scope,
    })),
  ];
  docs[at] = `\n${stringify(config)}`;
  writeFileSync(virtualFile, docs.join("---"));
}

/**
 * A folder of the rig's that links to this checkout's paths the docs' commands name (manifests/,
 * charts/, webhook/bin/vgate, the plugin), so the checkout gets no vgate-install/; `copy` paths are
 * copies the user's edits go into instead.
 */
export function userWorkDir(rig: NodeRig, copy: readonly string[] = []): string {
  const workDir = mkdtempSync(join(rig.dir, "user-"));
  for (const name of [
    "manifests",
    "charts",
    "webhook",
    "dist",
    "node_modules",
    "package.json",
    "plugin",
  ]) {
    if (copy.includes(name)) cpSync(join(repoRoot, name), join(workDir, name), { recursive: true });
    else symlinkSync(join(repoRoot, name), join(workDir, name));
  }
  return workDir;
}

/**
 * Installs vgate from the docs onto `rig`, and wires kube-apiserver to it: the README's install
 * block, or with `certificates: "cert-manager"` docs/certificates.md's (cert-manager must run).
 */
export async function installVgate(
  rig: NodeRig,
  image: RigImage,
  opts: {
    endpoints?: EndpointsComponent;
    patches?: PatchesComponent;
    certificates?: Certificates;
  } = {},
): Promise<VgateInstall> {
  if (opts.endpoints && opts.patches)
    throw new Error("the endpoints and patches components are one or the other");
  await rig.loadImage(image);
  // With the endpoints or patches component, manifests/ is a copy the user's edits go into.
  const edits = opts.endpoints || opts.patches;
  const workDir = userWorkDir(rig, edits ? ["manifests"] : []);
  let block = docBlock(
    opts.certificates === "cert-manager"
      ? CERT_MANAGER_INSTALL_FIRST_LINE
      : README_INSTALL_FIRST_LINE,
  ).join("\n");
  if (opts.endpoints) {
    const ep = opts.endpoints;
    const dir = join(workDir, "manifests/overlays/endpoints");
    writeFileSync(
      join(dir, "vcluster.env"),
      `vcluster-name=${ep.vclusterName}\nvcluster-namespace=${ep.vclusterNamespace}\n`,
    );
    writeFileSync(join(dir, "vcluster.yaml"), ep.config);
    block = withEndpointsComponent(block);
  }
  if (opts.patches) {
    editPatchesComponent(workDir, opts.patches);
    block = withComponent(block, "patches");
  }
  const env = userEnv(rig);
  const output = await bash(block, workDir, env, 600_000);
  return { workDir, env, output, ...(await wireAndWait(rig)) };
}

/**
 * After an install: kube-apiserver wired to the Service's ClusterIP (wireApiserver), and the wait
 * until its webhook calls reach a ready vgate again.
 */
export async function wireAndWait(rig: NodeRig): Promise<{
  clusterIp: string;
  recoveryMs: number;
  apiserverArgs: readonly string[];
  apiserverDir: string;
}> {
  const clusterIp = (
    await rig.kubectl([
      "-n",
      "vgate-system",
      "get",
      "service",
      "vgate",
      "-o",
      "jsonpath={.spec.clusterIP}",
    ])
  ).stdout.trim();
  if (!clusterIp) throw new Error("the Service vgate-system/vgate has no ClusterIP");
  const wiring = await wireApiserver(rig, clusterIp);
  const recoveryMs = await waitForWebhooks(rig);
  return { clusterIp, recoveryMs, ...wiring };
}

async function secretData(rig: NodeRig, name: string, key: string): Promise<string> {
  const { stdout, code, stderr } = await rig.kubectl([
    "-n",
    "vgate-system",
    "get",
    "secret",
    name,
    "-o",
    `jsonpath={.data.${key.replace(".", "\\.")}}`,
  ]);
  if (code !== 0 || !stdout)
    throw new Error(`Secret vgate-system/${name} has no ${key}: ${stderr}`);
  return Buffer.from(stdout, "base64").toString("utf8");
}

/**
 * manifests/apiserver/ on the "control-plane node": its files in <rig>/vgate-apiserver/ (where
 * /etc/kubernetes/vgate/ would be) with the Secrets' CA and client certificate, the server the
 * Service's ClusterIP, and kube-apiserver restarted with kube-apiserver.flags (token cache as the
 * file says).
 */
export async function wireApiserver(
  rig: NodeRig,
  clusterIp: string,
): Promise<{ apiserverArgs: readonly string[]; apiserverDir: string }> {
  const dir = join(rig.dir, "vgate-apiserver");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const client = {
    cert: await secretData(rig, "vgate-apiserver-client", "tls.crt"),
    key: await secretData(rig, "vgate-apiserver-client", "tls.key"),
  };
  const wiring = apiserverWiring(dir, `https://${clusterIp}:443`, manifestTokenCacheTtl(), client);
  const files = { ...wiring.files, "ca.crt": await secretData(rig, "vgate-tls", "ca.crt") };
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
  }
  await rig.restartApiServer(wiring.args);
  return { apiserverArgs: wiring.args, apiserverDir: dir };
}

/**
 * Waits until kube-apiserver's admission calls reach a ready vgate again (after a restart of
 * either); returns how long that took.
 */
export async function waitForWebhooks(rig: NodeRig, timeoutMs = 120_000): Promise<number> {
  const start = Date.now();
  // Every replica Ready (its key cache synced: /readyz says so), or a login that reaches one that
  // is not yet is refused.
  // Through bash: rig.kubectl gives kubectl 30 s, and a rollout on a loaded machine takes longer.
  await bash(
    `kubectl -n vgate-system rollout status deployment/vgate --timeout=${Math.round(timeoutMs / 1000)}s`,
    repoRoot,
    userEnv(rig),
    timeoutMs + 10_000,
  );
  await waitAllReady(rig, timeoutMs);
  const check = join(repoRoot, "webhook/examples/webhook-check.yaml");
  let last = "";
  let admission = false;
  while (Date.now() - start < timeoutMs) {
    if (!admission) {
      const r = await rig.kubectl(["create", "--dry-run=server", "-f", check]);
      admission = r.code === 0;
      last = `admission: ${r.stderr.trim()}`;
    }
    // The token path has its own CA, client certificate and kubeconfig: wait on it too.
    if (admission) {
      last = `token: ${await tokenPathAnswer(rig)}`;
      if (last.includes(INVALID_KEY)) return Date.now() - start;
    }
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error(`vgate's webhooks did not answer within ${timeoutMs} ms; last: ${last}`);
}

/** vgate's answer to a token that is no key (what every unknown token gets). */
const INVALID_KEY = "invalid access key";

/**
 * What kube-apiserver's authenticators say of a new random token, through the TokenReview API
 * (which runs the token webhook): vgate's "invalid access key" once the token path works, or the
 * failure on the way (TLS, client certificate, connection). A new token each time, so that no
 * cache of kube-apiserver's can answer for vgate.
 */
export async function tokenPathAnswer(rig: NodeRig, token?: string): Promise<string> {
  const review = {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token: token ?? `rig-probe-${randomBytes(16).toString("hex")}` },
  };
  const r = await rig.kubectl(
    ["create", "-f", "-", "-o", "jsonpath={.status.authenticated} {.status.error}"],
    { input: JSON.stringify(review) },
  );
  return r.code === 0 ? r.stdout.trim() || "(no answer)" : r.stderr.trim();
}

/**
 * Until every vgate pod answers 200 on /readyz itself (its key cache synced: the kubelet's view
 * lags by up to a probe period) and the Service's endpoints list each of them as ready.
 */
export async function waitAllReady(rig: NodeRig, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const pods = await rig.kubectl([
      "-n",
      "vgate-system",
      "get",
      "pods",
      "-l",
      "app.kubernetes.io/name=vgate",
      "--field-selector=status.phase=Running",
      "-o",
      "jsonpath={.items[*].status.podIP}",
    ]);
    const slices = await rig.kubectl([
      "-n",
      "vgate-system",
      "get",
      "endpointslices",
      "-l",
      "kubernetes.io/service-name=vgate",
      "-o",
      "jsonpath={range .items[*].endpoints[*]}{.addresses[0]}={.conditions.ready} {end}",
    ]);
    const ips = pods.stdout.trim().split(" ").filter(Boolean);
    const have = slices.stdout.trim().split(" ").filter(Boolean);
    const ready = await Promise.all(ips.map((ip) => readyz(ip)));
    last = `pods ${ips.map((ip, i) => `${ip}=${ready[i]}`).join(",")}; endpoints ${have.join(",")}`;
    if (
      ips.length > 0 &&
      ready.every((r) => r === 200) &&
      ips.every((ip) => have.includes(`${ip}=true`)) &&
      have.length === ips.length
    )
      return;
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error(`vgate's pods and endpoints not all ready within ${timeoutMs} ms: ${last}`);
}

/** GET https://<pod IP>:8443/readyz from the host (the rig routes pod addresses); 0 on no answer. */
function readyz(ip: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      `https://${ip}:8443/readyz`,
      { rejectUnauthorized: false, timeout: 3000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** A kubeconfig that logs in with `token` and nothing else (no client certificate). */
export function tokenKubeconfig(rig: NodeRig, token: string, name: string): string {
  const path = join(rig.dir, `${name}.kubeconfig`);
  const ca = Buffer.from(rig.ca.cert).toString("base64");
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `  - name: rig`,
      `    cluster: {server: "${rig.url}", certificate-authority-data: ${ca}}`,
      "users:",
      `  - name: ${name}`,
      `    user: {token: "${token}"}`,
      "contexts:",
      `  - name: ${name}`,
      `    context: {cluster: rig, user: ${name}}`,
      `current-context: ${name}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return path;
}
