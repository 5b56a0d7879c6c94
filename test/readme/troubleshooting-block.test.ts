// The README's troubleshooting block, run as written (bash, this checkout as the working directory,
// the admin KUBECONFIG) against a private test rig made to look like an install: its webhook
// configurations call the Service vgate-system/vgate (not the rig's usual URL), kube-apiserver
// resolves the Service through its EndpointSlices (--enable-aggregator-routing: no kube-proxy
// here), and the slice, the TLS Secret and the Deployment's status are written by the test where
// a real cluster's controllers would write them. No pods run, so the slice points at the rig's
// `vgate serve`, listening on this machine's non-loopback address. Each check must show the
// healthy answer its comment promises; then the endpoints are taken away and caBundle blanked, and
// the checks must show the bad answers the README describes.

import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { docBlock } from "../support/readme-blocks.js";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { KubeObject } from "../support/kube/kube-client.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { until } from "../support/until.js";

type Json = Record<string, unknown>;

const NAMESPACE = "vgate-system";
const CONFIGURATION = "vgate-ownedaccesskeys";

interface Check {
  comment: string;
  command: string;
  /** The healthy answer the comment promises, in double quotes after "Healthy:". */
  healthy: string;
}

/** The block's checks: comment lines, then the one command line they describe. */
function checks(lines: readonly string[]): Check[] {
  const out: Check[] = [];
  let comment = "";
  for (const line of lines) {
    if (line.startsWith("#")) {
      comment += `${line.replace(/^#\s*/, "")} `;
      continue;
    }
    const healthy = /Healthy: (?:one )?"([^"]+)"/.exec(comment)?.[1];
    assert.ok(healthy, `no "Healthy: \\"…\\"" promise above ${line}`);
    out.push({ comment: comment.trim(), command: line, healthy });
    comment = "";
  }
  return out;
}

const block = checks(docBlock("# Are vgate's pods up?"));

/** This machine's first non-loopback IPv4 address: kube-apiserver refuses nothing there. */
const hostIp = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

/** The caBundle check runs openssl, as a user would. */
const haveOpenssl = spawnSync("bash", ["-c", "command -v openssl"]).status === 0;

const why = !HAVE_KUBE
  ? KUBE_SKIP_REASON
  : !HAVE_ANY_KUBECTL
    ? ANY_KUBECTL_SKIP_REASON
    : !hostIp
      ? " (skipped: this machine has no non-loopback IPv4 address for an endpoint)"
      : !haveOpenssl
        ? " (skipped: openssl is not on PATH)"
        : "";

interface Run {
  code: number;
  output: string;
}

const sliceObject = (ip: string, port: number): KubeObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: {
    name: "vgate-rig",
    namespace: NAMESPACE,
    labels: {
      "kubernetes.io/service-name": "vgate",
      "endpointslice.kubernetes.io/managed-by": "vgate-readme-test",
    },
  },
  addressType: "IPv4",
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ name: "https", port, protocol: "TCP" }],
});

/** manifests/ rendered by kubectl kustomize: the Service and the Deployment an install applies. */
async function rendered(kind: string): Promise<KubeObject> {
  const { stdout } = await run(["kubectl kustomize manifests"], {})[0]!;
  const obj = parseAllDocuments(stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .find((o) => o?.kind === kind);
  assert.ok(obj, `kubectl kustomize manifests has no ${kind}`);
  return obj;
}

/** Each command in a bash of its own, so one check's failure does not hide the next. */
function run(
  commands: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; output: string }>[] {
  return commands.map(
    (command) =>
      new Promise((done) => {
        execFile(
          "bash",
          ["-c", command],
          { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 90_000 },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
            done({ code, stdout, output: `${stdout}${stderr}` });
          },
        );
      }),
  );
}

