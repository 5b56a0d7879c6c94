// Patches that route real traffic, on the node rig with vCluster's real syncer: a selector-less
// Service in the virtual cluster whose Endpoints name one host pod (the decoy, answering
// "unpatched"), and an expression of vgate's Endpoints webhook that rewrites that address to
// another host pod (the target, answering "patched"). A client pod on the host calls the host
// Service's ClusterIP: every answer must be the target's. kube-proxy routes from EndpointSlices,
// which vCluster's EndpointSlice syncer and the host's mirroring controller both write
// (docs/reference.md#endpointslices-and-patched-endpoints): no slice may ever carry the decoy's
// address, and the slices' writes must stop.

import assert from "node:assert/strict";
import { until, untilValue } from "../support/until.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate } from "../support/node/vgate-install.js";
import {
  endpointsAddresses,
  hostEndpoints,
  hostSlices,
  selectorlessService,
  sliceAddresses,
  type EndpointSliceObject,
} from "../support/vcluster/selectorless.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { writeLog, type WriteLog } from "../support/vcluster/write-log.js";
import { hostClient, httpdPod, runningPodIp } from "../support/vcluster/host-traffic.js";

const REQUESTS = 40;
const QUIET_MS = 15_000;
const SETTLE_MS = 180_000;

(HAVE_VCLUSTER ? describe : describe.skip)(
  `vgate's patches route real traffic, next to vCluster's real syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    let slices: WriteLog;
    const ips = { target: "", decoy: "" };
    let clusterIp = "";

    const client = (name: string, targets: readonly string[], times: number) =>
      hostClient(rig, nodeImages().test.ref, name, targets, times);

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      await rig.admin.create(httpdPod("target", "patched", images.test.ref));
      await rig.admin.create(httpdPod("decoy", "unpatched", images.test.ref));
      ips.target = await runningPodIp(rig, "target");
      ips.decoy = await runningPodIp(rig, "decoy");
      await installVgate(rig, images.vgate, {
        endpoints: {
          vclusterName: "vc",
          vclusterNamespace: "vcluster-vc",
          config: [
            "sync:",
            "  toHost:",
            "    endpoints:",
            "      enabled: true",
            "      patches:",
            "        - path: subsets[*].addresses[*].ip",
            `          expression: 'value === "${ips.decoy}" ? "${ips.target}" : value'`,
            "",
          ].join("\n"),
        },
      });
      vc = await startVCluster(rig, vclusterParts(), { name: "vc", hostNamespace: "vcluster-vc" });
      slices = await writeLog(
        rig.admin,
        `/apis/discovery.k8s.io/v1/namespaces/${vc.hostNamespace}/endpointslices`,
      );
    });
    after(async () => {
      slices?.stop();
      await vc?.stop();
      await rig?.stop();
    });

    it("a virtual Service whose Endpoints name the decoy is answered by the target only", async () => {
      clusterIp = await selectorlessService(rig, vc, "default", "web");
      await vc.virtual.admin.create({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "web", namespace: "default" },
        subsets: [
          {
            addresses: [{ ip: ips.decoy }],
            ports: [{ name: "http", port: 8080, protocol: "TCP" }],
          },
        ],
      });
      const host = await untilValue(
        "the host Endpoints of web",
        () => hostEndpoints(rig, vc, "default", "web"),
        (ep) => endpointsAddresses(ep).length > 0,
      );
      assert.deepEqual(endpointsAddresses(host), [ips.target]);
      await untilValue(
        "the host EndpointSlices of web: the target's address alone",
        () => hostSlices(rig, vc, "default", "web"),
        (s) => sliceAddresses(s).join() === ips.target,
      );
      // kube-proxy programs the Service a moment after its slice: wait for the first answer.
      await untilValue(
        "a first answer through the ClusterIP",
        () => client(`probe-${Date.now()}`, [`${clusterIp} 80`], 1),
        (lines) => lines[0] === "patched",
      );
      const lines = await client("client", [`${clusterIp} 80`, `${ips.decoy} 8080`], REQUESTS);
      const viaService = lines.slice(0, REQUESTS);
      const direct = lines.slice(REQUESTS);
      assert.deepEqual(
        [...new Set(viaService)],
        ["patched"],
        `${REQUESTS} GETs of ${clusterIp}:80 from a host pod`,
      );
      // The control: the decoy answers, with its own body, so a misrouted request would show.
      assert.deepEqual([...new Set(direct)], ["unpatched"]);
    });

    it("no host EndpointSlice ever carried the decoy's address, and the slices fall quiet", async () => {
      const web = (name: string) => name.startsWith("web-");
      // The create race of the two writers (reference.md: 1 to 8 cycles) may still run after the
      // Service first answered, as both writers' slices carry the target. What must hold is that
      // the writes stop, where disagreeing writers would go on for ever (about 40 a second).
      const answered = Date.now();
      await until(
        () => {
          const last = slices.since(0, web).at(-1);
          return last !== undefined && Date.now() - last.at >= QUIET_MS;
        },
        `${QUIET_MS / 1000} s without a write of web's host slices`,
        SETTLE_MS,
      );
      const written = slices.since(0, web);
      assert.ok(written.length > 0, "the slices of web were watched from before they existed");
      const carried = written.filter((w) =>
        sliceAddresses([w.object as EndpointSliceObject]).includes(ips.decoy),
      );
      assert.deepEqual(
        carried.map((w) => `${w.type} ${w.name} ${w.resourceVersion}`),
        [],
        "writes of a slice with the decoy's address",
      );
      const late = slices.since(answered, web).length;
      const now = await hostSlices(rig, vc, "default", "web");
      assert.equal(now.length, 1, "one host slice for web");
      const meta = now[0]!.metadata;
      // Only vCluster's copy ends the race: when the controller deletes it, vCluster makes another.
      assert.equal(
        meta.annotations?.["vcluster.loft.sh/object-kind"],
        "discovery.k8s.io/v1, Kind=EndpointSlice",
        "the slice kept is vCluster's copy",
      );
      console.log(
        `      host slice ${meta.name}: ${written.length} writes until settled (creates ${written.filter((w) => w.type === "ADDED").length}, deletes ${written.filter((w) => w.type === "DELETED").length}, ${late} after the traffic was checked); managed-by ${meta.labels?.["endpointslice.kubernetes.io/managed-by"]}, bookkeeping kind ${meta.annotations?.["vcluster.loft.sh/object-kind"]}`,
      );
    });
  },
);
