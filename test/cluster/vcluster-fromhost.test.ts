// sync.fromHost patches with vCluster's real syncer, on the node rig: the syncer writes a virtual
// Node for the rig's real node (sync.fromHost.nodes, all nodes), and the virtual cluster's webhook
// (manifests/overlays/patches/virtual-cluster.yaml with a rule for nodes, as its comment says) runs
// vgate's Node `expression` on it (docs/decisions.md KND-50..KND-54). The syncer gets no patches in
// its own config (open-source vCluster refuses them); vgate's config has them.
// A custom resource from the host (sync.fromHost.customResources, scope Namespaced, mappings): the
// open-source syncer has no syncer for it, so it makes neither the virtual CRD nor a copy; that is
// asserted after the syncer has carried a later host change, so a version that starts syncing them
// shows (docs/decisions.md KND-91). vgate's half is then checked on a copy written as vCluster
// Pro's syncer writes it (the host object's labels, annotations and spec, mapped namespace): the
// copy is patched, and so is a later host change, once; a re-sent copy writes nothing; an
// unmapped Widget passes with a warning.

import assert from "node:assert/strict";
import { parse } from "yaml";
import type { KubeObject, KubeTestClient } from "../support/kube/kube-client.js";
import { untilValue } from "../support/until.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate } from "../support/node/vgate-install.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import type { Values } from "../support/vcluster/syncer-config.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { installVirtualWebhook } from "../support/vcluster/virtual-webhook.js";

// The label kubelet sets on every node; a prefix shows a patch run twice. A patch never creates a
// missing key, so it rewrites one the host node has.
const OS = "kubernetes.io/os";
// A host namespace whose Widgets vCluster would bring into the virtual namespace team-a.
const WIDGETS = `    customResources:
      widgets.example.com:
        enabled: true
        scope: Namespaced
        mappings:
          byName:
            "shared/*": "team-a/*"
`;
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
${WIDGETS}        patches:
          - path: spec.size
            reverseExpression: '"vgate-" + value'
