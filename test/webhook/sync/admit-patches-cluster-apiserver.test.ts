// Cluster-scoped host copies through a real kube-apiserver (test/support's shared cluster), with
// the webhook the Helm chart's `patches` value renders for them (docs/decisions.md KND-100): the
// chart gets one vcluster.yaml that patches PriorityClasses, StorageClasses and PersistentVolumes,
// and computes vCluster's cluster marker itself; the test registers the `mutate.cluster-patches`
// webhook as rendered, with only its clientConfig aimed at an in-process /mutate/patches that
// `vgate serve --config` would assemble from the same config. The objects are written as vCluster's
// syncer writes them (translate.HostMetadata: the marker label, the bookkeeping annotations,
// HostNameCluster names). The vCluster's name is long enough that its marker is shortened with a
// hash, and a second vCluster's marker shares its first 52 bytes.

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { parseAllDocuments, stringify } from "yaml";
import type { AdmissionRequest } from "../../../webhook/src/admission/review.js";
import { patchesAdmission } from "../../../webhook/src/cli/serve-patches.js";
import { loadVClusterConfig } from "../../../webhook/src/config/load-config.js";
import { loadedVCluster } from "../../../webhook/src/config/loaded-vcluster.js";
import { hostNameCluster, safeConcatName } from "../../../webhook/src/patches/host-names.js";
import { createApp, listen, type RunningServer } from "../../../webhook/src/server/app.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { createMetrics } from "../../../webhook/src/server/metrics.js";
import { admitPatches } from "../../../webhook/src/sync/admit-patches.js";
import { hostNamespaceOwnership } from "../../../webhook/src/sync/host-ownership.js";
import {
  startPatchRunner,
  type StartedPatchRunner,
} from "../../../webhook/src/sync/patch-runner.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { HAVE_HELM, HELM_SKIP_REASON, helm } from "../../support/helm/helm-binary.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { servingCert } from "../../support/kube/pki.js";

type Json = Record<string, unknown>;
type Stored = KubeObject & {
  metadata: {
    name: string;
    resourceVersion: string;
    annotations: Record<string, string>;
    labels: Record<string, string>;
  };
};

/** A cluster-scoped kind: its virtual object, its patches, and the field they rewrite. */
interface ClusterCase {
  key: string;
  apiVersion: string;
  kind: string;
  resource: string;
  patches: Json[];
  virtual: Json;
  field(o: Json): unknown;
  expected(vc: string): unknown;
}

const TEAM = { path: 'metadata.annotations["team"]', expression: '"tenant-" + value' };
const virtualMeta = (name: string): Json => ({
  name,
  uid: randomUUID(),
  annotations: { team: "a" },
  labels: { tier: "gold" },
});

const CASES: ClusterCase[] = [
  {
    key: "priorityClasses",
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    resource: "priorityclasses",
    patches: [
      TEAM,
      { path: "description", expression: 'value + " (" + context.vcluster.name + ")"' },
    ],
    virtual: { metadata: virtualMeta("high"), value: 1000, description: "batch jobs" },
    field: (o) => o.description,
    expected: (vc) => `batch jobs (${vc})`,
  },
  {
    key: "storageClasses",
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    resource: "storageclasses",
    patches: [TEAM, { path: 'metadata.labels["tier"]', expression: '"cluster-" + value' }],
    virtual: {
      metadata: virtualMeta("fast"),
      provisioner: "example.com/fast",
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
    },
    field: (o) => ((o.metadata as Json).labels as Json).tier,
    expected: () => "cluster-gold",
  },
  {
    key: "persistentVolumes",
    apiVersion: "v1",
    kind: "PersistentVolume",
    resource: "persistentvolumes",
    patches: [TEAM, { path: "spec.hostPath.path", expression: '"/mnt/tenants" + value' }],
    virtual: {
      metadata: virtualMeta("data"),
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        hostPath: { path: "/data" },
      },
    },
    field: (o) => ((o.spec as Json).hostPath as Json).path,
    expected: () => "/mnt/tenants/data",
  },
];

