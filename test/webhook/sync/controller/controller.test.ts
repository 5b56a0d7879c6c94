// The controller in process on the shared cluster: one namespace stands in for the virtual cluster
// and another for the host (both "clusters" are the same kube-apiserver here; H4's contract suite
// runs two). A selector-less Service with Endpoints gets a host copy with vCluster's bookkeeping and
// the configured expression; the probes, metrics, leader election, config reload (an invalid file
// keeps the last good config), the SyncError Event on an unmanaged host object in the way, deletion
// and a graceful stop that releases the Lease. Then the host as a pod sees it (no --host-kubeconfig:
// the service account's token and CA), and a leader losing its Lease.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SyncOptions } from "../../../../webhook/src/sync/controller/options.js";
import { DEFAULT_REFERENCE_SECRET_TYPES } from "../../../../webhook/src/sync/secret-types.js";
import { createLogger } from "../../../../webhook/src/server/logger.js";
import {
  startController,
  type RunningController,
} from "../../../../webhook/src/sync/controller/controller.js";
import { sharedCluster, type VgateCluster } from "../../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../../support/kube/binaries.js";
import { waitForAccess } from "../../../support/kube/rbac.js";
import {
  manifestObjects,
  MANIFEST_VCLUSTER,
  SYNC_SERVICE_ACCOUNT,
} from "../../../support/sync-rig.js";
import type { KubeObject } from "../../../support/kube/kube-client.js";
import { until } from "../../../support/until.js";

const suffix = randomBytes(3).toString("hex");
const VC = `vc-${suffix}`;
const VIRTUAL_NS = `ctl-v-${suffix}`;
const HOST_NS = `ctl-h-${suffix}`;
const LEASE = `vgate-sync-${VC}`;

const config = (prefix: string) =>
  [
    "sync:",
    "  toHost:",
    "    endpoints:",
    "      enabled: true",
    "      patches:",
    "        - path: metadata.annotations.team",
    `          expression: '"${prefix}" + value'`,
    "",
  ].join("\n");

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

