// POST /mutate/patches/virtual over real HTTPS with real AdmissionReviews: the sync.fromHost kinds
// (Nodes, ConfigMaps and custom resources here), whose objects vCluster's syncer writes into the virtual cluster
// from host objects (docs/decisions.md KND-50..KND-54).

import assert from "node:assert/strict";
import { loadVClusterConfig } from "../../../webhook/src/config/load-config.js";
import { loadedVCluster, type PatchSet } from "../../../webhook/src/config/loaded-vcluster.js";
import { PATCH_KINDS, type PatchKind } from "../../../webhook/src/config/patch-kinds.js";
import { admit, patched } from "./admission-answer.js";
import { loadedWith, review, toHostKind, VC } from "./patch-kinds-fixtures.js";
import { startPatchesServer, type PatchesServer } from "./patches-server.js";

type Json = Record<string, unknown>;
type Meta = { labels: Record<string, string>; annotations: Record<string, string> };

const fromHostKind = (key: string): PatchKind =>
  PATCH_KINDS.find((k) => k.section === "fromHost" && k.key === key)!;

const NODES = { kind: fromHostKind("nodes"), apiVersion: "v1" };
const FROM_HOST_CMS = { kind: fromHostKind("configMaps"), apiVersion: "v1" };
const TO_HOST_CMS = { kind: toHostKind("configMaps"), apiVersion: "v1" };

const TAINTS = '["{\\"key\\":\\"pool\\",\\"value\\":\\"gpu\\",\\"effect\\":\\"NoSchedule\\"}"]';

const nodeSet = (patches: PatchSet["patches"], enabled = true): PatchSet => ({
  kind: NODES.kind,
  enabled,
  patches,
});

const NODE_PATCHES: PatchSet["patches"] = [
  // Nodes run `expression` host → virtual (config/patch-kinds.ts).
  { path: 'metadata.labels["kubernetes.io/os"]', expression: '"vgate-" + value' },
  { path: "metadata.annotations[*]", expression: '"host:" + value' },
];

const CM_SETS: PatchSet[] = [
  {
    kind: FROM_HOST_CMS.kind,
    enabled: true,
    // ConfigMaps run `reverseExpression` host → virtual.
    patches: [{ path: "data.registry", reverseExpression: '"mirror.example.com/" + value' }],
    mappings: { "shared/*": "team-a/*", "infra/settings": "team-b/app-settings" },
  },
  {
    kind: TO_HOST_CMS.kind,
    enabled: true,
    patches: [
      {
        path: "data.registry",
        expression: '"host/" + value',
        reverseExpression: 'value.startsWith("host/") ? value.slice(5) : value',
      },
    ],
  },
];

/** A virtual Node as vCluster's syncer writes it from the host node `name`. */
function virtualNode(name = "node-1"): Json {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: { "kubernetes.io/os": "linux", "kubernetes.io/hostname": name },
      annotations: {
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "vcluster.loft.sh/original-taints": TAINTS,
      },
    },
    spec: {
      podCIDR: "10.244.0.0/24",
      taints: [{ key: "pool", value: "gpu", effect: "NoSchedule" }],
    },
    status: { conditions: [{ type: "Ready", status: "True" }], nodeInfo: { osImage: "Debian" } },
  };
}

function configMap(namespace: string, name: string, registry = "quay.io"): Json {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels: { app: "x" } },
    data: { registry },
  };
}

const meta = (o: Json): Meta => o.metadata as Meta;
const registry = (o: Json): unknown => (o.data as Json).registry;

