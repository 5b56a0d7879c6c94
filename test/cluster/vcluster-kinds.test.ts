// vgate's patches on several kinds next to vCluster's real syncer, on the node rig. vgate is
// installed as the README's install section says, with the `patches` component as
// manifests/README.md says (vcluster.env, vcluster.yaml, and the rules of patches-webhook.yaml and
// virtual-cluster.yaml edited to the kinds below), and the virtual cluster's webhook for the
// changes vCluster brings back (without it, vgate's patches of ConfigMap data, Secret labels and
// Service annotations come back into the virtual objects: docs/reference.md#kinds-real-syncer).
// The syncer (open-source vCluster v0.34) gets no patches in its own config: it refuses them as a
// Pro feature (docs/reference.md#endpoints-syncer-switch); vgate runs them. For each kind, on the
// host copy the syncer writes: the patch is there, the virtual object keeps what its user wrote in
// every write the log sees, and the host object's writes stop (a quiet spell within a bounded
// time: a syncer and a patch that disagree would write for ever). The Pod runs on the real node
// with its patched nodeSelector; an update in the virtual cluster reaches the host with the patches
// run on the changed fields only, and the tenant's own change stays (docs/decisions.md KND-40).
// Ingresses keep vCluster's backend names next to the patched hosts. A custom resource toHost gets
// no host copy at all: open-source vCluster has no syncer for it (docs/decisions.md KND-60). A
// PriorityClass, cluster-scoped, reaches vgate through cluster-patches-webhook.yaml, on vCluster's
// cluster marker (docs/decisions.md KND-100).

import assert from "node:assert/strict";
import type { KubeObject, KubeTestClient } from "../support/kube/kube-client.js";
import { hostNameCluster, safeConcatName } from "../../webhook/src/patches/host-names.js";
import { untilValue } from "../support/until.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate, type PatchesComponent } from "../support/node/vgate-install.js";
import { hostNameShort } from "../support/vcluster/host-name-short.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { installVirtualWebhook } from "../support/vcluster/virtual-webhook.js";
import { writeLog, type WriteLog } from "../support/vcluster/write-log.js";

/** A host object is quiet after this long without a write to it... */
const QUIET_MS = 10_000;
/** ...which must come within this long of the change. */
const SETTLE_MS = 60_000;

// What a platform team writes: ConfigMaps pull through a mirror, Secrets carry the tenant on the
// host, Services name their TLS Secret's host copy and a load-balancer pool of the tenants', Pods
// run on Linux nodes only and are never evicted by the autoscaler, Ingresses serve the tenants' hosts
// as names under the host's domain, from the platform's source ranges only. Expressions that are not
// idempotent (a prefix), so a patch run twice on one value shows. A patch never creates a missing
// key (docs/reference.md#patch-path-resolution), so the Pod's patches add theirs to the whole map.
const MIRROR = "mirror.example.com/";
const HOST_DOMAIN = ".apps.example.com";
const CONFIG = `sync:
  toHost:
    pods:
      patches:
        - path: spec.nodeSelector
          expression: '({...value, "kubernetes.io/os": "linux"})'
        - path: metadata.annotations
          expression: '({...value, "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"})'
    secrets:
      patches:
        - path: metadata.labels["example.com/tenant"]
          expression: '"vc-" + value'
    configMaps:
      patches:
        - path: data.registry
          expression: '"${MIRROR}" + value'
        - path: data["fallback-registry"]
          expression: '"${MIRROR}" + value'
    ingresses:
      enabled: true
      patches:
        - path: spec.rules[*].host
          expression: 'value.split(".").join("-") + "${HOST_DOMAIN}"'
        - path: metadata.annotations
          expression: '({...value, "nginx.ingress.kubernetes.io/whitelist-source-range": "10.0.0.0/8"})'
    customResources:
      widgets.example.com:
        enabled: true
        patches:
          - path: spec.size
            expression: '"host-" + value'
    priorityClasses:
      enabled: true
      patches:
        - path: metadata.labels["example.com/tenant"]
          expression: '"vc-" + value'
    services:
      patches:
        - path: metadata.annotations["example.com/tls-secret"]
          reference:
            apiVersion: v1
            kind: Secret
        - path: metadata.annotations["example.com/lb-pool"]
          expression: '"tenants-" + value'
`;

