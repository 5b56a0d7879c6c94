// `vgate serve --discover-vclusters`, POST /mutate/patches over real HTTPS with real
// AdmissionReviews, the configs read from vc-config-<name> Secrets on the real kube-apiserver of
// test/support: each vCluster's own patches for the object's kind on its own objects, never
// another's (two vClusters named alike in two namespaces), a kind a vCluster does not patch
// untouched, an unknown vCluster untouched with a warning, 503 before the configs are loaded, a
// changed config's new patches, and failures counted by kind (docs/decisions.md KND-30..KND-34).
// Last, the discover-vclusters Component's own webhook, called by that kube-apiserver.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { parse as parseYaml, stringify } from "yaml";
import { servingCert } from "../../support/kube/pki.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import type { JsonObject, PatchSpec } from "../../../webhook/src/patches/types.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { translateEndpointsToHost } from "../../../webhook/src/sync/translate-endpoints.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest } from "../../support/https-client.js";
import { metricValue } from "../../support/prometheus-text.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { untilValue } from "../../support/until.js";
import { configSecret } from "../../support/vcluster/config-secret.js";
import { admit, patched, type AdmissionAnswer } from "./admission-answer.js";
import { CASES, hostCopy, review, toHostKind, type KindCase } from "./patch-kinds-fixtures.js";

type Json = Record<string, unknown>;

const caseOf = (key: string): KindCase => CASES.find((c) => c.kind.key === key)!;
const CONFIG_MAPS = caseOf("configMaps");
const PODS = caseOf("pods");
const SECRETS = caseOf("secrets");
const ENDPOINTS = { kind: toHostKind("endpoints"), apiVersion: "v1" };
const virtualEp = parseYaml(
  readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
) as JsonObject;

/** The ConfigMap's `data.endpoint`, the Pod's image, the Secret's `tier` label after an answer. */
const endpointOf = (o: Json): unknown => CONFIG_MAPS.field(o);

/** A vcluster.yaml with `toHost` as its sync.toHost (patches per kind key). */
function vclusterYaml(toHost: Record<string, PatchSpec[]>): string {
  const kinds = Object.fromEntries(Object.entries(toHost).map(([k, patches]) => [k, { patches }]));
  return stringify({ sync: { toHost: kinds } });
}

const prefixData = (prefix: string): PatchSpec => ({
  path: 'data["endpoint"]',
  expression: `"${prefix}" + value`,
});
const prefixImage = (prefix: string): PatchSpec => ({
  path: "spec.containers[*].image",
  expression: `"${prefix}" + value`,
});
const prefixTier = (prefix: string): PatchSpec => ({
  path: 'metadata.labels["tier"]',
  expression: `"${prefix}" + value`,
});
const IP_PATCH = (from: string, to: string) => `value === "${from}" ? "${to}" : value`;
const SLICES = { kind: toHostKind("endpointSlices"), apiVersion: "discovery.k8s.io/v1" };

/**
 * A host slice of vCluster `vc`'s Service db in `namespace`, as vCluster's EndpointSlice syncer
 * writes it, or as the mirroring controller writes it from the host Endpoints (their bookkeeping).
 */
function hostSliceOf(
  by: "vcluster" | "mirroring",
  vc: string,
  namespace: string,
  ip: string,
): Json {
  const host = `db-x-default-x-${vc}`;
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `db-5mzzp-x-default-x-${vc}`,
      namespace,
      labels: {
        "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
        "kubernetes.io/service-name": host,
        "vcluster.loft.sh/managed-by": vc,
      },
      annotations:
        by === "vcluster"
          ? {
              "vcluster.loft.sh/object-name": "db-5mzzp",
              "vcluster.loft.sh/object-namespace": "default",
              "vcluster.loft.sh/object-kind": "discovery.k8s.io/v1, Kind=EndpointSlice",
            }
          : {
              "vcluster.loft.sh/object-name": "db",
              "vcluster.loft.sh/object-namespace": "default",
              "vcluster.loft.sh/object-kind": "/v1, Kind=Endpoints",
              "vcluster.loft.sh/object-host-name": host,
              "vcluster.loft.sh/object-host-namespace": namespace,
            },
    },
    addressType: "IPv4",
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
  };
}

/** Fails on every object: `value` is a string, which has no `no`. */
const FAILING: PatchSpec = { path: 'metadata.labels["app"]', expression: "value.no.such" };

