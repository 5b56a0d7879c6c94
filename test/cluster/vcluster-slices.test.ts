// EndpointSlices patched as a kind of their own, next to vCluster's real syncer on the node rig
// (docs/decisions.md KND-70..KND-72). One host slice per selector-less Service is written by two
// writers: vCluster's EndpointSlice syncer (the virtual slice's endpoints) and the host's mirroring
// controller (the host Endpoints' endpoints), and kube-proxy routes from it
// (docs/reference.md#endpointslices-and-patched-endpoints). vgate's `patches` component patches
// both: vCluster's writes get the Endpoints patches (through the slice's Endpoints view), then the
// slice's own; the controller's writes, mirrored from the patched Endpoints, the slice's own only.
//
// The config rewrites, on Endpoints, the decoy's address to b1's, and, on EndpointSlices, b1's to
// b2's. So for a Service whose virtual Endpoints name b1 only the slice patch applies (b1 → b2),
// and for one that names the decoy both compose (decoy → b1 → b2): in both, every answer through
// the Service must be b2's, no slice may ever carry another address, and the slice writes stop.
// Without the one rule the two writers derive different endpoints and rewrite the slice for ever.

import assert from "node:assert/strict";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate } from "../support/node/vgate-install.js";
import { untilValue } from "../support/until.js";
import { hostClient, httpdPod, runningPodIp, tally } from "../support/vcluster/host-traffic.js";
import {
  endpointsAddresses,
  hostEndpoints,
  hostSlices,
  selectorlessService,
  type EndpointSliceObject,
} from "../support/vcluster/selectorless.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { writeLog, type Write, type WriteLog } from "../support/vcluster/write-log.js";

const REQUESTS = 30;
const QUIET_MS = 10_000;
const SETTLE_MS = 90_000;
const SLICE_KIND = "discovery.k8s.io/v1, Kind=EndpointSlice";

/** Every address a written slice carries, ready or not, sorted. */
function carried(w: Write): string[] {
  const endpoints = (w.object as EndpointSliceObject).endpoints ?? [];
  return endpoints.flatMap((e) => e.addresses).sort();
}

/** Whose write it was, by the bookkeeping it left: vCluster's own, or the Endpoints' (mirrored). */
function writer(w: Write): "vcluster" | "mirroring" {
  const meta = w.object["metadata"] as EndpointSliceObject["metadata"];
  return meta.annotations?.["vcluster.loft.sh/object-kind"] === SLICE_KIND
    ? "vcluster"
    : "mirroring";
}