describe("README: the troubleshooting block", function () {
  it("has a check per problem, each promising a healthy answer", () => {
    assert.deepEqual(
      block.map((c) => c.healthy),
      ["successfully rolled out", "ready=true", "created (server dry run)", "OK"],
    );
  });

  (why ? describe.skip : describe)(`on a rig wired like an install${why}`, function () {
    this.timeout(180_000);
    let cluster: VgateCluster;
    let dir: string;
    const runBlock = async (): Promise<Run[]> => {
      const env = { KUBECONFIG: cluster.kubeconfigPath, HOME: dir };
      return Promise.all(
        run(
          block.map((c) => c.command),
          env,
        ),
      );
    };
    const dryRun = async (): Promise<string> => {
      const obj = parseAllDocuments(repoFile("webhook/examples/webhook-check.yaml"))[0]!.toJS();
      const res = await cluster.admin.request(
        "POST",
        `/apis/${cluster.group}/v1/ownedaccesskeys?dryRun=All`,
        obj,
      );
      return res.status === 201 ? "created" : JSON.stringify(res.body);
    };

    before(async function () {
      cluster = await startVgateCluster({
        apiserverArgs: ["--enable-aggregator-routing=true"],
        vgateArgs: ["--bind-address=0.0.0.0"],
      });
      dir = mkdtempSync(join(tmpdir(), "vgate-readme-trouble-"));
      await installLikeAnInstall(cluster);
    });

    after(async () => {
      await cluster?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("with no endpoints: no ready=true line, and the dry run names the missing endpoints", async () => {
      // The webhooks now call the Service, which has no EndpointSlice yet.
      await until(
        async () => (await dryRun()).includes("no endpoints available"),
        "the webhooks call the Service",
      );
      const [, endpoints, reach] = await runBlock();
      assert.equal(endpoints!.code, 0, endpoints!.output);
      assert.ok(!endpoints!.output.includes("ready=true"), endpoints!.output);
      assert.notEqual(reach!.code, 0);
      assert.match(reach!.output, /failed calling webhook .*no endpoints available for service/);
    });

    it("healthy: every check exits 0 and shows what its comment promises", async () => {
      const port = Number(new URL(cluster.vgateUrl).port);
      await cluster.admin.apply(sliceObject(hostIp!, port));
      await until(
        async () => (await dryRun()) === "created",
        "the webhooks reach vgate through the Service",
      );
      const runs = await runBlock();
      runs.forEach((r, i) => {
        assert.equal(r.code, 0, `${block[i]!.command}\n${r.output}`);
        assert.ok(r.output.includes(block[i]!.healthy), `${block[i]!.command}\n${r.output}`);
      });
    });

    it("caBundle blanked: the dry run says x509 and the caBundle check fails", async () => {
      const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIGURATION}`;
      const live = (await cluster.admin.request<Json>("GET", path)).body;
      for (const w of live["webhooks"] as { clientConfig: Json }[]) w.clientConfig["caBundle"] = "";
      assert.equal((await cluster.admin.request("PUT", path, live)).status, 200);
      await until(
        async () => (await dryRun()).includes("x509"),
        "kube-apiserver sees the blank caBundle",
      );
      const [, , reach, caBundle] = await runBlock();
      assert.notEqual(reach!.code, 0);
      assert.match(reach!.output, /x509: certificate signed by unknown authority/);
      assert.notEqual(caBundle!.code, 0, caBundle!.output);
      assert.ok(!/\bOK\b/.test(caBundle!.output), caBundle!.output);
    });
  });
});

/**
 * What an install leaves in the cluster, where the rig differs: the Service (selector-less: no
 * controller here turns a selector into endpoints, the test writes the EndpointSlice), the TLS
 * Secret with the certificate vgate serves, the Deployment with the status the deployment
 * controller writes once both replicas are available, and webhook configurations that call the
 * Service with caBundle the rig's CA.
 */
async function installLikeAnInstall(cluster: VgateCluster): Promise<void> {
  const { admin } = cluster;
  const service = await rendered("Service");
  delete (service["spec"] as Json)["selector"];
  await admin.apply(service);
  const vgateDir = join(cluster.plane.dir, "vgate");
  await admin.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "vgate-tls", namespace: NAMESPACE },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": base64(readFileSync(join(vgateDir, "tls.crt"), "utf8")),
      "tls.key": base64(readFileSync(join(vgateDir, "tls.key"), "utf8")),
      "ca.crt": base64(cluster.caPem),
    },
  });
  await deploymentRolledOut(cluster);
  for (const kind of ["mutating", "validating"]) {
    const path = `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${CONFIGURATION}`;
    const live = (await admin.request<Json>("GET", path)).body;
    for (const w of live["webhooks"] as { clientConfig: { url: string } }[]) {
      const url = new URL(w.clientConfig.url);
      w.clientConfig = {
        service: { namespace: NAMESPACE, name: "vgate", port: 443, path: url.pathname },
        caBundle: base64(cluster.caPem),
      } as never;
    }
    const res = await admin.request("PUT", path, live);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
}

/** The Deployment of manifests/, with the status its controller writes when both pods are up. */
async function deploymentRolledOut(cluster: VgateCluster): Promise<void> {
  const created = await cluster.admin.apply(await rendered("Deployment"));
  const replicas = (created["spec"] as { replicas: number }).replicas;
  const at = new Date().toISOString();
  const condition = (type: string, reason: string) => ({
    type,
    status: "True",
    reason,
    lastUpdateTime: at,
    lastTransitionTime: at,
  });
  const res = await cluster.admin.request(
    "PUT",
    `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/vgate/status`,
    {
      ...created,
      status: {
        observedGeneration: created.metadata["generation"],
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          condition("Available", "MinimumReplicasAvailable"),
          condition("Progressing", "NewReplicaSetAvailable"),
        ],
      },
    },
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

const base64 = (text: string): string => Buffer.from(text).toString("base64");
