// /mutate/patches called by a real kube-apiserver (test/support's shared cluster): a
// MutatingWebhookConfiguration built like the manifests' `patches` component (rules for the kinds
// the config patches, the vCluster's namespace, the objectSelector on vCluster's managed-by label
// and the matchCondition on its bookkeeping), and Pods and ConfigMaps written as vCluster's syncer
// writes them. kube-apiserver stores what vgate's patches make of them.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { servingCert } from "../../support/kube/pki.js";
import { CASES, hostCopy, loadedWith, setsOf, type KindCase } from "./patch-kinds-fixtures.js";
import { startPatchesServer, type PatchesServer } from "./patches-server.js";

type Stored = KubeObject & {
  metadata: {
    name: string;
    resourceVersion: string;
    annotations: Record<string, string>;
    labels: Record<string, string>;
  };
};

(HAVE_KUBE ? describe : describe.skip)(
  `/mutate/patches called by kube-apiserver${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    const id = randomBytes(3).toString("hex");
    // The fixtures' vCluster name (their expected values name it), in a namespace of this test's own.
    const vc = { name: "my-vcluster", namespace: `vcluster-kinds-${id}` };
    const kinds = CASES.filter((c) => c.kind.key === "pods" || c.kind.key === "configMaps");
    const pods = kinds.find((c) => c.kind.key === "pods")!;
    const configMaps = kinds.find((c) => c.kind.key === "configMaps")!;
    const namespace: KubeObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: vc.namespace },
    };
    // The Pod admission of a cluster without controller-manager needs the ServiceAccount.
    const account: KubeObject = {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: vc.namespace },
    };
    const path = (c: KindCase): string => `/api/v1/namespaces/${vc.namespace}/${c.kind.resource}`;
    let cluster: VgateCluster;
    let server: PatchesServer | undefined;
    let webhook: KubeObject | undefined;
    const created: KubeObject[] = [];

    async function create(c: KindCase, object: Record<string, unknown>): Promise<Stored> {
      const res = await cluster.admin.request<Stored>("POST", path(c), object);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      created.push(res.body);
      return res.body;
    }

    before(async () => {
      cluster = await sharedCluster();
      await cluster.admin.apply(namespace);
      await cluster.admin.apply(account);
      const tls = await servingCert(cluster.plane.ca, ["localhost"]);
      server = await startPatchesServer(loadedWith(setsOf(kinds), vc), {
        deadlineMs: 5_000,
        tls: { cert: tls.cert, key: tls.key, source: "test" },
      });
      webhook = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: `vgate-patches-${id}` },
        webhooks: [
          {
            name: `patches-${id}.vgate.example.com`,
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Fail",
            matchPolicy: "Equivalent",
            reinvocationPolicy: "Never",
            timeoutSeconds: 10,
            clientConfig: {
              url: server.url,
              caBundle: Buffer.from(cluster.caPem).toString("base64"),
            },
            rules: [
              {
                apiGroups: [""],
                apiVersions: ["v1"],
                resources: ["pods", "configmaps"],
                operations: ["CREATE", "UPDATE"],
                scope: "Namespaced",
              },
            ],
            namespaceSelector: {
              matchLabels: { "kubernetes.io/metadata.name": vc.namespace },
            },
            objectSelector: {
              matchExpressions: [
                { key: "vcluster.loft.sh/managed-by", operator: "In", values: [vc.name] },
              ],
            },
            matchConditions: [
              {
                name: "vcluster-copy",
                expression:
                  "has(object.metadata.annotations) && 'vcluster.loft.sh/object-name' in object.metadata.annotations",
              },
            ],
          },
        ],
      };
      await cluster.admin.create(webhook);
      // kube-apiserver picks the configuration up a moment after it is written.
      const probe = hostCopy(configMaps, vc);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await cluster.admin.request<Stored & { data: Record<string, string> }>(
          "POST",
          `${path(configMaps)}?dryRun=All`,
          probe,
        );
        if (res.status === 201 && res.body.metadata.annotations.team === "tenant-a") break;
        if (Date.now() > deadline) {
          throw new Error(`the webhook is not called: ${res.status} ${JSON.stringify(res.body)}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    });

    after(async () => {
      const admin = cluster?.admin;
      if (webhook) await admin.delete(webhook);
      await server?.stop();
      if (!admin) return;
      for (const object of created) await admin.delete(object);
      await admin.delete(account);
      // No controller-manager runs: the namespace stays Terminating, emptied above.
      await admin.delete(namespace);
    });

    for (const c of [pods, configMaps]) {
      it(`${c.kind.kind}: stores the patched copy, and a re-sync by the syncer writes nothing`, async () => {
        const host = hostCopy(c, vc);
        const stored = await create(c, host);
        assert.deepEqual(c.field(stored), c.expected);
        assert.equal(stored.metadata.annotations.team, "tenant-a");
        const virtualName = (c.virtual.metadata as { name: string }).name;
        assert.equal(stored.metadata.annotations["vcluster.loft.sh/object-name"], virtualName);
        // The syncer writes its translation of the unchanged virtual object over the stored one:
        // vgate patches the change set back to what is stored, so kube-apiserver stores nothing new.
        const resync: Record<string, unknown> = {
          ...structuredClone(stored),
          ...Object.fromEntries(
            Object.entries(host).filter(([key]) => key !== "metadata" && key !== "status"),
          ),
          metadata: {
            ...structuredClone(stored.metadata),
            annotations: (host.metadata as Stored["metadata"]).annotations,
          },
        };
        if (c === pods) {
          // kube-apiserver defaulted the spec: keep it, and put the unpatched image back.
          resync.spec = structuredClone((stored as unknown as { spec: unknown }).spec);
          (resync.spec as { containers: { image: string }[] }).containers[0]!.image = "nginx:1.27";
        }
        const res = await cluster.admin.request<Stored>(
          "PUT",
          `${path(c)}/${encodeURIComponent(stored.metadata.name)}`,
          resync,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(c.field(res.body), c.expected);
        assert.equal(res.body.metadata.annotations.team, "tenant-a");
        assert.equal(res.body.metadata.resourceVersion, stored.metadata.resourceVersion);
      });
    }

    it("another vCluster's copy and an object without bookkeeping are stored as written", async () => {
      const other = hostCopy(configMaps, { name: `other-${id}`, namespace: vc.namespace });
      (other.metadata as { name: string }).name = `other-${id}`;
      const otherStored = await create(configMaps, other);
      assert.equal(otherStored.metadata.annotations.team, "a");
      const plain = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: `plain-${id}`,
          annotations: { team: "a" },
          labels: { "vcluster.loft.sh/managed-by": vc.name },
        },
        data: { endpoint: "db.team-a.svc" },
      };
      const plainStored = await create(configMaps, plain);
      assert.equal(plainStored.metadata.annotations.team, "a");
      assert.equal(
        (plainStored as unknown as { data: { endpoint: string } }).data.endpoint,
        "db.team-a.svc",
      );
    });
  },
);
