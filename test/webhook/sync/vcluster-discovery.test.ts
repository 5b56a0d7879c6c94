// `vgate serve --discover-vclusters` against the real kube-apiserver of test/support: the config
// Secrets written as vCluster's chart writes them (vc-config-<name>, labels app=vcluster and
// release=<name>, data["config.yaml"]) are followed through create, update and delete; a bad
// config keeps the last good one and records a Warning Event on the Secret; and over real HTTPS,
// two vClusters of the same name in two namespaces, with different patches, each get only their
// own patches on their own objects.

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Writable } from "node:stream";
import fastJsonPatch from "fast-json-patch";
import { parse as parseYaml } from "yaml";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { MAX_DISCOVERED_CONFIG_BYTES } from "../../../webhook/src/config/vcluster-secret.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import { EventRecorder } from "../../../webhook/src/kube/controller/event-recorder.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport } from "../../../webhook/src/shared/transport.js";
import { startSharedPatchRunner } from "../../../webhook/src/sync/patch-runner.js";
import { VClusterDiscovery } from "../../../webhook/src/sync/vcluster-discovery.js";
import { translateEndpointsToHost } from "../../../webhook/src/sync/translate-endpoints.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { postJson } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { until, untilValue } from "../../support/until.js";
import { configSecret } from "../../support/vcluster/config-secret.js";

type Json = Record<string, unknown>;

const virtualEp = parseYaml(
  readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
) as JsonObject;

/** A vcluster.yaml whose one patch prefixes the owner annotation with `prefix`. */
function ownerConfig(prefix: string): string {
  return [
    "sync:",
    "  toHost:",
    "    endpoints:",
    "      patches:",
    '        - path: metadata.annotations["owner"]',
    `          expression: '"${prefix}" + value'`,
    "",
  ].join("\n");
}

function namespaceObject(
  name: string,
): Json & { apiVersion: string; kind: string; metadata: Json } {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
}

/** The host Endpoints vCluster `name` of `namespace` writes for the example virtual Endpoints. */
function hostCopy(vc: { name: string; namespace: string }): Json {
  return translateEndpointsToHost(virtualEp, { ...vc, config: {} }) as Json;
}

function review(object: Json): Json {
  const meta = object.metadata as Json;
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: { group: "", version: "v1", kind: "Endpoints" },
      resource: { group: "", version: "v1", resource: "endpoints" },
      name: meta.name,
      namespace: meta.namespace,
      operation: "CREATE",
      userInfo: { username: "system:serviceaccount:x:vc-vc", groups: [] },
      object,
      oldObject: null,
      dryRun: false,
    },
  };
}

interface Answer {
  allowed: boolean;
  patch?: string;
  warnings?: string[];
  status?: { code: number; message: string };
}

async function admit(url: string, object: Json): Promise<Answer> {
  const body = review(object);
  const res = await postJson(url, body);
  assert.equal(res.status, 200, res.text);
  const r = res.json<{ response: Answer & { uid: string } }>().response;
  assert.equal(r.uid, (body.request as Json).uid);
  return r;
}

/** The owner annotation after the answer's patch, once the configs are loaded (503 until then). */
async function ownerAfter(url: string, object: Json): Promise<{ owner: unknown; answer: Answer }> {
  const answer = await untilValue(
    "vgate answers with the configs loaded",
    () => admit(url, object),
    (a) => a.status?.code !== 503,
    30_000,
  );
  assert.equal(answer.allowed, true, JSON.stringify(answer));
  const ops = answer.patch ? JSON.parse(Buffer.from(answer.patch, "base64").toString("utf8")) : [];
  const out = fastJsonPatch.applyPatch(structuredClone(object), ops).newDocument as {
    metadata: { annotations: Record<string, string> };
  };
  return { owner: out.metadata.annotations["owner"], answer };
}

interface EventItem {
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; namespace: string };
}

