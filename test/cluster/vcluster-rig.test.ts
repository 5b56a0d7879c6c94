// vCluster's real syncer on the real node: the rig of test/support/vcluster/. Before the syncer
// starts, the rig's namespace gets an outbound sink (outbound-sink.ts) that counts every packet
// sent toward the world and every DNS query: with telemetry off in the syncer's config, none may
// be sent by the time the file ends, while the syncer has done its work (a virtual Deployment
// running on the node, a selector-less Service's Endpoints on the host).

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { parse } from "yaml";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { until } from "../support/until.js";
import { outboundSink, type OutboundSink } from "../support/vcluster/outbound-sink.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";

/** Paths vCluster's code names as its data and config directories in a pod. */
const POD_PATHS = ["/data", "/var/lib/vcluster"];

(HAVE_VCLUSTER ? describe : describe.skip)(
  `vCluster's own syncer next to the node rig${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    let sink: OutboundSink;
    const pathsBefore = POD_PATHS.filter((p) => existsSync(p));

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      sink = await outboundSink(rig);
      vc = await startVCluster(rig, vclusterParts());
    });
    after(async () => {
      await vc?.stop();
      await rig?.stop();
    });

    it("runs with telemetry off in its config", () => {
      const config = parse(vc.config) as { telemetry?: { enabled?: unknown } };
      assert.equal(config.telemetry?.enabled, false);
    });

    it("runs a virtual Deployment's pod on the real node", async () => {
      const busybox = nodeImages().test.ref;
      const r = await vc.vkubectl(["apply", "-f", "-"], {
        input: JSON.stringify({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "sleeper", namespace: "default" },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: "sleeper" } },
            template: {
              metadata: { labels: { app: "sleeper" } },
              spec: {
                containers: [
                  {
                    name: "sleep",
                    image: busybox,
                    imagePullPolicy: "Never",
                    command: ["sleep", "3600"],
                  },
                ],
              },
            },
          },
        }),
      });
      assert.equal(r.code, 0, r.stderr);
      await until(
        async () => {
          const pods = await vc.vkubectl([
            "get",
            "pods",
            "-l",
            "app=sleeper",
            "-o",
            "jsonpath={.items[*].status.phase}",
          ]);
          return pods.stdout.trim() === "Running";
        },
        "the virtual pod Running",
        180_000,
      );
      const host = await rig.kubectl([
        "-n",
        vc.hostNamespace,
        "get",
        "pods",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{'\\n'}{end}",
      ]);
      assert.match(
        host.stdout,
        new RegExp(`^sleeper-\\S+-x-default-x-${vc.name} ${rig.nodeName} Running$`, "m"),
      );
    });

    it("writes a selector-less virtual Service's Endpoints to the host", async () => {
      const service = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "ext", namespace: "default" },
        spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      };
      assert.equal(
        (await vc.vkubectl(["apply", "-f", "-"], { input: JSON.stringify(service) })).code,
        0,
      );
      // The syncer recreates a virtual Service to give it its host copy's ClusterIP, which would
      // take Endpoints made before along with it: wait for the IPs to agree first.
      await until(
        async () => {
          const [v, h] = await Promise.all([
            vc.vkubectl(["get", "service", "ext", "-o", "jsonpath={.spec.clusterIP}"]),
            rig.kubectl([
              "-n",
              vc.hostNamespace,
              "get",
              "service",
              vc.hostName("default", "ext"),
              "-o",
              "jsonpath={.spec.clusterIP}",
            ]),
          ]);
          return v.code === 0 && v.stdout !== "" && v.stdout === h.stdout;
        },
        "the virtual Service has its host ClusterIP",
        60_000,
      );
      const endpoints = {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "ext", namespace: "default" },
        subsets: [
          { addresses: [{ ip: "10.1.2.3" }], ports: [{ name: "http", port: 80, protocol: "TCP" }] },
        ],
      };
      assert.equal(
        (await vc.vkubectl(["apply", "-f", "-"], { input: JSON.stringify(endpoints) })).code,
        0,
      );
      let host:
        | {
            metadata: { labels?: Record<string, string> };
            subsets?: { addresses?: { ip: string }[] }[];
          }
        | undefined;
      await until(
        async () => {
          const r = await rig.kubectl([
            "-n",
            vc.hostNamespace,
            "get",
            "endpoints",
            vc.hostName("default", "ext"),
            "-o",
            "json",
          ]);
          if (r.code !== 0) return false;
          host = JSON.parse(r.stdout) as typeof host;
          return host?.subsets?.[0]?.addresses?.[0]?.ip === "10.1.2.3";
        },
        "the syncer's host Endpoints",
        60_000,
      );
      assert.equal(host!.metadata.labels?.["vcluster.loft.sh/managed-by"], vc.name);
      assert.equal(host!.metadata.labels?.["vcluster.loft.sh/namespace"], "default");
    });

    it("made no call toward the world, and the sink would have counted one", async () => {
      const counts = await sink.counts();
      const log = await vc.syncer.logTail(100_000);
      const failures = log
        .split("\n")
        .filter((l) => /network is unreachable|dial udp|lookup \S+ on /.test(l));
      assert.deepEqual(counts, { outbound: 0, dns: 0 }, failures.slice(0, 5).join("\n"));
      assert.deepEqual(failures, []);
      // The control: a lookup and a connection toward the world from the namespace are counted.
      await rig.inNetns("sh", [
        "-c",
        "getent hosts example.com; curl -s -m 2 http://192.0.2.1/ ; true",
      ]);
      const after = await sink.counts();
      assert.ok(after.outbound + after.dns >= 2, JSON.stringify(after));
    });

    it("writes nothing to the host's /data or /var/lib/vcluster", () => {
      assert.deepEqual(
        POD_PATHS.filter((p) => existsSync(p)),
        pathsBefore,
      );
    });
  },
);