/** The kinds CONFIG patches, as the component's rules list them; status where vCluster copies it. */
const KINDS: PatchesComponent["kinds"] = [
  { group: "", resource: "pods", status: true },
  { group: "", resource: "secrets" },
  { group: "", resource: "configmaps" },
  { group: "", resource: "services", status: true },
  { group: "networking.k8s.io", resource: "ingresses", status: true },
  { group: "example.com", resource: "widgets", status: true },
  { group: "scheduling.k8s.io", resource: "priorityclasses", scope: "Cluster" },
];

// What the syncer needs to sync these kinds: every ConfigMap and Secret, not only those a Pod uses,
// Ingresses, and the custom resource (pods and services are on by the chart's defaults). No
// patches: see the header.
const SYNCER_VALUES = {
  sync: {
    toHost: {
      configMaps: { all: true },
      secrets: { all: true },
      ingresses: { enabled: true },
      priorityClasses: { enabled: true },
      customResources: { "widgets.example.com": { enabled: true } },
    },
  },
};

/** A small namespaced custom resource, defined in both clusters. */
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
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { size: { type: "string" } } },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

type Obj = KubeObject & {
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: Record<string, unknown> & { nodeSelector?: Record<string, string>; nodeName?: string };
  status?: { phase?: string };
};

