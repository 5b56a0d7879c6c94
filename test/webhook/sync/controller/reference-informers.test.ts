// The reference informers against the real API server (the shared cluster stands in for both
// sides: sources in one namespace, copies in another): which changes queue a copy's key. An
// up-to-date copy is not queued at start; a changed or deleted source, and a copy whose recorded
// version was edited, are; kinds follow setKinds; a kind the server does not serve is reported and
// retried.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { loadKubeConfig } from "../../../../webhook/src/shared/kubeconfig.js";
import { KubeTransport } from "../../../../webhook/src/shared/transport.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import { scopeOf } from "../../../../webhook/src/sync/controller/reconcile.js";
import { referenceKey } from "../../../../webhook/src/sync/controller/reference-copies.js";
import {
  metadataOnly,
  ReferenceInformers,
} from "../../../../webhook/src/sync/controller/reference-informers.js";
import {
  hostCopyOf,
  SOURCE_VERSION_ANNOTATION,
} from "../../../../webhook/src/sync/controller/references.js";
import { ResourcePaths } from "../../../../webhook/src/sync/controller/resource-paths.js";
import { referenceHostLocation } from "../../../../webhook/src/patches/reference.js";
import { sharedCluster, type VgateCluster } from "../../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../../support/kube/binaries.js";
import type { KubeObject } from "../../../support/kube/kube-client.js";
import { until } from "../../../support/until.js";

const suffix = randomBytes(3).toString("hex");
const SOURCE_NS = `refinf-v-${suffix}`;
const HOST_NS = `refinf-h-${suffix}`;
const vcluster = { name: `vc-${suffix}`, namespace: HOST_NS, config: {} };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

