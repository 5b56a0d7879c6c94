// vgate installed on a real node exactly as the README says (test/support/node/vgate-install.ts):
// both replicas become Ready through the kubelet's probes, kube-apiserver reaches the admission
// webhooks through the Service (kube-proxy in the rig's namespace) and the token and authorization
// webhooks at the Service's ClusterIP, and the README's credentials and troubleshooting blocks,
// run as written, show what they promise on this cluster.

import assert from "node:assert/strict";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  assertAdmissionThroughService,
  assertCredentialsBlock,
  assertKeyLogin,
  assertReplicasReady,
  assertTroubleshootingBlock,
} from "../support/node/install-checks.js";
import { installVgate, type VgateInstall } from "../support/node/vgate-install.js";

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
    await assertReplicasReady(rig, nodeImages().vgate, 2);
  });

  it("kube-apiserver reaches the admission webhooks through the Service", async () => {
    await assertAdmissionThroughService(rig, install.workDir);
  });

  it("a key logs in through the token and authorization webhooks at the Service's ClusterIP", async () => {
    await assertKeyLogin(rig, install, "login-check");
  });

  it("the README's credentials block shows what it promises on this cluster", async () => {
    await assertCredentialsBlock(rig, install);
  });

  it("the README's troubleshooting block answers healthy on this cluster", async () => {
    await assertTroubleshootingBlock(install);
  });
});