const annotations = (o: Obj | null): Record<string, string> => o?.metadata.annotations ?? {};
const labels = (o: Obj | null): Record<string, string> => o?.metadata.labels ?? {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Kind = "ConfigMap" | "Secret" | "Service" | "Pod" | "Ingress" | "Widget" | "PriorityClass";
/** Each kind's apiVersion and plural, and whether it is cluster-scoped. */
const API: Record<Kind, { apiVersion: string; plural: string; cluster?: true }> = {
  ConfigMap: { apiVersion: "v1", plural: "configmaps" },
  Secret: { apiVersion: "v1", plural: "secrets" },
  Service: { apiVersion: "v1", plural: "services" },
  Pod: { apiVersion: "v1", plural: "pods" },
  Ingress: { apiVersion: "networking.k8s.io/v1", plural: "ingresses" },
  Widget: { apiVersion: "example.com/v1", plural: "widgets" },
  PriorityClass: { apiVersion: "scheduling.k8s.io/v1", plural: "priorityclasses", cluster: true },
};
/** The list path of `kind` in `namespace` (a cluster-scoped kind's ignores it). */
const collection = (kind: Kind, namespace: string): string => {
  const { apiVersion, plural, cluster } = API[kind];
  const base = apiVersion === "v1" ? "/api/v1" : `/apis/${apiVersion}`;
  return cluster ? `${base}/${plural}` : `${base}/namespaces/${namespace}/${plural}`;
};

type IngressRule = {
  host?: string;
  http?: { paths: { backend: { service?: { name: string } } }[] };
};
const rules = (o: Obj | null): IngressRule[] => (o?.spec?.["rules"] as IngressRule[]) ?? [];
const ruleHosts = (o: Obj | null): (string | undefined)[] => rules(o).map((r) => r.host);
const WHITELIST = "nginx.ingress.kubernetes.io/whitelist-source-range";

/** An Ingress rule for `host`, to the Service web. */
const ingressRule = (host: string) => ({
  host,
  http: {
    paths: [
      {
        path: "/",
        pathType: "Prefix",
        backend: { service: { name: "web", port: { number: 80 } } },
      },
    ],
  },
});

(HAVE_VCLUSTER ? describe : describe.skip)(
  `vgate's patches on several kinds with vCluster's real syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    const ns = "default";
    let rig: NodeRig;
    let vc: VClusterRig;
    const host = {} as Record<Kind, WriteLog>;
    const virtual = {} as Record<Kind, WriteLog>;
    let created = 0;
    const figures: string[] = [];

    // By path: the client's plural of Ingress would be wrong.
    async function getObject(c: KubeTestClient, kind: Kind, namespace: string, name: string) {
      const res = await c.request<Obj>("GET", `${collection(kind, namespace)}/${name}`);
      if (res.status === 404) return null;
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    }
    const hostObject = (kind: Kind, name: string) =>
      getObject(rig.admin, kind, vc.hostNamespace, vc.hostName(ns, name));
    const virtualObject = (kind: Kind, name: string) => getObject(vc.virtual.admin, kind, ns, name);

    /**
     * Until the host copy of `name` has had no write for QUIET_MS, within SETTLE_MS of `since`;
     * the number of host writes to it since `since`, and of virtual ones (the user's excluded).
     */
    async function quiet(
      kind: Kind,
      name: string,
      since: number,
      user = 1,
      hostName = vc.hostName(ns, name),
    ) {
      const start = Date.now();
      for (;;) {
        const writes = host[kind].since(since, (n) => n === hostName);
        const last = writes.at(-1)?.at ?? since;
        if (Date.now() - last >= QUIET_MS) {
          const v = virtual[kind].since(since, (n) => n === name).length - user;
          return { host: writes.length, virtual: v };
        }
        if (Date.now() - start > SETTLE_MS)
          assert.fail(
            `${kind} ${hostName}: ${writes.length} host writes since the change, still writing after ${SETTLE_MS} ms`,
          );
        await sleep(500);
      }
    }

    /** Every write the virtual log saw of `name` since `since` satisfies `ok` (no write back). */
    function everyVirtualWrite(kind: Kind, name: string, since: number, ok: (o: Obj) => boolean) {
      const bad = virtual[kind]
        .since(since, (n) => n === name)
        .filter((w) => w.type !== "DELETED" && !ok(w.object as Obj));
      assert.deepEqual(
        bad.map((w) => `${w.type} ${w.resourceVersion} ${JSON.stringify(w.object["metadata"])}`),
        [],
        `virtual ${kind} ${name}: writes carrying the host's patched value`,
      );
    }

    async function mergePatch(kind: Kind, name: string, patch: Record<string, unknown>) {
      const path = `${collection(kind, ns)}/${name}`;
      const res = await vc.virtual.admin.request("PATCH", path, patch, {
        "Content-Type": "application/merge-patch+json",
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      const crd = JSON.stringify(WIDGET_CRD);
      const established = [
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/widgets.example.com",
      ];
      for (const args of [["apply", "-f", "-"], established]) {
        const r = await rig.kubectl(args, { input: crd });
        assert.equal(r.code, 0, r.stderr);
      }
      // vgate first: with failurePolicy Fail its webhook must answer before the syncer writes.
      const install = await installVgate(rig, images.vgate, {
        patches: {
          vclusterName: "vc",
          vclusterNamespace: "vcluster-vc",
          config: CONFIG,
          kinds: KINDS,
        },
      });
      vc = await startVCluster(rig, vclusterParts(), { values: SYNCER_VALUES });
      await installVirtualWebhook(install, vc.virtual.adminKubeconfig, "patches");
      for (const args of [["apply", "-f", "-"], established]) {
        const r = await vc.vkubectl(args, { input: crd });
        assert.equal(r.code, 0, r.stderr);
      }
      // A resource whose watch cache is still initializing (a new CRD's; any after kube-apiserver's
      // restart) answers 429 for a moment: each list must answer 200 before its log opens.
      const served = async (c: KubeTestClient, path: string) => {
        await untilValue(
          `${path} served`,
          async () => (await c.request("GET", path)).status,
          (status) => status === 200,
          30_000,
        );
        return writeLog(c, path);
      };
      for (const kind of Object.keys(API) as Kind[]) {
        host[kind] = await served(rig.admin, collection(kind, vc.hostNamespace));
        virtual[kind] = await served(vc.virtual.admin, collection(kind, ns));
      }
      created = Date.now();
      const v = vc.virtual.admin;
      const priorityClass = await v.request("POST", collection("PriorityClass", ns), {
        apiVersion: "scheduling.k8s.io/v1",
        kind: "PriorityClass",
        metadata: { name: "batch", labels: { "example.com/tenant": "team-a" } },
        value: 1000,
        description: "batch jobs",
      });
      assert.equal(priorityClass.status, 201, JSON.stringify(priorityClass.body));
      // First, so the other kinds' copies show the syncer had time for it.
      await v.create({
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w", namespace: ns },
        spec: { size: "small" },
      } as KubeObject);
      await v.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "web-tls", namespace: ns, labels: { "example.com/tenant": "team-a" } },
        type: "Opaque",
        stringData: { "tls.key": "not-a-key" },
      } as KubeObject);
      await v.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "app", namespace: ns },
        data: { registry: "docker.io/library", "fallback-registry": "quay.io", level: "info" },
      } as KubeObject);
      await v.create({
        apiVersion: "v1",
        kind: "Service",
        metadata: {
          name: "web",
          namespace: ns,
          annotations: { "example.com/tls-secret": "web-tls", "example.com/lb-pool": "blue" },
        },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      } as KubeObject);
      const ingress = await v.request("POST", collection("Ingress", ns), {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "web", namespace: ns, annotations: { "example.com/team": "team-a" } },
        spec: { rules: [ingressRule("shop.team-a.example"), ingressRule("api.team-a.example")] },
      });
      assert.equal(ingress.status, 201, JSON.stringify(ingress.body));
      // The virtual default ServiceAccount may come a moment after the namespace: retry on 403.
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", namespace: ns, labels: { app: "web" } },
        spec: {
          nodeSelector: { "kubernetes.io/hostname": rig.nodeName },
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "sleep",
              image: images.test.ref,
              imagePullPolicy: "Never",
              command: ["sleep", "3600"],
            },
          ],
        },
      };
      await untilValue(
        "the virtual Pod web created",
        async () => (await v.request("POST", `/api/v1/namespaces/${ns}/pods`, pod)).status,
        (status) => status === 201,
        30_000,
      );
    });
    after(async () => {
      for (const l of [...Object.values(host), ...Object.values(virtual)]) l.stop();
      if (figures.length > 0) console.log(`      writes until quiet: ${figures.join("; ")}`);
      await vc?.stop();
      await rig?.stop();
    });

    it("ConfigMap: data rewritten on the host, virtual unchanged, writes stop", async () => {
      const copy = await untilValue(
        "the host copy of the ConfigMap app",
        () => hostObject("ConfigMap", "app"),
        (o) => o !== null,
      );
      assert.deepEqual(copy!.data, {
        registry: `${MIRROR}docker.io/library`,
        "fallback-registry": `${MIRROR}quay.io`,
        level: "info",
      });
      const n = await quiet("ConfigMap", "app", created);
      figures.push(`ConfigMap host ${n.host}, virtual ${n.virtual}`);
      assert.deepEqual((await hostObject("ConfigMap", "app"))!.data, copy!.data);
      const own = { registry: "docker.io/library", "fallback-registry": "quay.io", level: "info" };
      assert.deepEqual((await virtualObject("ConfigMap", "app"))!.data, own);
      everyVirtualWrite(
        "ConfigMap",
        "app",
        created,
        (o) => !o.data?.["registry"]?.startsWith(MIRROR),
      );
    });

    it("PriorityClass (cluster-scoped): label patched on the marked host copy, virtual unchanged, writes stop", async () => {
      // vCluster names and marks a cluster-scoped copy with its namespace too (HostNameCluster,
      // MarkerLabelCluster): cluster-patches-webhook.yaml selects that marker.
      const hostName = hostNameCluster("batch", vc.hostNamespace, vc.name);
      const copy = await untilValue(
        "the host copy of the PriorityClass batch",
        () => getObject(rig.admin, "PriorityClass", "", hostName),
        (o) => o !== null,
      );
      assert.equal(labels(copy)["example.com/tenant"], "vc-team-a");
      assert.equal(
        labels(copy)["vcluster.loft.sh/managed-by"],
        safeConcatName(vc.hostNamespace, "x", vc.name),
      );
      const n = await quiet("PriorityClass", "batch", created, 1, hostName);
      figures.push(`PriorityClass host ${n.host}, virtual ${n.virtual}`);
      assert.equal(
        labels(await getObject(rig.admin, "PriorityClass", "", hostName))["example.com/tenant"],
        "vc-team-a",
      );
      assert.equal(
        labels(await virtualObject("PriorityClass", "batch"))["example.com/tenant"],
        "team-a",
      );
      everyVirtualWrite(
        "PriorityClass",
        "batch",
        created,
        (o) => labels(o)["example.com/tenant"] === "team-a",
      );
    });

    it("Secret: label patched on the host, virtual unchanged, writes stop", async () => {
      const copy = await untilValue(
        "the host copy of the Secret web-tls",
        () => hostObject("Secret", "web-tls"),
        (o) => o !== null,
      );
      assert.equal(labels(copy)["example.com/tenant"], "vc-team-a");
      assert.equal(labels(copy)["vcluster.loft.sh/managed-by"], vc.name);
      const n = await quiet("Secret", "web-tls", created);
      figures.push(`Secret host ${n.host}, virtual ${n.virtual}`);
      assert.equal(
        labels(await hostObject("Secret", "web-tls"))["example.com/tenant"],
        "vc-team-a",
      );
      assert.equal(
        labels(await virtualObject("Secret", "web-tls"))["example.com/tenant"],
        "team-a",
      );
      everyVirtualWrite(
        "Secret",
        "web-tls",
        created,
        (o) => labels(o)["example.com/tenant"] === "team-a",
      );
    });

    it("Service: reference and expression on annotations, virtual unchanged, writes stop", async () => {
      const copy = await untilValue(
        "the host copy of the Service web",
        () => hostObject("Service", "web"),
        (o) => o !== null,
      );
      const a = annotations(copy);
      assert.equal(a["example.com/tls-secret"], hostNameShort("web-tls", ns, vc.name));
      assert.equal(a["example.com/lb-pool"], "tenants-blue");
      // As docs/reference.md#kinds-real-syncer says: the reference names the short host name
      // (EPS-1), but open-source vCluster's copy of the Secret has the long one, and nothing in
      // webhook mode makes a Secret of the short name.
      const secret = (name: string) =>
        rig.admin.get({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace: vc.hostNamespace },
        });
      assert.notEqual(await secret(vc.hostName(ns, "web-tls")), null);
      assert.equal(await secret(a["example.com/tls-secret"]!), null);
      const n = await quiet("Service", "web", created);
      figures.push(`Service host ${n.host}, virtual ${n.virtual}`);
      assert.deepEqual(annotations(await hostObject("Service", "web")), a);
      const own = annotations(await virtualObject("Service", "web"));
      assert.equal(own["example.com/tls-secret"], "web-tls");
      assert.equal(own["example.com/lb-pool"], "blue");
      everyVirtualWrite(
        "Service",
        "web",
        created,
        (o) => annotations(o)["example.com/lb-pool"] === "blue",
      );
    });

    it("Pod: runs on the node with its patched nodeSelector and annotation, writes stop", async () => {
      const running = await untilValue(
        "the host Pod web Running",
        () => hostObject("Pod", "web"),
        (o) => o?.status?.phase === "Running",
        120_000,
      );
      assert.equal(running!.spec!.nodeName, rig.nodeName);
      assert.deepEqual(running!.spec!.nodeSelector, {
        "kubernetes.io/hostname": rig.nodeName,
        "kubernetes.io/os": "linux",
      });
      assert.equal(annotations(running)["cluster-autoscaler.kubernetes.io/safe-to-evict"], "false");
      const n = await quiet("Pod", "web", created);
      figures.push(`Pod host ${n.host}, virtual ${n.virtual}`);
      const after = await hostObject("Pod", "web");
      assert.equal(after!.status!.phase, "Running");
      assert.equal(annotations(after)["cluster-autoscaler.kubernetes.io/safe-to-evict"], "false");
      const own = await untilValue(
        "the virtual Pod web Running",
        () => virtualObject("Pod", "web"),
        (o) => o?.status?.phase === "Running",
      );
      assert.deepEqual(own!.spec!.nodeSelector, { "kubernetes.io/hostname": rig.nodeName });
      everyVirtualWrite(
        "Pod",
        "web",
        created,
        (o) => !("cluster-autoscaler.kubernetes.io/safe-to-evict" in annotations(o)),
      );
    });

    it("Ingress: hosts and annotations patched on the host, backends vCluster's, writes stop", async () => {
      const copy = await untilValue(
        "the host copy of the Ingress web",
        () => hostObject("Ingress", "web"),
        (o) => o !== null,
      );
      assert.deepEqual(ruleHosts(copy), [
        `shop-team-a-example${HOST_DOMAIN}`,
        `api-team-a-example${HOST_DOMAIN}`,
      ]);
      // vCluster's own translation of the backends is kept: the Service's host name.
      const backends = rules(copy).map((r) => r.http?.paths[0]?.backend.service?.name);
      assert.deepEqual(backends, [vc.hostName(ns, "web"), vc.hostName(ns, "web")]);
      assert.equal(annotations(copy)[WHITELIST], "10.0.0.0/8");
      assert.equal(annotations(copy)["example.com/team"], "team-a");
      const n = await quiet("Ingress", "web", created);
      figures.push(`Ingress host ${n.host}, virtual ${n.virtual}`);
      const after = await hostObject("Ingress", "web");
      assert.deepEqual(ruleHosts(after), ruleHosts(copy));
      assert.equal(annotations(after)[WHITELIST], "10.0.0.0/8");
      const own = await virtualObject("Ingress", "web");
      assert.deepEqual(ruleHosts(own), ["shop.team-a.example", "api.team-a.example"]);
      assert.deepEqual(
        rules(own).map((r) => r.http?.paths[0]?.backend.service?.name),
        ["web", "web"],
      );
      assert.equal(annotations(own)["example.com/team"], "team-a");
      everyVirtualWrite("Ingress", "web", created, (o) =>
        ruleHosts(o).every((h) => !h?.endsWith(HOST_DOMAIN)),
      );
      // The Ingress syncer merges a host change of the annotations into the virtual object
      // (AnnotationsBidirectionalUpdateFunction), the key the annotation-map patch adds included
      // (docs/reference.md#ingress-added-key); the virtual webhook's echo rule leaves it out (KND-61).
      assert.equal(annotations(own)[WHITELIST], undefined);
      everyVirtualWrite("Ingress", "web", created, (o) => !(WHITELIST in annotations(o)));
    });

    it("custom resource toHost: open-source vCluster makes no host copy to patch", async () => {
      // docs/reference.md#custom-resources-to-host: the syncer of sync.toHost.customResources is
      // vCluster Pro's (pro.BuildProSyncers builds none in the open-source module). The Widget was
      // created before every other object, whose host copies the tests above saw.
      assert.deepEqual((await virtualObject("Widget", "w"))?.spec, { size: "small" });
      assert.equal(await hostObject("Widget", "w"), null);
      const all = await rig.admin.request<{ items: Obj[] }>("GET", "/apis/example.com/v1/widgets");
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.deepEqual(
        all.body.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
        [],
      );
      assert.deepEqual(host.Widget.since(created), []);
      // The virtual Widget is the user's alone: nothing wrote it after its create.
      assert.equal(virtual.Widget.since(created).length, 1);
    });

    it("an update in the virtual cluster is patched on its changed fields only", async () => {
      const t0 = Date.now();
      await mergePatch("ConfigMap", "app", { data: { registry: "ghcr.io/team", level: "debug" } });
      await mergePatch("Service", "web", {
        metadata: { annotations: { "example.com/lb-pool": "green" } },
      });
      await mergePatch("Ingress", "web", {
        spec: { rules: [ingressRule("store.team-a.example"), ingressRule("api.team-a.example")] },
      });
      const cm = await untilValue(
        "the host ConfigMap app with the new registry",
        () => hostObject("ConfigMap", "app"),
        (o) => o?.data?.["level"] === "debug",
      );
      // The changed value patched once; the unchanged one keeps its one prefix.
      assert.deepEqual(cm!.data, {
        registry: `${MIRROR}ghcr.io/team`,
        "fallback-registry": `${MIRROR}quay.io`,
        level: "debug",
      });
      const svc = await untilValue(
        "the host Service web with the new pool",
        () => hostObject("Service", "web"),
        (o) => annotations(o)["example.com/lb-pool"] !== "tenants-blue",
      );
      assert.equal(annotations(svc)["example.com/lb-pool"], "tenants-green");
      assert.equal(
        annotations(svc)["example.com/tls-secret"],
        hostNameShort("web-tls", ns, vc.name),
      );
      const ing = await untilValue(
        "the host Ingress web with the new host",
        () => hostObject("Ingress", "web"),
        (o) => ruleHosts(o)[0] !== `shop-team-a-example${HOST_DOMAIN}`,
      );
      // Each host patched once, the one the user did not change too.
      assert.deepEqual(ruleHosts(ing), [
        `store-team-a-example${HOST_DOMAIN}`,
        `api-team-a-example${HOST_DOMAIN}`,
      ]);
      assert.equal(annotations(ing)[WHITELIST], "10.0.0.0/8");
      const [c, s, i] = await Promise.all([
        quiet("ConfigMap", "app", t0),
        quiet("Service", "web", t0),
        quiet("Ingress", "web", t0),
      ]);
      figures.push(`after the update: ConfigMap host ${c.host}, virtual ${c.virtual}`);
      figures.push(`Service host ${s.host}, virtual ${s.virtual}`);
      figures.push(`Ingress host ${i.host}, virtual ${i.virtual}`);
      assert.deepEqual(ruleHosts(await hostObject("Ingress", "web")), ruleHosts(ing));
      assert.deepEqual(ruleHosts(await virtualObject("Ingress", "web")), [
        "store.team-a.example",
        "api.team-a.example",
      ]);
      everyVirtualWrite("Ingress", "web", t0, (o) =>
        ruleHosts(o).every((h) => !h?.endsWith(HOST_DOMAIN)),
      );
      assert.deepEqual((await hostObject("ConfigMap", "app"))!.data, cm!.data);
      assert.equal(
        annotations(await hostObject("Service", "web"))["example.com/lb-pool"],
        "tenants-green",
      );
      assert.deepEqual((await virtualObject("ConfigMap", "app"))!.data, {
        registry: "ghcr.io/team",
        "fallback-registry": "quay.io",
        level: "debug",
      });
      assert.equal(
        annotations(await virtualObject("Service", "web"))["example.com/lb-pool"],
        "green",
      );
      everyVirtualWrite("ConfigMap", "app", t0, (o) => !o.data?.["registry"]?.startsWith(MIRROR));
      everyVirtualWrite(
        "Service",
        "web",
        t0,
        (o) => !annotations(o)["example.com/lb-pool"]?.startsWith("tenants-"),
      );
    });
  },
);
