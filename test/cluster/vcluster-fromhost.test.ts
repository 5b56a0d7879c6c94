// A sync.fromHost patch with vCluster's real syncer, on the node rig: the syncer writes a virtual
// Node for the rig's real node (sync.fromHost.nodes, all nodes), and the virtual cluster's webhook
// (manifests/overlays/patches/virtual-cluster.yaml with a rule for nodes, as its comment says) runs
// vgate's Node `expression` on it (docs/decisions.md KND-50..KND-54). The syncer gets no patches in
// its own config (open-source vCluster refuses them); vgate's config has them.

import assert from "node:assert/strict";
import type { KubeObject } from "../support/kube/kube-client.js";
import { untilValue } from "../support/until.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate } from "../support/node/vgate-install.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { installVirtualWebhook } from "../support/vcluster/virtual-webhook.js";

// The label kubelet sets on every node; a prefix shows a patch run twice. A patch never creates a
// missing key, so it rewrites one the host node has.
const OS = "kubernetes.io/os";
const CONFIG = `sync:
  toHost:
    configMaps:
      patches:
        - path: metadata.annotations
          expression: '({ ...value, "example.com/synced-by": "vgate" })'
  fromHost:
    nodes:
      enabled: true
      patches:
        - path: metadata.labels["${OS}"]
          expression: '"vgate-" + value'
`;

type Node = KubeObject & { metadata: { labels?: Record<string, string> } };
const labels = (o: Node | null): Record<string, string> => o?.metadata.labels ?? {};

(HAVE_VCLUSTER ? describe : describe.skip)(
  `a sync.fromHost Nodes patch with vCluster's real syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    const node = (name: string) => ({ apiVersion: "v1", kind: "Node", metadata: { name } });
    const virtualNode = () => vc.virtual.admin.get<Node>(node(rig.nodeName));
    const hostNode = () => rig.admin.get<Node>(node(rig.nodeName));

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      const install = await installVgate(rig, images.vgate, {
        patches: {
          vclusterName: "vc",
          vclusterNamespace: "vcluster-vc",
          config: CONFIG,
          kinds: [{ group: "", resource: "configmaps" }],
          fromHost: [{ group: "", resource: "nodes", status: true, scope: "Cluster" }],
        },
      });
      // vCluster first with its default fake nodes (none without pods), so that the virtual
      // cluster's webhook is there before the syncer writes a real Node; then real nodes, every
      // one (not only those the virtual pods run on). No patches for the syncer: see the header.
      vc = await startVCluster(rig, vclusterParts());
      await installVirtualWebhook(install, vc.virtual.adminKubeconfig, "patches");
      await vc.restartSyncer({
        sync: { fromHost: { nodes: { enabled: true, selector: { all: true } } } },
      });
    });
    after(async () => {
      await vc?.stop();
      await rig?.stop();
    });

    it("the syncer's virtual Node gets the patch once; the host node keeps its label", async () => {
      const path = `/api/v1/nodes/${rig.nodeName}`;
      const made = await untilValue(
        "the syncer's virtual Node, patched",
        virtualNode,
        (n) => labels(n)[OS]?.startsWith("vgate-") === true,
      ).catch(async (err: unknown) => {
        console.log(`syncer log:\n${await vc.syncer.logTail(80)}`);
        throw err;
      });
      assert.equal(labels(made)[OS], "vgate-linux");
      assert.equal(
        labels(made)["kubernetes.io/hostname"],
        labels(await hostNode())["kubernetes.io/hostname"],
      );

      // A host change the syncer copies: the new label arrives, the patched one is not patched again.
      const touch = await rig.admin.request(
        "PATCH",
        path,
        { metadata: { labels: { "example.com/touch": "1" } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      assert.equal(touch.status, 200, JSON.stringify(touch.body));
      const synced = await untilValue(
        "the host node's new label on the virtual Node",
        virtualNode,
        (n) => labels(n)["example.com/touch"] === "1",
      );
      assert.equal(labels(synced)[OS], "vgate-linux");
      assert.equal(labels(await hostNode())[OS], "linux", "nothing reached the host node");
    });
  },
);