const namespaceObject = (name: string): Json => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name },
});

const quiet = () => createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() }));

function discoveryServe(
  kubeconfig: string,
  tls: { tlsCertFile: string; tlsKeyFile: string } | object = {},
): Promise<StartedServe> {
  return startServe(
    {
      ...tls,
      port: 0,
      bindAddress: "127.0.0.1",
      groupDomain: "loft.sh",
      adminGroups: ["system:masters"],
      logLevel: "info",
      dev: true,
      kubeconfig,
      discovery: { onPatchError: "deny", deadlineMs: 2_000, workers: 1 },
    },
    quiet(),
  );
}

(HAVE_KUBE ? describe : describe.skip)(
  `vgate serve --discover-vclusters: POST /mutate/patches for every kind${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    const suffix = randomBytes(3).toString("hex");
    const nsA = `disck-a-${suffix}`;
    const nsB = `disck-b-${suffix}`;
    let cluster: VgateCluster;
    let serve: StartedServe | undefined;
    let base: string;
    let url: string;

    /** The answer for `object` of kind `c` once the configs are loaded (503 until then). */
    const answer = (
      c: Pick<KindCase, "kind" | "apiVersion">,
      object: Json,
      path = url,
    ): Promise<AdmissionAnswer> =>
      untilValue(
        "vgate answers with the configs loaded",
        () => admit(path, review(c, "CREATE", object)),
        (a) => a.status?.code !== 503,
        30_000,
      );

    /** `c`'s host copy by vCluster `name` of namespace `ns`, patched as vgate answers. */
    async function patchedCopy(c: KindCase, name: string, ns: string) {
      const host = hostCopy(c, { name, namespace: ns });
      const r = await answer(c, host);
      assert.equal(r.allowed, true, JSON.stringify(r));
      return { r, out: patched(host, r) };
    }

    /** vgate_sync_patch_failures_total{kind, patch}, 0 when absent. */
    async function failures(kind: string, patch: string): Promise<number> {
      const text = (await httpsRequest(`${base}/metrics`)).text;
      return metricValue(text, "vgate_sync_patch_failures_total", { kind, patch });
    }

    before(async () => {
      cluster = await sharedCluster();
      for (const ns of [nsA, nsB]) await cluster.admin.apply(namespaceObject(ns) as never);
      // Two vClusters named "vc", in two namespaces: A patches ConfigMaps, Pods and Endpoints,
      // B ConfigMaps (otherwise) and Secrets. "b-only" lives in B only.
      const a = vclusterYaml({
        configMaps: [prefixData("a:")],
        pods: [prefixImage("mirror-a/")],
        endpoints: [
          { path: 'metadata.annotations["owner"]', expression: '"a-" + value' },
          // The Endpoints admission's virtual object has the subsets (rebuilt from the host
          // object); the generic one of other kinds has only the bookkeeping (KND-12).
          {
            path: 'metadata.annotations["example.com/tls-secret"]',
            expression: 'value + "-" + context.virtualObject.subsets.length',
          },
          { path: "subsets[*].addresses[*].ip", expression: IP_PATCH("10.1.2.3", "10.9.9.9") },
        ],
        endpointSlices: [
          { path: "endpoints[*].addresses[*]", expression: IP_PATCH("10.9.9.9", "10.8.8.8") },
        ],
      });
      const b = vclusterYaml({ configMaps: [prefixData("b:")], secrets: [prefixTier("b-")] });
      const bOnly = vclusterYaml({ configMaps: [prefixData("b-only:")] });
      await cluster.admin.create(configSecret(nsA, "vc", a) as never);
      await cluster.admin.create(configSecret(nsB, "vc", b) as never);
      await cluster.admin.create(configSecret(nsB, "b-only", bOnly) as never);
      serve = await discoveryServe(cluster.kubeconfigPath);
      base = `https://127.0.0.1:${serve.server.port}`;
      url = `${base}/mutate/patches`;
    });
    after(async () => {
      await serve?.stop();
      for (const ns of [nsA, nsB]) await cluster?.admin.delete(namespaceObject(ns) as never);
    });

    it("patches each vCluster's own objects with its own patches for the kind", async () => {
      const cmA = await patchedCopy(CONFIG_MAPS, "vc", nsA);
      assert.equal(endpointOf(cmA.out), "a:db.team-a.svc");
      assert.equal(cmA.r.warnings, undefined);
      const cmB = await patchedCopy(CONFIG_MAPS, "vc", nsB);
      assert.equal(endpointOf(cmB.out), "b:db.team-a.svc", "not vc of the other namespace's");
      const podA = await patchedCopy(PODS, "vc", nsA);
      assert.equal(PODS.field(podA.out), "mirror-a/nginx:1.27");
      const secretB = await patchedCopy(SECRETS, "vc", nsB);
      assert.equal(SECRETS.field(secretB.out), "b-db");
    });

    it("admits an object of a kind its vCluster does not patch untouched, with no warning", async () => {
      // B patches no Pods, A no Secrets: each gets nothing, not the other vc's patches.
      for (const [c, ns] of [
        [PODS, nsB],
        [SECRETS, nsA],
      ] as const) {
        const { r } = await patchedCopy(c, "vc", ns);
        assert.equal(r.patch, undefined, `${c.kind.kind} in ${ns}`);
        assert.equal(r.warnings, undefined);
      }
    });

    it("never patches an object with another namespace's vCluster's config", async () => {
      const inB = await patchedCopy(CONFIG_MAPS, "b-only", nsB);
      assert.equal(endpointOf(inB.out), "b-only:db.team-a.svc");
      // "b-only" has no config in A: an object in A naming it is not B's to patch.
      const { r } = await patchedCopy(CONFIG_MAPS, "b-only", nsA);
      assert.equal(r.patch, undefined);
      assert.match(
        r.warnings?.[0] ?? "",
        new RegExp(
          `configmaps "${nsA}/.*" not patched: .*no config Secret vc-config-b-only .* in namespace ${nsA}`,
        ),
      );
    });

    it("checks the copy as --config does (KND-11): one naming another kind is not patched", async () => {
      // Labelled for "vc" of A but claiming to be written for another kind: KND-11's checks.
      const host = hostCopy(CONFIG_MAPS, { name: "vc", namespace: nsA });
      const meta = host.metadata as { annotations: Record<string, string> };
      meta.annotations["vcluster.loft.sh/object-kind"] = "/v1, Kind=Secret";
      const r = await answer(CONFIG_MAPS, host);
      assert.equal(r.patch, undefined);
      assert.match(r.warnings?.[0] ?? "", /not a copy of vCluster "vc": .*names another kind/);
    });

    it("hands Endpoints to the Endpoints admission: the answer /mutate/endpoints gives", async () => {
      const host = translateEndpointsToHost(virtualEp, {
        name: "vc",
        namespace: nsA,
        config: {},
      }) as Json;
      const viaPatches = await answer(ENDPOINTS, host);
      const viaEndpoints = await answer(ENDPOINTS, host, `${base}/mutate/endpoints`);
      const out = patched(host, viaPatches);
      const annotations = (out.metadata as { annotations: Json }).annotations;
      assert.equal(annotations.owner, "a-team-a");
      assert.equal(annotations["example.com/tls-secret"], "db-tls-1");
      assert.deepEqual(out, patched(host, viaEndpoints));
      // B's vc has no Endpoints patches.
      const inB = translateEndpointsToHost(virtualEp, { name: "vc", namespace: nsB, config: {} });
      assert.equal((await answer(ENDPOINTS, inB as Json)).patch, undefined);
    });

    it("patches each writer of a host slice by the one rule, with its own vCluster's patches (KND-70)", async () => {
      const addressOf = async (by: "vcluster" | "mirroring", ns: string, ip: string) => {
        const slice = hostSliceOf(by, "vc", ns, ip);
        const viaPatches = await answer(SLICES, slice);
        const viaEndpoints = await answer(SLICES, slice, `${base}/mutate/endpoints`);
        assert.deepEqual(
          { ...viaPatches, uid: "" },
          { ...viaEndpoints, uid: "" },
          "/mutate/patches answers as /mutate/endpoints",
        );
        return (patched(slice, viaPatches).endpoints as { addresses: string[] }[])[0]!.addresses[0];
      };
      // A's vCluster write: the Endpoints patch, then the slice's own; the controller's write,
      // mirrored from Endpoints A patched already, the slice's own only.
      assert.equal(await addressOf("vcluster", nsA, "10.1.2.3"), "10.8.8.8");
      assert.equal(await addressOf("mirroring", nsA, "10.9.9.9"), "10.8.8.8");
      assert.equal(await addressOf("mirroring", nsA, "10.1.2.3"), "10.1.2.3");
      // B's vc patches neither Endpoints nor EndpointSlices: A's patches never reach its slices.
      assert.equal(await addressOf("vcluster", nsB, "10.1.2.3"), "10.1.2.3");
      assert.equal(await addressOf("mirroring", nsB, "10.9.9.9"), "10.9.9.9");
    });

    it("multi-namespace mode: a namespace labelled for the vCluster gets its patches, if its config maps namespaces", async () => {
      const nsM = `disck-m-${suffix}`;
      const nsX = `disck-x-${suffix}`;
      const labelled = (name: string, vc: string, home: string): Json => ({
        ...namespaceObject(name),
        metadata: {
          name,
          labels: {
            "vcluster.loft.sh/vcluster-name": vc,
            "vcluster.loft.sh/vcluster-namespace": home,
          },
        },
      });
      const multi =
        "sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n" +
        '          "team-*": "host-team-*"\n' +
        vclusterYaml({ configMaps: [prefixData("mn:")] }).replace(/^sync:\n {2}toHost:\n/, "");
      await cluster.admin.create(configSecret(nsA, "mn", multi) as never);
      // One namespace labelled for "mn" of A (mapped), one for "vc" of B (whose config maps none).
      await cluster.admin.apply(labelled(nsM, "mn", nsA) as never);
      await cluster.admin.apply(labelled(nsX, "vc", nsB) as never);
      try {
        const cm = hostCopy(CONFIG_MAPS, { name: "mn", namespace: nsA }, nsM);
        const out = await untilValue(
          "vc-config-mn and the namespace labels are loaded",
          async () => endpointOf(patched(cm, await answer(CONFIG_MAPS, cm))),
          (v) => v === "mn:db.team-a.svc",
          30_000,
        );
        assert.equal(out, "mn:db.team-a.svc");
        const other = hostCopy(CONFIG_MAPS, { name: "vc", namespace: nsB }, nsX);
        const r = await answer(CONFIG_MAPS, other);
        assert.equal(r.patch, undefined);
        assert.match(
          r.warnings?.[0] ?? "",
          /no config Secret vc-config-vc .* in namespace disck-x-/,
        );
      } finally {
        for (const ns of [nsM, nsX]) await cluster.admin.delete(namespaceObject(ns) as never);
      }
    });

    it("refuses a cluster-scoped kind with 400: this mode patches namespaced kinds only", async () => {
      const c = { kind: toHostKind("priorityClasses"), apiVersion: "scheduling.k8s.io/v1" };
      const r = await admit(
        url,
        review(c, "CREATE", {
          metadata: { name: "high", labels: { "vcluster.loft.sh/managed-by": "x" } },
        }),
      );
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 400);
      assert.match(r.status?.message ?? "", /namespaced kinds only.*priorityclasses/);
    });

    it("follows a changed config: the kind's new patches, and a kind it patches now", async () => {
      await cluster.admin.create(
        configSecret(nsA, "reload", vclusterYaml({ configMaps: [prefixData("r1:")] })) as never,
      );
      const cm = hostCopy(CONFIG_MAPS, { name: "reload", namespace: nsA });
      const first = await untilValue(
        "vc-config-reload is loaded",
        async () => endpointOf(patched(cm, await answer(CONFIG_MAPS, cm))),
        (v) => v === "r1:db.team-a.svc",
        30_000,
      );
      assert.equal(first, "r1:db.team-a.svc");
      const secret = hostCopy(SECRETS, { name: "reload", namespace: nsA });
      assert.equal((await answer(SECRETS, secret)).patch, undefined);
      await cluster.admin.apply(
        configSecret(
          nsA,
          "reload",
          vclusterYaml({ configMaps: [prefixData("r2:")], secrets: [prefixTier("r2-")] }),
        ) as never,
      );
      await untilValue(
        "the new ConfigMap patches are used",
        async () => endpointOf(patched(cm, await answer(CONFIG_MAPS, cm))),
        (v) => v === "r2:db.team-a.svc",
        30_000,
      );
      assert.equal(SECRETS.field(patched(secret, await answer(SECRETS, secret))), "r2-db");
    });

    /** vgate_vclusters{state}, as /metrics shows it now. */
    async function vclusters(): Promise<{ loaded: number; refused: number }> {
      const text = (await httpsRequest(`${base}/metrics`)).text;
      const value = (state: string) => metricValue(text, "vgate_vclusters", { state });
      return { loaded: value("loaded"), refused: value("refused") };
    }

    it("reports the vClusters loaded and refused in vgate_vclusters", async () => {
      const before = await vclusters();
      assert.ok(before.loaded >= 3, `the three configs of before(): ${JSON.stringify(before)}`);
      // An unknown key on a patch: refused at load, with a Warning Event, never loaded.
      const bad = stringify({
        sync: { toHost: { configMaps: { patches: [{ path: "data.x", nope: "1" }] } } },
      });
      await cluster.admin.create(configSecret(nsA, "refused", bad) as never);
      try {
        await untilValue(
          "the refused config counted",
          vclusters,
          (n) => n.refused === before.refused + 1 && n.loaded === before.loaded,
          30_000,
        );
      } finally {
        await cluster.admin.delete(configSecret(nsA, "refused", ""));
      }
      await untilValue(
        "the deleted Secret's refusal forgotten",
        vclusters,
        (n) => n.refused === before.refused && n.loaded === before.loaded,
        30_000,
      );
    });

    it("counts failing patches by kind and patch index; a tenant's index past 50 as 50+", async () => {
      const many = Array.from({ length: 52 }, (_, i): PatchSpec =>
        i === 51 ? FAILING : { path: `metadata.annotations["p${i}"]`, expression: '"x"' },
      );
      await cluster.admin.create(
        configSecret(
          nsB,
          "failing",
          vclusterYaml({ configMaps: [prefixData("f:"), FAILING], pods: many }),
        ) as never,
      );
      const cm = hostCopy(CONFIG_MAPS, { name: "failing", namespace: nsB });
      const before = {
        cm: await failures("toHost.configMaps", "1"),
        pods: await failures("toHost.pods", "50+"),
      };
      const denied = await untilValue(
        "vc-config-failing is loaded",
        () => answer(CONFIG_MAPS, cm),
        (r) => r.allowed === false,
        30_000,
      );
      assert.equal(denied.status?.code, 400);
      assert.match(denied.status?.message ?? "", /sync\.toHost\.configMaps\.patches failed/);
      assert.equal(await failures("toHost.configMaps", "1"), before.cm + 1);
      assert.equal(await failures("toHost.pods", "50+"), before.pods);
      const pod = hostCopy(PODS, { name: "failing", namespace: nsB });
      const r = await answer(PODS, pod);
      assert.equal(r.allowed, false);
      assert.equal(await failures("toHost.pods", "50+"), before.pods + 1);
      assert.equal(await failures("toHost.pods", "51"), 0, "no series per index past 50");
      assert.equal(await failures("toHost.configMaps", "1"), before.cm + 1);
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `vgate serve --discover-vclusters before the configs are loaded${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    // An API server that accepts connections and never answers: the config Secrets never list.
    let silent: Server;
    const sockets = new Set<Socket>();
    let dir: string;
    let serve: StartedServe | undefined;

    before(async () => {
      silent = createServer((s) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
      });
      await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
      const port = (silent.address() as { port: number }).port;
      dir = mkdtempSync(join(tmpdir(), "vgate-disck-"));
      const kubeconfig = join(dir, "kubeconfig");
      writeFileSync(
        kubeconfig,
        stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [
            {
              name: "c",
              cluster: { server: `https://127.0.0.1:${port}`, "insecure-skip-tls-verify": true },
            },
          ],
          users: [{ name: "u", user: { token: "not-a-real-one" } }],
          contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
          "current-context": "c",
        }),
        { mode: 0o600 },
      );
      serve = await discoveryServe(kubeconfig);
    });
    after(async () => {
      await serve?.stop();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent?.close(r));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("answers 503 for a managed object, admits one no vCluster manages", async () => {
      const url = `https://127.0.0.1:${serve!.server.port}/mutate/patches`;
      const host = hostCopy(CONFIG_MAPS, { name: "vc", namespace: "vcluster-vc" });
      const r = await admit(url, review(CONFIG_MAPS, "CREATE", host));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 503);
      assert.match(r.status?.message ?? "", /config Secrets are not loaded yet/);
      const plain = structuredClone(host);
      delete (plain.metadata as { labels: Json }).labels["vcluster.loft.sh/managed-by"];
      const free = await admit(url, review(CONFIG_MAPS, "CREATE", plain));
      assert.equal(free.allowed, true);
      assert.equal(free.patch, undefined);
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `the discover-vclusters webhook called by kube-apiserver${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    const suffix = randomBytes(3).toString("hex");
    const ns1 = `disck-p1-${suffix}`;
    const ns2 = `disck-p2-${suffix}`;
    let cluster: VgateCluster;
    let dir: string;
    let serve: StartedServe | undefined;
    let webhook: KubeObject | undefined;

    /** Creates `c`'s copy by vCluster "vc" of `ns` through kube-apiserver; what it stored. */
    async function create(c: KindCase, ns: string): Promise<Json> {
      const res = await cluster.admin.request<Json>(
        "POST",
        `/api/v1/namespaces/${ns}/${c.kind.resource}`,
        hostCopy(c, { name: "vc", namespace: ns }),
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    }

    before(async () => {
      cluster = await sharedCluster();
      for (const ns of [ns1, ns2]) {
        await cluster.admin.apply(namespaceObject(ns) as never);
        // The Pod admission of a cluster without controller-manager needs the ServiceAccount.
        await cluster.admin.apply({
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "default", namespace: ns },
        });
      }
      // Two vClusters named "vc": 1 patches Pods, 2 ConfigMaps only.
      await cluster.admin.create(
        configSecret(ns1, "vc", vclusterYaml({ pods: [prefixImage("mirror-1/")] })) as never,
      );
      await cluster.admin.create(
        configSecret(ns2, "vc", vclusterYaml({ configMaps: [prefixData("2:")] })) as never,
      );
      dir = mkdtempSync(join(tmpdir(), "vgate-disck-"));
      const tls = await servingCert(cluster.plane.ca, ["localhost"]);
      writeFileSync(join(dir, "tls.crt"), tls.cert);
      writeFileSync(join(dir, "tls.key"), tls.key, { mode: 0o600 });
      serve = await discoveryServe(cluster.kubeconfigPath, {
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
      });
      // The Component's own webhook, pointed at this vgate and confined to this test's namespaces
      // (the cluster is shared).
      const patch = parseYaml(
        readFileSync(
          resolve(repoRoot, "manifests/overlays/discover-vclusters/webhook.yaml"),
          "utf8",
        ),
      ) as { value: Json }[];
      const hook = structuredClone(patch[0]!.value);
      hook.name = `vclusters-${suffix}.vgate.example.com`;
      const { path } = (hook.clientConfig as { service: { path: string } }).service;
      hook.clientConfig = {
        url: `https://localhost:${serve.server.port}${path}`,
        caBundle: Buffer.from(cluster.caPem).toString("base64"),
      };
      hook.namespaceSelector = {
        matchExpressions: [
          { key: "kubernetes.io/metadata.name", operator: "In", values: [ns1, ns2] },
        ],
      };
      webhook = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name: `vgate-discover-${suffix}` },
        webhooks: [hook],
      };
      await cluster.admin.create(webhook);
      // kube-apiserver picks the configuration up a moment after it is written, and vgate
      // answers 503 until the config Secrets are loaded (KND-24).
      await untilValue(
        "kube-apiserver calls vgate, which has the configs",
        async () => {
          const res = await cluster.admin.request<Json>(
            "POST",
            `/api/v1/namespaces/${ns2}/configmaps?dryRun=All`,
            hostCopy(CONFIG_MAPS, { name: "vc", namespace: ns2 }),
          );
          return res.status === 201 ? CONFIG_MAPS.field(res.body) : res.status;
        },
        (v) => v === "2:db.team-a.svc",
        60_000,
      );
    });
    after(async () => {
      if (webhook) await cluster?.admin.delete(webhook);
      await serve?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
      for (const ns of [ns1, ns2]) await cluster?.admin.delete(namespaceObject(ns) as never);
    });

    it("stores each vCluster's patches for the kind, and nothing of the other's", async () => {
      assert.equal(PODS.field(await create(PODS, ns1)), "mirror-1/nginx:1.27");
      assert.equal(PODS.field(await create(PODS, ns2)), "nginx:1.27", "2 patches no Pods");
      assert.equal(CONFIG_MAPS.field(await create(CONFIG_MAPS, ns1)), "db.team-a.svc");
      assert.equal(CONFIG_MAPS.field(await create(CONFIG_MAPS, ns2)), "2:db.team-a.svc");
    });
  },
);
