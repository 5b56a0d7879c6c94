// vgate installed on a real node exactly as the README says (test/support/node/vgate-install.ts):
// both replicas become Ready through the kubelet's probes, kube-apiserver reaches the admission
// webhooks through the Service (kube-proxy in the rig's namespace) and the token and authorization
// webhooks at the Service's ClusterIP, and the README's credentials and troubleshooting blocks,
// run as written, show what they promise on this cluster.

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { docBlock, runPromisedBlock } from "../support/readme-blocks.js";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  bash,
  installVgate,
  tokenKubeconfig,
  type VgateInstall,
} from "../support/node/vgate-install.js";

interface Pod {
  metadata: { name: string };
  spec: {
    containers: { livenessProbe?: unknown; readinessProbe?: unknown; startupProbe?: unknown }[];
  };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; imageID: string; image: string }[];
  };
}

(HAVE_NODE ? describe : describe.skip)(`install on a real node${NODE_SKIP_REASON}`, function () {
  this.timeout(600_000);
  let rig: NodeRig;
  let install: VgateInstall;

  before(async () => {
    const images = nodeImages();
    rig = await startNodeRig({ pause: images.pause, images: [images.test] });
    install = await installVgate(rig, images.vgate);
    console.log(
      `      (webhooks answered ${install.recoveryMs} ms after kube-apiserver's restart)`,
    );
  });
  after(async () => rig?.stop());

  it("the README's install block brings both replicas up, Ready through their probes", async () => {
    assert.match(install.output, /successfully rolled out/);
    const pods = JSON.parse(
      (
        await rig.kubectl([
          "-n",
          "vgate-system",
          "get",
          "pods",
          "-l",
          "app.kubernetes.io/name=vgate",
          "-o",
          "json",
        ])
      ).stdout,
    ) as { items: Pod[] };
    assert.equal(pods.items.length, 2, "two replicas");
    for (const pod of pods.items) {
      const c = pod.spec.containers[0]!;
      assert.ok(c.startupProbe && c.readinessProbe && c.livenessProbe, "the Deployment's probes");
      assert.equal(pod.status.phase, "Running");
      assert.ok(pod.status.conditions?.some((x) => x.type === "Ready" && x.status === "True"));
      const s = pod.status.containerStatuses![0]!;
      assert.equal(s.ready, true);
      assert.equal(s.restartCount, 0, `${pod.metadata.name} never restarted`);
      assert.equal(s.image, nodeImages().vgate.ref, "the image the kustomization names");
    }
  });

  it("kube-apiserver reaches the admission webhooks through the Service", async () => {
    // Only vgate refuses an OwnedAccessKey without spec.key when keys are stored hashed.
    const keyless = {
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "keyless" },
      spec: { user: "alice", type: "User" },
    };
    const r = await rig.kubectl(["create", "--dry-run=server", "-f", "-"], {
      input: JSON.stringify(keyless),
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /spec\.key: Required value: vgate stores keys hashed/);
    const ok = await rig.kubectl([
      "create",
      "--dry-run=server",
      "-f",
      join(install.workDir, "webhook/examples/webhook-check.yaml"),
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /created \(server dry run\)/);
  });

  it("a key logs in through the token and authorization webhooks at the Service's ClusterIP", async () => {
    const key = (
      await bash(
        "kubectl accesskey create login-check --user ci-bot --ttl 1h",
        install.workDir,
        install.env,
      )
    ).trim();
    assert.ok(key.length >= 32, "the plugin printed the key");
    const kubeconfig = tokenKubeconfig(rig, key, "login-check");
    const who = await bash(
      `kubectl --kubeconfig ${kubeconfig} auth whoami -o jsonpath='{.status.userInfo.username}'`,
      install.workDir,
      install.env,
    );
    assert.equal(who.trim(), "ci-bot");
    await bash("kubectl accesskey disable login-check", install.workDir, install.env);
    const denied = await bash(
      `kubectl --kubeconfig ${kubeconfig} get pods -n default 2>&1 || true`,
      install.workDir,
      install.env,
    );
    assert.match(denied, /access key disabled|Unauthorized/);
    // A garbage token is nobody.
    const stranger = tokenKubeconfig(rig, "not-a-key-".repeat(4), "stranger");
    const s = await bash(
      `kubectl --kubeconfig ${stranger} get pods 2>&1 || true`,
      install.workDir,
      install.env,
    );
    assert.match(s, /Unauthorized/);
  });

  it("the README's credentials block shows what it promises on this cluster", async () => {
    const dir = mkdtempSync(join(rig.dir, "credentials-"));
    await runPromisedBlock(docBlock("kubectl create namespace web-prod"), dir, {
      ...install.env,
      HOME: dir,
    });
  });

  it("the README's troubleshooting block answers healthy on this cluster", async () => {
    const lines = docBlock("# Are vgate's pods up?").filter((l) => !l.startsWith("#"));
    for (const line of lines) {
      await bash(line, install.workDir, install.env);
    }
    const metrics = await bash(
      "kubectl get --raw /api/v1/namespaces/vgate-system/services/https:vgate:443/proxy/metrics",
      install.workDir,
      install.env,
    );
    assert.match(metrics, /^vgate_/m, "vgate's metrics through the API server's service proxy");
  });
});