/** The collection path of a case's kind on the host. */
const pathOf = (c: ClusterCase): string =>
  `${c.apiVersion.includes("/") ? "/apis" : "/api"}/${c.apiVersion}/${c.resource}`;

/** `group/version, Kind=kind` as vCluster writes vcluster.loft.sh/object-kind. */
const kindAnnotation = (c: ClusterCase): string => {
  const [group, version] = c.apiVersion.includes("/")
    ? c.apiVersion.split("/")
    : ["", c.apiVersion];
  return `${group}/${version}, Kind=${c.kind}`;
};

/** The host copy vCluster's syncer writes for `vc` (translate.HostMetadata, HostNameCluster). */
function hostCopy(c: ClusterCase, vc: { name: string; namespace: string }): Json {
  const v = structuredClone(c.virtual);
  const vm = v.metadata as Json;
  const name = hostNameCluster(vm.name as string, vc.namespace, vc.name);
  return {
    ...v,
    apiVersion: c.apiVersion,
    kind: c.kind,
    metadata: {
      name,
      annotations: {
        ...(vm.annotations as Json),
        "vcluster.loft.sh/object-name": vm.name,
        "vcluster.loft.sh/object-uid": vm.uid,
        "vcluster.loft.sh/object-kind": kindAnnotation(c),
        "vcluster.loft.sh/object-host-name": name,
      },
      labels: {
        ...(vm.labels as Json),
        "vcluster.loft.sh/managed-by": safeConcatName(vc.namespace, "x", vc.name),
      },
    },
  };
}

/** The config both the chart and vgate read. */
function configText(): string {
  return stringify({
    sync: {
      toHost: Object.fromEntries(CASES.map((c) => [c.key, { enabled: true, patches: c.patches }])),
    },
  });
}

/** /mutate/patches as `vgate serve --config` assembles it, recording every request it gets. */
async function startRecordingServer(
  config: string,
  vc: { name: string; namespace: string },
  tls: { cert: string; key: string },
): Promise<{ url: string; seen: string[]; stop(): Promise<void> }> {
  const loaded = loadedVCluster(loadVClusterConfig(config, "vcluster.yaml"), vc);
  const runner: StartedPatchRunner = await startPatchRunner(loaded, {
    workers: 1,
    deadlineMs: 5_000,
  });
  let server: RunningServer;
  const seen: string[] = [];
  try {
    const owner = {
      vclusterName: vc.name,
      vclusterNamespace: vc.namespace,
      ownNamespaces: [vc.namespace],
    };
    const host = patchesAdmission(loaded, runner, createMetrics(false), {
      onPatchError: "deny",
      side: "host",
      owner: {
        vclusterName: vc.name,
        vclusterNamespace: vc.namespace,
        ownership: (namespace: string) => hostNamespaceOwnership(namespace, owner),
      },
    });
    const app = createApp({
      logger: createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
      metrics: createMetrics(false),
      routes: {
        "/mutate/patches": (req: AdmissionRequest) => {
          seen.push(`${req.resource.resource}/${req.name}`);
          return admitPatches(req, host);
        },
      },
    });
    server = await listen(app, { ...tls, source: "test" }, 0, "127.0.0.1");
  } catch (err) {
    await runner.close();
    throw err;
  }
  return {
    url: `https://127.0.0.1:${server.port}/mutate/patches`,
    seen,
    async stop() {
      await server.close();
      await runner.close();
    },
  };
}