(HAVE_KUBE ? describe : describe.skip)(
  `sync/controller/reference-informers on a real API server${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let transport: KubeTransport;
    let informers: ReferenceInformers | undefined;
    const queued: string[] = [];
    const errors: string[] = [];

    const secret = (name: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: SOURCE_NS },
    });
    const source = (name: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      namespace: SOURCE_NS,
      name,
    });

    /** vgate's copy of the source as it is now, made on the "host". */
    async function copyOf(name: string): Promise<KubeObject> {
      const original = (await cluster.admin.get<KubeObject>(secret(name)))!;
      const at = referenceHostLocation(name, SOURCE_NS, vcluster);
      const copy = hostCopyOf(
        original as unknown as JsonObject,
        {
          patchIndex: 0,
          direction: "toHost",
          apiVersion: "v1",
          kind: "Secret",
          virtual: { namespace: SOURCE_NS, name },
          host: at,
        },
        scopeOf(vcluster),
      );
      return cluster.admin.create(copy as unknown as KubeObject);
    }

    function start(retryMs = 30_000): ReferenceInformers {
      const paths = new ResourcePaths(transport);
      informers = new ReferenceInformers({
        transports: { virtual: transport, host: transport },
        paths: { virtual: paths, host: paths },
        vcluster,
        enqueue: (key) => queued.push(key),
        onError: (cache, message) => errors.push(`${cache}: ${message}`),
        retryMs,
      });
      return informers;
    }

    before(async () => {
      cluster = await sharedCluster();
      for (const name of [SOURCE_NS, HOST_NS]) {
        await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
      const kc = (await loadKubeConfig({ kubeconfig: cluster.kubeconfigPath, env: {} }))!;
      transport = new KubeTransport(kc, { timeoutMs: 10_000 });
    });
    afterEach(() => {
      informers?.stop();
      informers = undefined;
      queued.length = 0;
      errors.length = 0;
    });
    after(async () => {
      transport?.close();
      for (const name of [SOURCE_NS, HOST_NS]) {
        await cluster?.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
    });

    it("queues stale copies at start, not up-to-date ones, then every change of a copied source", async () => {
      await cluster.admin.create({ ...secret("fresh"), data: { v: "MQ==" } } as KubeObject);
      await cluster.admin.create({ ...secret("stale"), data: { v: "MQ==" } } as KubeObject);
      await cluster.admin.create({ ...secret("uncopied"), data: { v: "MQ==" } } as KubeObject);
      await copyOf("fresh");
      await copyOf("stale");
      await cluster.admin.apply({ ...secret("stale"), data: { v: "Mg==" } } as KubeObject);

      const inf = start();
      await inf.setKinds([{ apiVersion: "v1", kind: "Secret" }]);
      assert.deepEqual(inf.kinds(), [{ apiVersion: "v1", kind: "Secret" }]);
      await until(() => inf.synced(), "the reference caches synced");
      await until(() => queued.includes(referenceKey(source("stale"))), "the stale copy queued");
      await sleep(300);
      assert.deepEqual(queued, [referenceKey(source("stale"))], "only the stale copy");
      // What a config reload requeues: the same.
      assert.deepEqual(inf.staleKeys(), [referenceKey(source("stale"))]);

      queued.length = 0;
      await cluster.admin.apply({ ...secret("fresh"), data: { v: "Mw==" } } as KubeObject);
      await cluster.admin.apply({ ...secret("uncopied"), data: { v: "Mw==" } } as KubeObject);
      await until(
        () => queued.includes(referenceKey(source("fresh"))),
        "the changed source queued",
      );
      await cluster.admin.delete(secret("stale"));
      await until(
        () => queued.includes(referenceKey(source("stale"))),
        "the deleted source queued",
      );
      assert.ok(
        !queued.includes(referenceKey(source("uncopied"))),
        "a source without a copy is no work",
      );
    });

    it("queues a copy whose recorded source version was edited on the host", async () => {
      await cluster.admin.create({ ...secret("edited"), data: { v: "MQ==" } } as KubeObject);
      const copy = await copyOf("edited");
      const inf = start();
      await inf.setKinds([{ apiVersion: "v1", kind: "Secret" }]);
      await until(() => inf.synced(), "the reference caches synced");
      await sleep(300);
      assert.ok(!queued.includes(referenceKey(source("edited"))), "up to date at start");
      const annotations = (copy.metadata["annotations"] ?? {}) as Record<string, string>;
      await cluster.admin.apply({
        ...copy,
        metadata: {
          name: copy.metadata.name,
          namespace: HOST_NS,
          labels: copy.metadata["labels"],
          annotations: { ...annotations, [SOURCE_VERSION_ANNOTATION]: "1" },
        },
      } as KubeObject);
      await until(() => queued.includes(referenceKey(source("edited"))), "the edited copy queued");
    });

    it("keeps metadata only: no data of a Secret stays in its caches", () => {
      const kept = metadataOnly({ apiVersion: "v1", kind: "Secret" })({
        metadata: {
          name: "s",
          namespace: "n",
          uid: "u",
          resourceVersion: "7",
          annotations: { "vcluster.loft.sh/object-name": "s", note: "private" },
          labels: { "vcluster.loft.sh/managed-by": "vc", app: "x" },
          managedFields: [{ manager: "m" }],
        },
        data: { password: "c2VjcmV0" },
        type: "Opaque",
      });
      assert.deepEqual(kept, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "s",
          namespace: "n",
          uid: "u",
          resourceVersion: "7",
          annotations: { "vcluster.loft.sh/object-name": "s" },
          labels: { "vcluster.loft.sh/managed-by": "vc" },
        },
      });
    });

    it("follows setKinds, and reports and retries a kind the server does not serve", async () => {
      const inf = start(100);
      await inf.setKinds([
        { apiVersion: "v1", kind: "ConfigMap" },
        { apiVersion: "example.com/v1", kind: "Widget" },
      ]);
      assert.deepEqual(inf.kinds(), [{ apiVersion: "v1", kind: "ConfigMap" }]);
      await until(() => errors.length >= 2, "the unserved kind reported and retried");
      assert.match(errors[0]!, /cannot watch Widget \(example\.com\/v1\): .*; retrying/);
      await inf.setKinds([{ apiVersion: "v1", kind: "Secret" }]);
      assert.deepEqual(inf.kinds(), [{ apiVersion: "v1", kind: "Secret" }]);
      const reported = errors.length;
      await sleep(400);
      assert.equal(errors.length, reported, "a kind no longer wanted is not retried");
    });
  },
);