describe("POST /mutate/patches/virtual: sync.fromHost kinds over HTTPS", function () {
  this.timeout(30_000);

  describe("nodes", () => {
    let server: PatchesServer;
    before(async () => (server = await startPatchesServer(loadedWith([nodeSet(NODE_PATCHES)]))));
    after(() => server.stop());

    it("patches the Node the syncer creates with `expression`s; vCluster's bookkeeping untouched", async () => {
      const node = virtualNode();
      const r = await admit(server.virtualUrl, review(NODES, "CREATE", node));
      assert.equal(r.allowed, true);
      const out = patched(node, r);
      assert.equal(meta(out).labels["kubernetes.io/os"], "vgate-linux");
      assert.equal(meta(out).labels["kubernetes.io/hostname"], "node-1");
      const annotations = meta(out).annotations;
      assert.equal(
        annotations["volumes.kubernetes.io/controller-managed-attach-detach"],
        "host:true",
      );
      assert.equal(annotations["vcluster.loft.sh/original-taints"], TAINTS);
      assert.deepEqual(out.spec, node.spec);
    });

    it("patches only the change set on UPDATE: the syncer's re-sync stores what is stored", async () => {
      const node = virtualNode();
      const stored = patched(node, await admit(server.virtualUrl, review(NODES, "CREATE", node)));
      // The syncer copies the host node's labels and annotations over the stored Node again.
      const resync = virtualNode();
      (resync.status as { nodeInfo: Json }).nodeInfo.osImage = "Debian 13";
      const out = patched(
        resync,
        await admit(server.virtualUrl, review(NODES, "UPDATE", resync, stored)),
      );
      assert.deepEqual(meta(out).labels, meta(stored).labels);
      assert.deepEqual(meta(out).annotations, meta(stored).annotations);
      assert.equal((out.status as { nodeInfo: Json }).nodeInfo.osImage, "Debian 13");
      const same = await admit(
        server.virtualUrl,
        review(NODES, "UPDATE", structuredClone(stored), stored),
      );
      assert.equal(same.patch, undefined, "a write of the stored Node changes nothing");
    });

    it("admits the syncer's nodes/status writes", async () => {
      const stored = virtualNode();
      const next = structuredClone(stored);
      (next.status as { conditions: Json[] }).conditions[0]!.status = "False";
      const r = await admit(server.virtualUrl, review(NODES, "UPDATE", next, stored, "status"));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    });

    it("is not served on the host side: a Node there is a misconfiguration", async () => {
      const r = await admit(server.url, review(NODES, "CREATE", virtualNode()));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 400);
      assert.match(r.status?.message ?? "", /no kind \(the config has no sync\.toHost patches\)/);
    });

    it("passes Nodes untouched when sync.fromHost.nodes is disabled", async () => {
      const s = await startPatchesServer(loadedWith([nodeSet(NODE_PATCHES, false)]));
      try {
        const r = await admit(s.virtualUrl, review(NODES, "CREATE", virtualNode()));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
      } finally {
        await s.stop();
      }
    });

    it("passes Nodes untouched, with a warning, when vCluster syncs their changes back", async () => {
      const loaded = loadedWith([nodeSet(NODE_PATCHES)]);
      loaded.vcluster.config = { sync: { fromHost: { nodes: { syncBackChanges: true } } } };
      const s = await startPatchesServer(loaded);
      try {
        const r = await admit(s.virtualUrl, review(NODES, "CREATE", virtualNode()));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(
          r.warnings?.[0] ?? "",
          /Node "node-1" not patched: sync\.fromHost\.nodes\.syncBackChanges is on/,
        );
      } finally {
        await s.stop();
      }
    });

    describe("a failing patch", () => {
      const failing = [NODE_PATCHES[0]!, { path: "spec.podCIDR", expression: "value.no.such" }];

      it("denies the write naming the kind and patch, and counts kind=fromHost.nodes", async () => {
        const s = await startPatchesServer(loadedWith([nodeSet(failing)]));
        try {
          const r = await admit(s.virtualUrl, review(NODES, "CREATE", virtualNode()));
          assert.equal(r.allowed, false);
          assert.equal(r.status?.code, 400);
          assert.match(
            r.status?.message ?? "",
            /Node "node-1": sync\.fromHost\.nodes\.patches failed: patches\[1\]/,
          );
          assert.equal(await s.failures("fromHost.nodes", "1"), 1);
          assert.equal(await s.failures("fromHost.nodes", "0"), 0);
          assert.equal(await s.failures("toHost.nodes", "1"), 0);
        } finally {
          await s.stop();
        }
      });

      it("admits unchanged with a warning under --on-patch-error=allow, and counts", async () => {
        const s = await startPatchesServer(loadedWith([nodeSet(failing)]), {
          onPatchError: "allow",
        });
        try {
          const r = await admit(s.virtualUrl, review(NODES, "CREATE", virtualNode()));
          assert.equal(r.allowed, true);
          assert.equal(r.patch, undefined);
          assert.match(r.warnings?.[0] ?? "", /admitted unchanged \(--on-patch-error=allow\)/);
          assert.equal(await s.failures("fromHost.nodes", "1"), 1);
        } finally {
          await s.stop();
        }
      });
    });
  });

  describe("configMaps", () => {
    let server: PatchesServer;
    before(async () => (server = await startPatchesServer(loadedWith(CM_SETS))));
    after(() => server.stop());

    const create = async (cm: Json) =>
      admit(server.virtualUrl, review(FROM_HOST_CMS, "CREATE", cm));

    it("patches a ConfigMap its mappings bring from the host with `reverseExpression`s", async () => {
      for (const [ns, name] of [
        ["team-a", "registries"],
        ["team-b", "app-settings"],
      ] as const) {
        const cm = configMap(ns, name);
        const r = await create(cm);
        assert.equal(r.warnings, undefined);
        assert.equal(registry(patched(cm, r)), "mirror.example.com/quay.io", `${ns}/${name}`);
      }
    });

    it("patches only the change set on UPDATE, never a value twice", async () => {
      const cm = configMap("team-a", "registries");
      const stored = patched(cm, await create(cm));
      const next = structuredClone(stored);
      meta(next).labels.app = "y";
      const r = await admit(server.virtualUrl, review(FROM_HOST_CMS, "UPDATE", next, stored));
      const out = patched(next, r);
      assert.equal(registry(out), "mirror.example.com/quay.io");
      assert.equal(meta(out).labels.app, "y");
      const resync = configMap("team-a", "registries", "ghcr.io");
      const again = patched(
        resync,
        await admit(server.virtualUrl, review(FROM_HOST_CMS, "UPDATE", resync, stored)),
      );
      assert.equal(registry(again), "mirror.example.com/ghcr.io");
    });

    it("creates a ConfigMap no mapping names untouched (the tenant's own)", async () => {
      for (const [ns, name] of [
        ["team-b", "other"],
        ["team-c", "registries"],
        // vCluster never syncs a host kube-root-ca.crt, even through a namespace mapping.
        ["team-a", "kube-root-ca.crt"],
      ] as const) {
        const r = await create(configMap(ns, name));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined, `${ns}/${name}`);
      }
    });

    it("dispatches an UPDATE by the object: mapped → fromHost, else → toHost's reverse", async () => {
      const mapped = configMap("team-a", "registries", "quay.io");
      const mappedNext = configMap("team-a", "registries", "docker.io");
      const a = await admit(server.virtualUrl, review(TO_HOST_CMS, "UPDATE", mappedNext, mapped));
      assert.equal(registry(patched(mappedNext, a)), "mirror.example.com/docker.io");
      const own = configMap("team-c", "registries", "quay.io");
      const ownNext = configMap("team-c", "registries", "host/docker.io");
      const b = await admit(server.virtualUrl, review(TO_HOST_CMS, "UPDATE", ownNext, own));
      assert.equal(registry(patched(ownNext, b)), "docker.io");
    });

    it("with fromHost configMaps only, an unmapped ConfigMap passes with a warning", async () => {
      const s = await startPatchesServer(loadedWith([CM_SETS[0]!]));
      try {
        const r = await admit(
          s.virtualUrl,
          review(FROM_HOST_CMS, "CREATE", configMap("team-c", "x")),
        );
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(
          r.warnings?.[0] ?? "",
          /ConfigMap "team-c\/x" not patched: sync\.fromHost\.configMaps\.mappings do not bring it from the host/,
        );
      } finally {
        await s.stop();
      }
    });
  });

  describe("customResources", () => {
    // Loaded from vcluster.yaml text, so the loader's mappings are the ones served (KND-90).
    const CONFIG = `sync:
  fromHost:
    customResources:
      widgets.example.com:
        enabled: true
        scope: Namespaced
        mappings:
          byName:
            "shared/*": "team-a/*"
        patches:
          - path: spec.size
            reverseExpression: '"host-" + value'
      gadgets.example.com:
        enabled: true
        scope: Cluster
        patches:
          - path: spec.size
            reverseExpression: '"host-" + value'
`;
    let server: PatchesServer;
    let sets: PatchSet[];
    before(async () => {
      const loaded = loadedVCluster(loadVClusterConfig(CONFIG, "vcluster.yaml"), VC);
      sets = loaded.patchSets;
      server = await startPatchesServer(loaded);
    });
    after(() => server.stop());

    const widgets = () => ({
      kind: { ...sets.find((k) => k.kind.resource === "widgets")!.kind, kind: "Widget" },
      apiVersion: "example.com/v1",
    });
    const gadgets = () => ({
      kind: { ...sets.find((k) => k.kind.resource === "gadgets")!.kind, kind: "Gadget" },
      apiVersion: "example.com/v1",
    });
    const object = (kind: string, name: string, namespace?: string, size = "small"): Json => ({
      apiVersion: "example.com/v1",
      kind,
      metadata: { name, ...(namespace ? { namespace } : {}), labels: { app: "x" } },
      spec: { size },
    });
    const size = (o: Json): unknown => (o.spec as Json).size;

    it("patches a namespaced one its mappings bring from the host, once", async () => {
      const w = object("Widget", "w", "team-a");
      const r = await admit(server.virtualUrl, review(widgets(), "CREATE", w));
      assert.equal(r.warnings, undefined);
      const stored = patched(w, r);
      assert.equal(size(stored), "host-small");
      // The syncer's next copy of an unchanged host object: nothing to patch, nothing written.
      const resync = structuredClone(stored);
      (resync.spec as Json).size = "small";
      const again = await admit(server.virtualUrl, review(widgets(), "UPDATE", resync, stored));
      assert.equal(size(patched(resync, again)), "host-small");
      const next = object("Widget", "w", "team-a", "large");
      const changed = await admit(server.virtualUrl, review(widgets(), "UPDATE", next, stored));
      assert.equal(size(patched(next, changed)), "host-large");
    });

    it("passes one its mappings do not name untouched, with a warning", async () => {
      const w = object("Widget", "w", "team-b");
      const r = await admit(server.virtualUrl, review(widgets(), "CREATE", w));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
      assert.match(
        r.warnings?.[0] ?? "",
        /Widget "team-b\/w" not patched: sync\.fromHost\.customResources\.widgets\.example\.com\.mappings do not bring it from the host/,
      );
    });

    it("patches every cluster-scoped one: vCluster syncs them all", async () => {
      const g = object("Gadget", "g");
      const r = await admit(server.virtualUrl, review(gadgets(), "CREATE", g));
      assert.equal(size(patched(g, r)), "host-small");
    });
  });

  describe("gateways", () => {
    // A Gateway is a kind of both sections in vCluster v0.36: imported from the host (labelled by
    // the syncer) or the tenant's own, synced to the host (KND-92, KND-52).
    const CONFIG = `sync:
  toHost:
    gatewayApi:
      gateways:
        enabled: true
        patches:
          - path: spec.gatewayClassName
            expression: '"tenant-" + value'
            reverseExpression: 'value.replace(/^tenant-/, "")'
  fromHost:
    gateways:
      enabled: true
      patches:
        - path: spec.gatewayClassName
          expression: '"host-" + value'
`;
    let server: PatchesServer;
    let gateways: { kind: PatchKind; apiVersion: string };
    before(async () => {
      const loaded = loadedVCluster(loadVClusterConfig(CONFIG, "vcluster.yaml"), VC);
      gateways = { kind: loaded.patchSets[0]!.kind, apiVersion: "gateway.networking.k8s.io/v1" };
      server = await startPatchesServer(loaded);
    });
    after(() => server.stop());

    const gateway = (className: string, imported: boolean): Json => ({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: {
        name: "web",
        namespace: "team-a",
        labels: imported ? { "vcluster.loft.sh/imported-gateway": "true" } : { app: "web" },
      },
      spec: { gatewayClassName: className, listeners: [] },
    });
    const className = (o: Json): unknown => (o.spec as Json).gatewayClassName;

    it("patches a Gateway the syncer imports with the fromHost `expression`", async () => {
      const g = gateway("shared", true);
      const r = await admit(server.virtualUrl, review(gateways, "CREATE", g));
      assert.equal(r.warnings, undefined);
      assert.equal(className(patched(g, r)), "host-shared");
    });

    it("sends a tenant's own Gateway to the toHost set: created and its spec left untouched", async () => {
      const own = gateway("internal", false);
      const created = await admit(server.virtualUrl, review(gateways, "CREATE", own));
      assert.equal(created.patch, undefined);
      assert.equal(created.warnings, undefined);
      const next = gateway("tenant-internal-v2", false);
      const r = await admit(server.virtualUrl, review(gateways, "UPDATE", next, own));
      // vCluster carries only metadata back for Gateways: the spec is the tenant's.
      assert.equal(className(patched(next, r)), "tenant-internal-v2");
    });

    it("with fromHost gateways only, a Gateway without the import label passes, saying why", async () => {
      const only = CONFIG.slice(CONFIG.indexOf("  fromHost:"));
      const loaded = loadedVCluster(loadVClusterConfig(`sync:\n${only}`, "vcluster.yaml"), VC);
      const s = await startPatchesServer(loaded);
      try {
        const r = await admit(s.virtualUrl, review(gateways, "CREATE", gateway("x", false)));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(
          r.warnings?.[0] ?? "",
          /Gateway "team-a\/web" not patched: sync\.fromHost\.gateways did not import it: it lacks vCluster's import label/,
        );
      } finally {
        await s.stop();
      }
    });
  });
});