(HAVE_VCLUSTER ? describe : describe.skip)(
  `EndpointSlices patches with vCluster's real syncer and the host's mirroring controller${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    let slices: WriteLog;
    const ips = { decoy: "", b1: "", b2: "" };

    /**
     * Waits until `service`'s host slices had no write for QUIET_MS, or SETTLE_MS passed: their
     * writes, whether they fell quiet, and the figures to say.
     */
    async function settle(
      service: string,
    ): Promise<{ written: Write[]; quiet: boolean; figures: string }> {
      const host = vc.hostName("default", service);
      const mine = (w: Write) =>
        (w.object["metadata"] as EndpointSliceObject["metadata"]).labels?.[
          "kubernetes.io/service-name"
        ] === host;
      const start = Date.now();
      for (;;) {
        const written = slices.writes.filter(mine);
        const last = written.at(-1);
        const quiet = last !== undefined && Date.now() - last.at >= QUIET_MS;
        if (quiet || Date.now() - start > SETTLE_MS) {
          const figures = `${written.length} slice writes (${tally(written.map((w) => `${w.type} ${writer(w)}`))}); addresses written: ${tally(written.map((w) => carried(w).join("+")))}`;
          return { written, quiet, figures };
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }

    /** The writes of `service`'s slices once quiet; fails, with the figures, if they never are. */
    async function quiet(service: string): Promise<Write[]> {
      const { written, quiet, figures } = await settle(service);
      console.log(`      ${service}: ${figures}${quiet ? ", then quiet" : ""}`);
      assert.ok(
        quiet,
        `${service}'s host slice never fell quiet (${QUIET_MS / 1000} s without a write) within ${SETTLE_MS / 1000} s`,
      );
      return written;
    }

    /** The virtual Service `name`, selector-less, whose Endpoints name `ip` on port 8080. */
    async function service(name: string, ip: string): Promise<string> {
      const clusterIp = await selectorlessService(rig, vc, "default", name);
      await vc.virtual.admin.create({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name, namespace: "default" },
        subsets: [{ addresses: [{ ip }], ports: [{ name: "http", port: 8080, protocol: "TCP" }] }],
      });
      return clusterIp;
    }

    function assertOnlyB2(written: Write[], service: string): void {
      assert.ok(
        written.length > 0,
        `the slices of ${service} were watched from before they existed`,
      );
      const other = written.filter((w) => w.type !== "DELETED" && carried(w).join() !== ips.b2);
      assert.deepEqual(
        other.map(
          (w) => `${w.type} ${w.name} ${w.resourceVersion} ${writer(w)}: ${carried(w).join()}`,
        ),
        [],
        `writes of ${service}'s host slices with another address than b2's (${ips.b2})`,
      );
    }

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      for (const name of ["decoy", "b1", "b2"] as const) {
        await rig.admin.create(httpdPod(name, name, images.test.ref));
      }
      for (const name of ["decoy", "b1", "b2"] as const) ips[name] = await runningPodIp(rig, name);
      await installVgate(rig, images.vgate, {
        patches: {
          vclusterName: "vc",
          vclusterNamespace: "vcluster-vc",
          config: [
            "sync:",
            "  toHost:",
            "    endpoints:",
            "      patches:",
            "        - path: subsets[*].addresses[*].ip",
            `          expression: 'value === "${ips.decoy}" ? "${ips.b1}" : value'`,
            "    endpointSlices:",
            "      patches:",
            "        - path: endpoints[*].addresses[*]",
            `          expression: 'value === "${ips.b1}" ? "${ips.b2}" : value'`,
            "",
          ].join("\n"),
          kinds: [
            { group: "", resource: "endpoints" },
            { group: "discovery.k8s.io", resource: "endpointslices" },
          ],
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

    it("an EndpointSlices patch alone: the host slice carries its value, and both writers fall quiet", async () => {
      await service("solo", ips.b1);
      // No Endpoints patch touches b1: the host Endpoints, which the controller mirrors, keep it.
      const ep = await untilValue(
        "the host Endpoints of solo",
        () => hostEndpoints(rig, vc, "default", "solo"),
        (e) => endpointsAddresses(e).length > 0,
      );
      assert.deepEqual(endpointsAddresses(ep), [ips.b1]);
      const written = await quiet("solo");
      assertOnlyB2(written, "solo");
      const now = await hostSlices(rig, vc, "default", "solo");
      assert.deepEqual(
        now.map((s) => (s.endpoints ?? []).flatMap((e) => e.addresses)),
        [[ips.b2]],
        "one host slice for solo, with b2's address",
      );
    });

    it("an Endpoints patch and an EndpointSlices patch on one Service: every answer is b2's", async () => {
      const clusterIp = await service("web", ips.decoy);
      const ep = await untilValue(
        "the host Endpoints of web",
        () => hostEndpoints(rig, vc, "default", "web"),
        (e) => endpointsAddresses(e).length > 0,
      );
      assert.deepEqual(endpointsAddresses(ep), [ips.b1], "the Endpoints patch alone: b1");
      // kube-proxy programs the Service a moment after its slice: wait for any answer.
      await untilValue(
        "a first answer through the ClusterIP",
        () => hostClient(rig, nodeImages().test.ref, `probe-${Date.now()}`, [`${clusterIp} 80`], 1),
        (lines) => lines[0] !== "FAILED",
      );
      const lines = await hostClient(
        rig,
        nodeImages().test.ref,
        "client",
        [`${clusterIp} 80`, `${ips.decoy} 8080`, `${ips.b1} 8080`],
        REQUESTS,
      );
      const viaService = lines.slice(0, REQUESTS);
      console.log(`      web: ${REQUESTS} GETs of ${clusterIp}:80 answered ${tally(viaService)}`);
      // The slices' writes are waited for before any assertion, so a failure says both figures.
      const written = await quiet("web");
      // The controls: the other backends answer, each with its own body, so misrouting would show.
      assert.deepEqual([...new Set(lines.slice(REQUESTS, 2 * REQUESTS))], ["decoy"]);
      assert.deepEqual([...new Set(lines.slice(2 * REQUESTS))], ["b1"]);
      assert.deepEqual(
        [...new Set(viaService)],
        ["b2"],
        `${REQUESTS} GETs of ${clusterIp}:80 from a host pod`,
      );
      assertOnlyB2(written, "web");
    });
  },
);