`;

/** A small namespaced custom resource. */
const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: { spec: { type: "object", properties: { size: { type: "string" } } } },
          },
        },
      },
    ],
  },
};
const widget = (namespace: string, size: string) =>
  JSON.stringify({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w", namespace, labels: { app: "w" } },
    spec: { size },
  });
type Widget = KubeObject & { spec: { size: string } };

type Node = KubeObject & { metadata: { labels?: Record<string, string> } };
const labels = (o: Node | null): Record<string, string> => o?.metadata.labels ?? {};

(HAVE_VCLUSTER ? describe : describe.skip)(
  `sync.fromHost patches (Nodes, a custom resource) with vCluster's real syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    const node = (name: string) => ({ apiVersion: "v1", kind: "Node", metadata: { name } });
    const virtualNode = () => vc.virtual.admin.get<Node>(node(rig.nodeName));
    const hostNode = () => rig.admin.get<Node>(node(rig.nodeName));

    const widgetAt = (c: KubeTestClient, namespace: string) =>
      c.get<Widget>({
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w", namespace },
      });
    const established = [
      "wait",
      "--for=condition=Established",
      "--timeout=60s",
      "crd/widgets.example.com",
    ];

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      // The host's CRD and a Widget the mapping names, there before the syncer starts.
      for (const [args, input] of [
        [["apply", "-f", "-"], JSON.stringify(WIDGET_CRD)],
        [established, ""],
        [["create", "namespace", "shared"], ""],
        [["create", "-f", "-"], widget("shared", "small")],
      ] as const) {
        const r = await rig.kubectl([...args], { input });
        assert.equal(r.code, 0, r.stderr);
      }
      const install = await installVgate(rig, images.vgate, {
        patches: {
          vclusterName: "vc",
          vclusterNamespace: "vcluster-vc",
          config: CONFIG,
          kinds: [{ group: "", resource: "configmaps" }],
          fromHost: [
            { group: "", resource: "nodes", status: true, scope: "Cluster" },
            { group: "example.com", resource: "widgets", scope: "Namespaced" },
          ],
        },
      });
      // vCluster first with its default fake nodes (none without pods), so that the virtual
      // cluster's webhook is there before the syncer writes a real Node; then real nodes, every
      // one (not only those the virtual pods run on). No patches for the syncer: see the header.
      vc = await startVCluster(rig, vclusterParts());
      await installVirtualWebhook(install, vc.virtual.adminKubeconfig, "patches");
      await vc.restartSyncer(
        parse(
          `sync:\n  fromHost:\n    nodes: {enabled: true, selector: {all: true}}\n${WIDGETS}`,
        ) as Values,
      );
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

    it("open-source vCluster syncs no custom resource from the host: no virtual CRD, no copy", async () => {
      // A host change after the syncer's start, carried to the virtual Node: the syncer has had
      // every host event before it, the host Widget's included, and is running with the config.
      const touch = await rig.admin.request(
        "PATCH",
        `/api/v1/nodes/${rig.nodeName}`,
        { metadata: { labels: { "example.com/touch": "2" } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      assert.equal(touch.status, 200, JSON.stringify(touch.body));
      await untilValue(
        "the host node's later label on the virtual Node",
        virtualNode,
        (n) => labels(n)["example.com/touch"] === "2",
      );
      const crd = await vc.virtual.admin.request(
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
      );
      assert.equal(crd.status, 404, "the virtual cluster has no Widget CRD");
      const group = await vc.virtual.admin.request("GET", "/apis/example.com");
      assert.equal(group.status, 404, "the virtual cluster serves no example.com group");
      assert.equal((await widgetAt(rig.admin, "shared"))?.spec.size, "small");
    });

    it("vgate patches a Widget copy as vCluster Pro would write it, once; others pass", async () => {
      // What vCluster Pro brings: the CRD, then the host Widget in the mapped namespace.
      for (const [args, input] of [
        [["apply", "-f", "-"], JSON.stringify(WIDGET_CRD)],
        [established, ""],
        [["create", "namespace", "team-a"], ""],
        [["create", "namespace", "team-b"], ""],
      ] as const) {
        const r = await vc.vkubectl([...args], { input });
        assert.equal(r.code, 0, r.stderr);
      }
      // One writer for the create and the re-sync, as the syncer is one field manager.
      const made = await vc.virtual.admin.request(
        "POST",
        "/apis/example.com/v1/namespaces/team-a/widgets",
        JSON.parse(widget("team-a", "small")),
      );
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const copy = await widgetAt(vc.virtual.admin, "team-a");
      assert.equal(copy?.spec.size, "vgate-small");
      // The host's value again, as a re-sync of an unchanged host object sends it: nothing written.
      const sync = async (size: string) => {
        const r = await vc.virtual.admin.request<Widget>(
          "PATCH",
          "/apis/example.com/v1/namespaces/team-a/widgets/w",
          { spec: { size } },
          { "Content-Type": "application/merge-patch+json" },
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body;
      };
      const after = await sync("small");
      assert.equal(after.spec.size, "vgate-small");
      assert.equal(after.metadata.resourceVersion, copy?.metadata.resourceVersion, "no write");
      // A later host change is patched once; its re-sync writes nothing.
      const changed = await sync("large");
      assert.equal(changed.spec.size, "vgate-large");
      const again = await sync("large");
      assert.equal(again.spec.size, "vgate-large");
      assert.equal(again.metadata.resourceVersion, changed.metadata.resourceVersion, "no write");
      // A Widget no mapping names is the tenant's: untouched, with vgate's warning.
      const own = await vc.vkubectl(["create", "-f", "-"], { input: widget("team-b", "small") });
      assert.equal(own.code, 0, own.stderr);
      assert.match(
        own.stderr,
        /Warning: Widget "team-b\/w" not patched: sync\.fromHost\.customResources\.widgets\.example\.com\.mappings do not bring it from the host/,
      );
      assert.equal((await widgetAt(vc.virtual.admin, "team-b"))?.spec.size, "small");
      assert.equal(
        (await widgetAt(rig.admin, "shared"))?.spec.size,
        "small",
        "the host keeps its own",
      );
    });
  },
);