async function eventsOf(cluster: VgateCluster, namespace: string, secret: string) {
  const res = await cluster.admin.request<{ items: EventItem[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${secret}`)}`,
  );
  assert.equal(res.status, 200);
  return res.body.items;
}

(HAVE_KUBE ? describe : describe.skip)(
  `vgate serve --discover-vclusters against a real API server${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    const suffix = randomBytes(3).toString("hex");
    const nsA = `disc-a-${suffix}`;
    const nsB = `disc-b-${suffix}`;
    let cluster: VgateCluster;
    let serve: StartedServe | undefined;
    let url: string;

    before(async () => {
      cluster = await sharedCluster();
      for (const ns of [nsA, nsB]) await cluster.admin.apply(namespaceObject(ns) as never);
      // Two vClusters with the same name, in two namespaces, with different patches.
      await cluster.admin.create(configSecret(nsA, "vc", ownerConfig("a-")) as never);
      await cluster.admin.create(configSecret(nsB, "vc", ownerConfig("b-")) as never);
      serve = await startServe(
        {
          port: 0,
          bindAddress: "127.0.0.1",
          groupDomain: "loft.sh",
          adminGroups: ["system:masters"],
          logLevel: "info",
          dev: true,
          kubeconfig: cluster.kubeconfigPath,
          discovery: { onPatchError: "deny", deadlineMs: 2_000, workers: 1 },
        },
        createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
      );
      url = `https://127.0.0.1:${serve.server.port}/mutate/endpoints`;
    });
    after(async () => {
      await serve?.stop();
      for (const ns of [nsA, nsB]) await cluster?.admin.delete(namespaceObject(ns) as never);
    });

    it("applies each vCluster's own patches to its own objects, never another's", async () => {
      const a = await ownerAfter(url, hostCopy({ name: "vc", namespace: nsA }));
      const b = await ownerAfter(url, hostCopy({ name: "vc", namespace: nsB }));
      assert.equal(a.owner, "a-team-a");
      assert.equal(b.owner, "b-team-a");
    });

    it("leaves an object claiming a vCluster that does not exist untouched, with a warning", async () => {
      const ghost = hostCopy({ name: "ghost", namespace: nsA });
      const { owner, answer } = await ownerAfter(url, ghost);
      assert.equal(owner, "team-a");
      assert.equal(answer.patch, undefined);
      assert.match(answer.warnings?.[0] ?? "", /no config Secret vc-config-ghost/);
    });

    it("never patches an object with another namespace's vCluster's config", async () => {
      // A vCluster "b-only" exists in B only; an object in A claiming it gets nothing.
      await cluster.admin.create(configSecret(nsB, "b-only", ownerConfig("b-only-")) as never);
      const inB = hostCopy({ name: "b-only", namespace: nsB });
      await until(
        async () => (await ownerAfter(url, inB)).owner === "b-only-team-a",
        "vc-config-b-only is loaded",
      );
      const forged = hostCopy({ name: "b-only", namespace: nsA });
      const { owner, answer } = await ownerAfter(url, forged);
      assert.equal(owner, "team-a");
      assert.equal(answer.patch, undefined);
    });

    it("follows a changed config, keeps the last good one on a bad one with an Event, drops a deleted one", async () => {
      const obj = hostCopy({ name: "vc", namespace: nsA });
      const secret = configSecret(nsA, "vc", ownerConfig("a2-"));
      await cluster.admin.apply(secret as never);
      await until(
        async () => (await ownerAfter(url, obj)).owner === "a2-team-a",
        "new config used",
      );

      // An invalid config: an unknown keyword on the patch (the existing validation refuses it).
      const bad = ownerConfig("a3-").replace("expression:", "expresion:");
      await cluster.admin.apply(configSecret(nsA, "vc", bad) as never);
      const events = await untilValue(
        "a Warning Event on vc-config-vc",
        () => eventsOf(cluster, nsA, "vc-config-vc"),
        (items) => items.some((e) => e.reason === "InvalidVClusterConfig"),
        30_000,
      );
      const event = events.find((e) => e.reason === "InvalidVClusterConfig")!;
      assert.equal(event.type, "Warning");
      assert.equal(event.involvedObject.kind, "Secret");
      assert.match(event.message, /keeps the last good config of vCluster .*\/vc: invalid config/);
      assert.equal((await ownerAfter(url, obj)).owner, "a2-team-a", "the last good config");
      // The other vCluster was never touched.
      assert.equal(
        (await ownerAfter(url, hostCopy({ name: "vc", namespace: nsB }))).owner,
        "b-team-a",
      );

      // Too large: refused before parsing, with its own reason.
      const huge = `${ownerConfig("a4-")}# ${"x".repeat(MAX_DISCOVERED_CONFIG_BYTES)}\n`;
      await cluster.admin.apply(configSecret(nsA, "vc", huge) as never);
      await untilValue(
        "a ConfigTooLarge Event",
        () => eventsOf(cluster, nsA, "vc-config-vc"),
        (items) => items.some((e) => e.reason === "ConfigTooLarge"),
        30_000,
      );
      assert.equal((await ownerAfter(url, obj)).owner, "a2-team-a");

      await cluster.admin.delete(secret as never);
      await until(
        async () => (await ownerAfter(url, obj)).answer.warnings?.length === 1,
        "the deleted vCluster's patches are dropped",
      );
      assert.equal((await ownerAfter(url, obj)).owner, "team-a");
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `VClusterDiscovery: one tenant cannot crowd out the others${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    const ns = `disc-cap-${randomBytes(3).toString("hex")}`;
    let cluster: VgateCluster;

    before(async () => {
      cluster = await sharedCluster();
      await cluster.admin.apply(namespaceObject(ns) as never);
    });
    after(async () => {
      await cluster?.admin.delete(namespaceObject(ns) as never);
    });

    it("serves at most maxPerNamespace vClusters of a namespace; the next gets a Warning Event", async () => {
      await cluster.admin.create(configSecret(ns, "first", ownerConfig("1-")) as never);
      const kc = await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} });
      const transport = new KubeTransport(kc!, { timeoutMs: 10_000 });
      const runner = await startSharedPatchRunner({ workers: 1, deadlineMs: 2_000 });
      const quiet = { info: () => undefined, warn: () => undefined };
      const discovery = new VClusterDiscovery({
        transport,
        runner,
        events: new EventRecorder(transport, { component: "vgate" }),
        log: quiet,
        maxPerNamespace: 1,
      });
      try {
        await discovery.start();
        assert.ok(discovery.names().includes(`${ns}/first`));
        // Other tests' vClusters of the shared cluster are loaded too.
        const loaded = runner.size;
        await cluster.admin.create(configSecret(ns, "second", ownerConfig("2-")) as never);
        const events = await untilValue(
          "a TooManyVClusters Event on vc-config-second",
          () => eventsOf(cluster, ns, "vc-config-second"),
          (items) => items.some((e) => e.reason === "TooManyVClusters"),
          30_000,
        );
        assert.equal(events[0]!.type, "Warning");
        assert.equal(discovery.get(ns, "second"), undefined);
        assert.ok(discovery.get(ns, "first"), "the first is still served");
        assert.equal(runner.size, loaded);
        // Once the first is gone, the second fits, and is loaded without a change of its own.
        await cluster.admin.delete(configSecret(ns, "first", "") as never);
        await until(() => discovery.get(ns, "second") !== undefined, "second loaded");
        assert.equal(discovery.get(ns, "first"), undefined);
        assert.equal(runner.size, loaded, "the first's patches were unloaded");
      } finally {
        discovery.stop();
        await discovery.idle();
        await runner.close();
        transport.close();
      }
    });
  },
);