/** The value of one sample line of a Prometheus text answer, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const hostName = (name: string) => `${name}-x-${VIRTUAL_NS}-x-${VC}`;

(HAVE_KUBE ? describe : describe.skip)(
  `vgate sync controller in process${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;
    let running: RunningController | undefined;
    let dir: string;
    const lines: Record<string, unknown>[] = [];

    const virtual = (kind: "Endpoints" | "Service", name: string) => ({
      apiVersion: "v1",
      kind,
      metadata: { name, namespace: VIRTUAL_NS },
    });
    const hostCopy = (name: string) =>
      cluster.admin.get<KubeObject>({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: hostName(name), namespace: HOST_NS },
      });
    const annotation = async (name: string, key: string) =>
      ((await hostCopy(name))?.metadata["annotations"] as Record<string, string> | undefined)?.[
        key
      ];
    const logged = (msg: string) => lines.filter((l) => l["msg"] === msg);

    async function selectorless(name: string, annotations: Record<string, string>): Promise<void> {
      await cluster.admin.create({
        ...virtual("Service", name),
        spec: { ports: [{ port: 80 }], clusterIP: "None" },
      } as KubeObject);
      await cluster.admin.create({
        ...virtual("Endpoints", name),
        metadata: { name, namespace: VIRTUAL_NS, annotations },
        subsets: [{ addresses: [{ ip: "10.1.0.1" }], ports: [{ port: 80 }] }],
      } as KubeObject);
    }

    before(async () => {
      cluster = await sharedCluster();
      dir = mkdtempSync(join(tmpdir(), "vgate-sync-ctl-"));
      for (const name of [VIRTUAL_NS, HOST_NS]) {
        await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
      writeFileSync(join(dir, "vcluster.yaml"), config("host-"));
      // Read by the informers' initial LIST, whose items carry no apiVersion/kind.
      await selectorless("early", { team: "e" });
      const opts: SyncOptions = {
        config: join(dir, "vcluster.yaml"),
        virtualKubeconfig: cluster.kubeconfigPath,
        hostKubeconfig: cluster.kubeconfigPath,
        vclusterName: VC,
        vclusterNamespace: HOST_NS,
        alongsideVCluster: false,
        targetNamespace: HOST_NS,
        selfNamespace: undefined,
        referenceSecretTypes: [...DEFAULT_REFERENCE_SECRET_TYPES],
        workers: 2,
        patchTimeoutMs: 2000,
        patchWorkers: 1,
        leaderElection: {
          enabled: true,
          id: LEASE,
          namespace: HOST_NS,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
        },
        healthProbeBindAddress: "127.0.0.1:0",
        metricsBindAddress: "127.0.0.1:0",
        shutdownTimeoutMs: 10_000,
        logLevel: "debug",
      };
      const logger = createLogger("debug", {
        write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
      });
      running = await startController(opts, logger, {
        configIntervalMs: 200,
        processMetrics: false,
        identity: "test-replica",
      });
    });

    after(async () => {
      await running?.shutdown();
      for (const name of [VIRTUAL_NS, HOST_NS]) {
        await cluster?.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it("syncs a selector-less Service's Endpoints to the host with bookkeeping and the expression", async () => {
      await selectorless("web", { team: "a" });
      await until(async () => (await hostCopy("web")) !== null, "the host copy appears", 30_000);
      const copy = (await hostCopy("web"))!;
      const annotations = copy.metadata["annotations"] as Record<string, string>;
      assert.equal(annotations["vcluster.loft.sh/object-name"], "web");
      assert.equal(annotations["vcluster.loft.sh/object-namespace"], VIRTUAL_NS);
      assert.equal(annotations["team"], "host-a");
      assert.equal(
        (copy.metadata["labels"] as Record<string, string>)["vcluster.loft.sh/managed-by"],
        VC,
      );
      assert.deepEqual((copy["subsets"] as { addresses: unknown }[])[0]!.addresses, [
        { ip: "10.1.0.1" },
      ]);
      // The log line says key, action and outcome, never the object.
      await until(
        () => logged("synced").some((l) => l["endpoints"] === `${VIRTUAL_NS}/web`),
        "the write is logged",
      );
      const line = logged("synced").find((l) => l["endpoints"] === `${VIRTUAL_NS}/web`)!;
      assert.deepEqual(
        [line["side"], line["action"], line["kind"], line["object"], line["result"]],
        ["host", "create", "Endpoints", `${HOST_NS}/${hostName("web")}`, "created"],
      );
      assert.ok(!JSON.stringify(lines).includes("10.1.0.1"), "no object contents in the log");
    });

    it("syncs what existed before it started (read by the first LIST)", async () => {
      await until(
        async () => (await annotation("early", "team")) === "host-e",
        "the early copy",
        30_000,
      );
    });

    it("serves /healthz, /readyz and /metrics with controller-runtime's names, and holds the Lease", async () => {
      assert.equal((await get(`http://${running!.probeAddress}/healthz`)).status, 200);
      assert.equal((await get(`http://${running!.probeAddress}/readyz`)).status, 200);
      const metrics = (await get(`http://${running!.metricsAddress}/metrics`)).body;
      assert.ok(
        sample(
          metrics,
          'controller_runtime_reconcile_total{controller="endpoints",result="success"}',
        )! >= 1,
      );
      // At least this test's two copies: the "virtual cluster" is the whole shared cluster, so
      // selector-less Services other tests leave behind are synced too.
      assert.ok(
        sample(metrics, 'vgate_sync_writes_total{side="host",type="create",kind="Endpoints"}')! >=
          2,
      );
      assert.equal(sample(metrics, `leader_election_master_status{name="${LEASE}"}`), 1);
      assert.ok(
        sample(metrics, 'workqueue_adds_total{name="endpoints",controller="endpoints"}')! >= 2,
      );
      assert.notEqual(
        sample(metrics, 'workqueue_depth{name="endpoints",controller="endpoints"}'),
        undefined,
      );
      const lease = await cluster.admin.request<{ spec: { holderIdentity: string } }>(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${HOST_NS}/leases/${LEASE}`,
      );
      assert.equal(lease.body.spec.holderIdentity, "test-replica");
    });

    it("an invalid config change keeps the last good config; a valid one is picked up", async () => {
      writeFileSync(
        join(dir, "vcluster.yaml"),
        "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a[]\n          expression: x\n",
      );
      await until(
        () => logged("config reload failed; keeping the last good config").length === 1,
        "the bad file is logged",
      );
      const failure = logged("config reload failed; keeping the last good config")[0]!;
      assert.ok(
        (failure["problems"] as string[]).some((p) => p.includes("patches[0]")),
        JSON.stringify(failure),
      );
      // Still syncing with the last good config.
      await cluster.admin.request(
        "PATCH",
        `/api/v1/namespaces/${VIRTUAL_NS}/endpoints/web`,
        { metadata: { annotations: { team: "b" } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      await until(
        async () => (await annotation("web", "team")) === "host-b",
        "the last good expression still runs",
      );

      writeFileSync(join(dir, "vcluster.yaml"), config("v2-"));
      await until(() => logged("config reloaded").length === 1, "the good file is picked up");
      // Every key is queued again, and a new config re-runs the expressions (the snapshot knows it).
      await until(
        async () => (await annotation("web", "team")) === "v2-b",
        "the copy follows the new config",
      );
      await cluster.admin.request(
        "PATCH",
        `/api/v1/namespaces/${VIRTUAL_NS}/endpoints/web`,
        { metadata: { annotations: { team: "c" } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      await until(
        async () => (await annotation("web", "team")) === "v2-c",
        "the new expression runs",
      );
      const metrics = (await get(`http://${running!.metricsAddress}/metrics`)).body;
      assert.equal(sample(metrics, "vgate_sync_config_reload_errors_total"), 1);
      assert.equal(sample(metrics, "vgate_sync_config_reloads_total"), 1);
    });

    it("never touches a host object it does not manage; the virtual Endpoints get a SyncError Event", async () => {
      const theirs = await cluster.admin.create({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: hostName("taken"), namespace: HOST_NS },
        subsets: [{ addresses: [{ ip: "10.9.9.9" }], ports: [{ port: 81 }] }],
      } as KubeObject);
      await selectorless("taken", {});
      type EventList = {
        items: {
          reason: string;
          message: string;
          action?: string;
          involvedObject: { name: string; kind: string };
        }[];
      };
      const events = async () =>
        (
          await cluster.admin.request<EventList>("GET", `/api/v1/namespaces/${VIRTUAL_NS}/events`)
        ).body.items.filter((e) => e.involvedObject.name === "taken" && e.reason === "SyncError");
      await until(
        async () => (await events()).length > 0,
        "a SyncError Event on the virtual Endpoints",
        30_000,
      );
      const event = (await events())[0]!;
      assert.equal(event.involvedObject.kind, "Endpoints");
      assert.match(event.message, /exists and is not managed by vgate/);
      const after = await hostCopy("taken");
      assert.equal(after!.metadata.resourceVersion, theirs.metadata.resourceVersion);
    });

    it("deletion follows the virtual object", async () => {
      await cluster.admin.delete(virtual("Endpoints", "web"));
      await until(async () => (await hostCopy("web")) === null, "the host copy is deleted", 30_000);
    });

    it("a graceful stop fails /readyz, releases the Lease and closes the servers", async () => {
      const probe = running!.probeAddress;
      await running!.shutdown();
      running = undefined;
      assert.ok(lines.some((l) => l["msg"] === "stopped"));
      await assert.rejects(get(`http://${probe}/readyz`));
      const lease = await cluster.admin.request<{ spec: { holderIdentity?: string } }>(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${HOST_NS}/leases/${LEASE}`,
      );
      assert.ok(!lease.body.spec.holderIdentity, JSON.stringify(lease.body.spec));
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `vgate sync controller in a pod${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);

    it("without --host-kubeconfig: the host as the pod's service account (token file, CA), with rbac-host.yaml's rights", async () => {
      const cluster = await sharedCluster();
      const ns = `ctl-pod-${randomBytes(3).toString("hex")}`;
      const dir = mkdtempSync(join(tmpdir(), "vgate-sync-pod-"));
      writeFileSync(join(dir, "vcluster.yaml"), config("x-"));
      await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      // The host identity of an install: manifests/sync/rbac-host.yaml in this namespace.
      for (const o of manifestObjects("manifests/sync/rbac-host.yaml", (text) =>
        text.replaceAll(MANIFEST_VCLUSTER.namespace, ns),
      )) {
        await cluster.admin.apply(o);
      }
      const user = `system:serviceaccount:${ns}:${SYNC_SERVICE_ACCOUNT}`;
      await waitForAccess(
        cluster.admin,
        {
          user,
          groups: ["system:serviceaccounts", "system:authenticated"],
          resourceAttributes: {
            group: "coordination.k8s.io",
            resource: "leases",
            verb: "update",
            namespace: ns,
          },
        },
        true,
      );
      // What the kubelet mounts into a pod, and the variables it sets.
      const sa = join(dir, "serviceaccount");
      mkdirSync(sa);
      writeFileSync(
        join(sa, "token"),
        await cluster.plane.serviceAccountToken(ns, SYNC_SERVICE_ACCOUNT),
      );
      writeFileSync(join(sa, "ca.crt"), cluster.caPem);
      const url = new URL(cluster.url);
      const lines: Record<string, unknown>[] = [];
      const logger = createLogger("info", {
        write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
      });
      const lease = "vgate-sync-pod";
      const running = await startController(
        {
          config: join(dir, "vcluster.yaml"),
          virtualKubeconfig: cluster.kubeconfigPath,
          hostKubeconfig: undefined,
          vclusterName: "pod",
          vclusterNamespace: ns,
          alongsideVCluster: false,
          targetNamespace: ns,
          selfNamespace: ns,
          referenceSecretTypes: [...DEFAULT_REFERENCE_SECRET_TYPES],
          workers: 1,
          patchTimeoutMs: 2000,
          patchWorkers: 1,
          leaderElection: {
            enabled: true,
            id: lease,
            namespace: ns,
            leaseDurationMs: 3000,
            renewDeadlineMs: 2000,
            retryPeriodMs: 500,
          },
          healthProbeBindAddress: "127.0.0.1:0",
          metricsBindAddress: null,
          shutdownTimeoutMs: 5000,
          logLevel: "info",
        },
        logger,
        {
          processMetrics: false,
          identity: "pod-replica",
          inCluster: {
            env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
            serviceAccountDir: sa,
          },
        },
      );
      try {
        await until(() => lines.some((l) => l["msg"] === "became leader"), "leading");
        const got = await cluster.admin.request<{ spec?: { holderIdentity?: string } }>(
          "GET",
          `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${lease}`,
        );
        assert.equal(got.body.spec?.holderIdentity, "pod-replica");
        await until(
          async () => (await get(`http://${running.probeAddress}/readyz`)).status === 200,
          "ready: the host caches synced through the service account",
        );
      } finally {
        await running.shutdown();
        await cluster.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `vgate sync controller: losing the Lease${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);

    it('a leader whose Lease is taken logs "leader election lost" and reports it (the command then exits 1)', async () => {
      const cluster = await sharedCluster();
      const ns = `ctl-lost-${randomBytes(3).toString("hex")}`;
      const dir = mkdtempSync(join(tmpdir(), "vgate-sync-lost-"));
      writeFileSync(join(dir, "vcluster.yaml"), config("x-"));
      await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      const lines: Record<string, unknown>[] = [];
      const logger = createLogger("info", {
        write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
      });
      const lease = `vgate-sync-lost`;
      const running = await startController(
        {
          config: join(dir, "vcluster.yaml"),
          virtualKubeconfig: cluster.kubeconfigPath,
          hostKubeconfig: cluster.kubeconfigPath,
          vclusterName: "lost",
          vclusterNamespace: ns,
          alongsideVCluster: false,
          targetNamespace: ns,
          selfNamespace: undefined,
          referenceSecretTypes: [...DEFAULT_REFERENCE_SECRET_TYPES],
          workers: 1,
          patchTimeoutMs: 2000,
          patchWorkers: 1,
          leaderElection: {
            enabled: true,
            id: lease,
            namespace: ns,
            leaseDurationMs: 3000,
            renewDeadlineMs: 2000,
            retryPeriodMs: 500,
          },
          healthProbeBindAddress: null,
          metricsBindAddress: null,
          shutdownTimeoutMs: 5000,
          logLevel: "info",
        },
        logger,
        { processMetrics: false, identity: "first" },
      );
      let lost = false;
      void running.lost.then(() => (lost = true));
      try {
        await until(() => lines.some((l) => l["msg"] === "became leader"), "leading");
        const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${lease}`;
        // Another replica's record (as after a partition): held by "intruder" for a minute.
        for (let attempt = 0; ; attempt++) {
          const current = await cluster.admin.request<
            KubeObject & { spec: Record<string, unknown> }
          >("GET", path);
          const next = {
            ...current.body,
            spec: {
              ...current.body.spec,
              holderIdentity: "intruder",
              leaseDurationSeconds: 60,
              renewTime: new Date().toISOString().replace("Z", "000Z"),
            },
          };
          const put = await cluster.admin.request("PUT", path, next);
          if (put.status === 200) break;
          assert.ok(attempt < 10, `cannot take the Lease: ${put.status}`);
        }
        await until(() => lost, "the loss is reported", 20_000);
        assert.ok(lines.some((l) => l["msg"] === "leader election lost" && l["level"] === "error"));
        const metrics = await running.metrics.registry.getSingleMetricAsString(
          "leader_election_master_status",
        );
        assert.match(metrics, new RegExp(`leader_election_master_status\\{name="${lease}"\\} 0`));
      } finally {
        await running.shutdown();
        await cluster.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