(HAVE_KUBE && HAVE_HELM ? describe : describe.skip)(
  `/mutate/patches for cluster-scoped kinds, the chart's webhook, kube-apiserver${KUBE_SKIP_REASON || HELM_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    const id = randomBytes(3).toString("hex");
    // 27 + 3 + 41 = 71 bytes joined: the marker is shortened with SafeConcatName's hash.
    const vc = {
      name: `tenant-${id}-eu-west-1-prod-b`,
      namespace: `vcluster-${id}-${"n".repeat(25)}`,
    };
    // Another vCluster whose joined name shares the first 52 bytes: only the hash tells them apart.
    const other = { name: `${vc.name}x`, namespace: vc.namespace };
    const marker = safeConcatName(vc.namespace, "x", vc.name);
    let cluster: VgateCluster;
    let scratch: string | undefined;
    let server: Awaited<ReturnType<typeof startRecordingServer>> | undefined;
    let rendered: Json | undefined;
    let webhook: KubeObject | undefined;
    const created: string[] = [];

    async function create(c: ClusterCase, object: Json): Promise<Stored> {
      const res = await cluster.admin.request<Stored>("POST", pathOf(c), object);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      created.push(`${pathOf(c)}/${encodeURIComponent(res.body.metadata.name)}`);
      return res.body;
    }

    before(async function () {
      assert.ok(Buffer.byteLength(`${vc.namespace}-x-${vc.name}`) > 63);
      assert.notEqual(safeConcatName(other.namespace, "x", other.name), marker);
      assert.equal(
        safeConcatName(other.namespace, "x", other.name).slice(0, 52),
        marker.slice(0, 52),
      );
      cluster = await sharedCluster();
      scratch = await mkdtemp(join(tmpdir(), "vgate-cluster-patches-"));
      const config = configText();
      const configFile = join(scratch, "vcluster.yaml");
      await writeFile(configFile, config);
      const out = await helm(
        [
          "template",
          "vgate",
          join(repoRoot, "charts/vgate"),
          "--namespace",
          "vgate-system",
          "--set",
          `patches.enabled=true,patches.vclusterName=${vc.name},patches.vclusterNamespace=${vc.namespace}`,
          "--set-file",
          `patches.config=${configFile}`,
        ],
        { home: join(scratch, "helm-home") },
      );
      assert.equal(out.code, 0, out.stderr);
      const hooks = parseAllDocuments(out.stdout)
        .map((d) => d.toJS() as Json | null)
        .filter((o): o is Json => o?.kind === "MutatingWebhookConfiguration")
        .flatMap((o) => o.webhooks as Json[]);
      // The config patches only cluster-scoped kinds: no namespaced webhook is rendered.
      assert.deepEqual(
        hooks.map((h) => h.name).filter((n) => String(n).includes("patches")),
        ["mutate.cluster-patches.loft.sh"],
      );
      rendered = hooks.find((h) => h.name === "mutate.cluster-patches.loft.sh");
      const tls = await servingCert(cluster.plane.ca, ["localhost"]);
      server = await startRecordingServer(config, vc, tls);
      webhook = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: `vgate-cluster-patches-${id}` },
        webhooks: [
          {
            ...structuredClone(rendered),
            name: `cluster-patches-${id}.vgate.example.com`,
            clientConfig: {
              url: server.url,
              caBundle: Buffer.from(cluster.caPem).toString("base64"),
            },
          },
        ],
      };
      await cluster.admin.create(webhook);
      // kube-apiserver picks the configuration up a moment after it is written.
      const probe = hostCopy(CASES[0]!, vc);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await cluster.admin.request<Stored>(
          "POST",
          `${pathOf(CASES[0]!)}?dryRun=All`,
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
      if (admin && webhook) await admin.delete(webhook);
      await server?.stop();
      if (admin) for (const path of created) await admin.request("DELETE", path);
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    it("the chart's webhook: scope Cluster, the marker vgate computes, the bookkeeping condition", () => {
      assert.ok(rendered);
      assert.deepEqual(obj(rendered.objectSelector).matchExpressions, [
        { key: "vcluster.loft.sh/managed-by", operator: "In", values: [marker] },
      ]);
      assert.equal(rendered.failurePolicy, "Fail");
      // vCluster's field order (webhook/src/config/patch-kinds.ts), not the config's.
      assert.deepEqual(
        (rendered.rules as Json[]).map((r) => [r.apiGroups, r.resources, r.scope]),
        [
          [[""], ["persistentvolumes"], "Cluster"],
          [["storage.k8s.io"], ["storageclasses"], "Cluster"],
          [["scheduling.k8s.io"], ["priorityclasses"], "Cluster"],
        ],
      );
    });

    for (const c of CASES) {
      it(`${c.kind}: stores the patched copy, and a re-sync by the syncer writes nothing`, async () => {
        const host = hostCopy(c, vc);
        const stored = await create(c, host);
        assert.deepEqual(c.field(stored), c.expected(vc.name));
        assert.equal(stored.metadata.annotations.team, "tenant-a");
        assert.equal(stored.metadata.labels["vcluster.loft.sh/managed-by"], marker);
        // The syncer writes its translation of the unchanged virtual object over the stored one:
        // vgate patches the change set back to what is stored, so kube-apiserver stores nothing new.
        const resync: Json = {
          ...structuredClone(stored),
          ...Object.fromEntries(
            Object.entries(host).filter(([key]) => key !== "metadata" && key !== "status"),
          ),
          metadata: {
            ...structuredClone(stored.metadata),
            annotations: (host.metadata as Stored["metadata"]).annotations,
            labels: (host.metadata as Stored["metadata"]).labels,
          },
        };
        if (c.kind === "PersistentVolume") {
          // kube-apiserver defaulted the spec (volumeMode, hostPath.type): keep it, unpatched path.
          resync.spec = structuredClone(stored.spec);
          ((resync.spec as Json).hostPath as Json).path = "/data";
        }
        const res = await cluster.admin.request<Stored>(
          "PUT",
          `${pathOf(c)}/${encodeURIComponent(stored.metadata.name)}`,
          resync,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(c.field(res.body), c.expected(vc.name));
        assert.equal(res.body.metadata.annotations.team, "tenant-a");
        assert.equal(res.body.metadata.resourceVersion, stored.metadata.resourceVersion);
        assert.ok(server!.seen.includes(`${c.resource}/${stored.metadata.name}`));
      });
    }

    it("another vCluster's marker, a namespaced copy's label, no marker or no bookkeeping: never sent", async () => {
      const c = CASES[0]!;
      const before = server!.seen.length;
      const variants: [string, (o: Json) => void][] = [
        // The marker of a vCluster that shares the first 52 bytes of this one's joined name.
        [
          "other",
          (o) =>
            Object.assign(labels(o), {
              "vcluster.loft.sh/managed-by": safeConcatName(other.namespace, "x", other.name),
            }),
        ],
        // The label a namespaced copy of this vCluster carries: its bare name.
        ["bare", (o) => Object.assign(labels(o), { "vcluster.loft.sh/managed-by": vc.name })],
        ["unmarked", (o) => delete labels(o)["vcluster.loft.sh/managed-by"]],
        // The marker, but not vCluster's object-name annotation: the matchCondition keeps it away.
        ["unannotated", (o) => delete annotations(o)["vcluster.loft.sh/object-name"]],
        ["no-annotations", (o) => delete (o.metadata as Json).annotations],
      ];
      for (const [tag, edit] of variants) {
        const object = hostCopy(c, vc);
        (object.metadata as Json).name = `${tag}-${id}`;
        edit(object);
        const stored = await create(c, object);
        assert.equal(stored.description, "batch jobs", tag);
        if (tag !== "no-annotations") {
          assert.equal(stored.metadata.annotations.team, "a", tag);
        }
      }
      assert.deepEqual(server!.seen.slice(before), [], "vgate saw none of them");
    });
  },
);

function obj(v: unknown): Json {
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v));
  return v as Json;
}
const labels = (o: Json): Json => (o.metadata as Json).labels as Json;
const annotations = (o: Json): Json => (o.metadata as Json).annotations as Json;
