// vgate's Endpoints webhook next to vCluster's real syncer, on the node rig. vgate is installed on
// the host as the README's install section says, with the `endpoints` component and a config of
// this file's (an expression, one with a reverseExpression, a reference and a labels patch); the
// virtual cluster gets the webhook for reverseExpressions as manifests/README.md says. The syncer
// writes the host Endpoints and vgate patches its writes: the host object must be what the config
// makes of the virtual one, an update must be patched once (its change set), vgate's host-side
// change must come back into the virtual cluster through the syncer reversed (without the virtual
// webhook it comes back as it is), and after the last change a quiet minute must see no write. Before vgate is installed, the same virtual changes are
// made without it, for the figures: host writes per virtual change with and without vgate.

import assert from "node:assert/strict";
import type { KubeTestClient } from "../support/kube/kube-client.js";
import { untilValue } from "../support/until.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { installVgate, type VgateInstall } from "../support/node/vgate-install.js";
import {
  endpointsAddresses,
  hostEndpoints,
  hostSlices,
  selectorlessService,
  sliceAddresses,
  virtualEndpoints,
  type EndpointsObject,
} from "../support/vcluster/selectorless.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";
import { hostNameShort } from "../support/vcluster/host-name-short.js";
import { installVirtualWebhook } from "../support/vcluster/virtual-webhook.js";
import { writeLog, type WriteLog } from "../support/vcluster/write-log.js";

const UNPATCHED = "10.1.2.3";
const PATCHED = "10.1.9.9";

// An expression (the address), an expression with its reverse (owner: not idempotent, so a second
// run would show), a reference and a labels patch.
const CONFIG = `sync:
  toHost:
    endpoints:
      enabled: true
      patches:
        - path: subsets[*].addresses[*].ip
          expression: 'value === "${UNPATCHED}" ? "${PATCHED}" : value'
        - path: metadata.annotations["example.com/owner"]
          expression: '"tenant-" + value'
          reverseExpression: 'value.startsWith("tenant-") ? value.slice(7) : value'
        - path: metadata.annotations["example.com/tls-secret"]
          reference:
            apiVersion: v1
            kind: Secret
        - path: metadata.labels
          labels: {}
`;

async function mergePatch(
  client: KubeTestClient,
  path: string,
  patch: Record<string, unknown>,
): Promise<void> {
  const res = await client.request("PATCH", path, patch, {
    "Content-Type": "application/merge-patch+json",
  });
  if (res.status !== 200)
    throw new Error(`PATCH ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

const annotations = (ep: EndpointsObject | null) => ep?.metadata.annotations ?? {};

/** Whether `manager`'s managed fields of `ep` hold the annotation example.com/owner. */
function ownsOwner(ep: EndpointsObject | null, manager: string): boolean {
  const entries = (ep?.metadata as { managedFields?: { manager?: string; fieldsV1?: unknown }[] })
    ?.managedFields;
  return (entries ?? []).some(
    (m) =>
      m.manager === manager && JSON.stringify(m.fieldsV1 ?? {}).includes('"f:example.com/owner"'),
  );
}
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

(HAVE_VCLUSTER ? describe : describe.skip)(
  `vgate's Endpoints webhook with vCluster's real syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    const ns = "default";
    let rig: NodeRig;
    let vc: VClusterRig;
    let install: VgateInstall;
    let leaked: EndpointsObject | null = null;
    const logs: { host: WriteLog; slices: WriteLog; virtual: WriteLog }[] = [];
    let logsOpen: { host: WriteLog; slices: WriteLog; virtual: WriteLog };
    const perChange: Record<
      "without" | "with",
      { host: number[]; slices: number[]; virtual: number[] }
    > = {
      without: { host: [], slices: [], virtual: [] },
      with: { host: [], slices: [], virtual: [] },
    };

    const virtualPath = (name: string) => `/api/v1/namespaces/${ns}/endpoints/${name}`;
    async function openLogs() {
      const l = {
        host: await writeLog(rig.admin, `/api/v1/namespaces/${vc.hostNamespace}/endpoints`),
        slices: await writeLog(
          rig.admin,
          `/apis/discovery.k8s.io/v1/namespaces/${vc.hostNamespace}/endpointslices`,
        ),
        virtual: await writeLog(vc.virtual.admin, `/api/v1/endpoints`),
      };
      logs.push(l);
      return l;
    }

    /** A selector-less Service with Endpoints in the virtual cluster, synced to the host. */
    async function endpointsFor(name: string, ip: string, extra: Record<string, string>) {
      await selectorlessService(rig, vc, ns, name);
      await vc.virtual.admin.create({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name, namespace: ns, labels: { app: name }, annotations: extra },
        subsets: [
          {
            addresses: [{ ip, hostname: `${name}-0` }],
            ports: [{ name: "http", port: 80, protocol: "TCP" }],
          },
        ],
      });
    }

    /**
     * Sets the virtual annotation example.com/owner of `name` to each of `values` in turn, waiting
     * each time until the host has `expected(value)` and the writes have stopped for 2 s; the
     * writes each change cost go to `into`.
     */
    /** Until no write has been seen for 2 s. */
    async function quiet() {
      let count = -1;
      await untilValue(
        "no write for 2 s",
        async () => {
          await new Promise((r) => setTimeout(r, 2000));
          const l = logsOpen;
          const all = l.host.writes.length + l.slices.writes.length + l.virtual.writes.length;
          const still = all === count;
          count = all;
          return still;
        },
        (still) => still,
      );
    }

    /**
     * Sets the virtual annotation example.com/owner of `name` to each of `values` in turn, waiting
     * each time until the host has `expected(value)` and the writes have stopped for 2 s; the
     * writes each change cost go to `into`.
     */
    async function ownerChanges(
      name: string,
      values: readonly string[],
      expected: (v: string) => string,
      into: { host: number[]; slices: number[]; virtual: number[] },
    ) {
      await quiet();
      for (const value of values) {
        const t0 = Date.now();
        await mergePatch(vc.virtual.admin, virtualPath(name), {
          metadata: { annotations: { "example.com/owner": value } },
        });
        await untilValue(
          `the host copy of ${name} with owner ${expected(value)}`,
          () => hostEndpoints(rig, vc, ns, name),
          (ep) => annotations(ep)["example.com/owner"] === expected(value),
        );
        await quiet();
        const own = (w: string) => w.startsWith(`${name}-`) || w === name;
        into.host.push(logsOpen.host.since(t0, own).length);
        into.slices.push(logsOpen.slices.since(t0, own).length);
        // The user's own write is not the syncer's: count the ones after it.
        into.virtual.push(Math.max(0, logsOpen.virtual.since(t0, own).length - 1));
      }
    }

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      vc = await startVCluster(rig, vclusterParts());
      logsOpen = await openLogs();
      // Without vgate: the syncer alone.
      await endpointsFor("plain", UNPATCHED, { "example.com/owner": "team" });
      await untilValue(
        "the syncer's host copy of plain",
        () => hostEndpoints(rig, vc, ns, "plain"),
        (ep) => annotations(ep)["example.com/owner"] === "team",
      );
      await ownerChanges("plain", ["a", "b", "c"], (v) => v, perChange.without);
      // vgate, as the README installs it, with the endpoints component and this file's config.
      install = await installVgate(rig, images.vgate, {
        endpoints: { vclusterName: vc.name, vclusterNamespace: vc.hostNamespace, config: CONFIG },
      });
      // kube-apiserver restarted for the wiring: watch again.
      logsOpen = await openLogs();
      // Before the virtual cluster has its webhook: what the syncer brings back is not reversed.
      await endpointsFor("leak", UNPATCHED, { "example.com/owner": "team" });
      leaked = await untilValue(
        "the syncer's write of owner into the virtual leak",
        () => virtualEndpoints(vc, ns, "leak"),
        (ep) => ownsOwner(ep, "vcluster"),
      );
      await installVirtualWebhook(install, vc.virtual.adminKubeconfig);
    });
    after(async () => {
      for (const l of logs) for (const w of Object.values(l)) w.stop();
      await vc?.stop();
      await rig?.stop();
    });

    it("the syncer's host copy is patched: expression, reference, labels", async () => {
      await endpointsFor("db", UNPATCHED, {
        "example.com/owner": "team",
        "example.com/tls-secret": "db-tls",
      });
      const host = await untilValue(
        "the host copy of db, patched",
        () => hostEndpoints(rig, vc, ns, "db"),
        (ep) => endpointsAddresses(ep).length > 0,
      );
      assert.deepEqual(endpointsAddresses(host), [PATCHED]);
      assert.equal(host!.subsets?.[0]?.addresses?.[0]?.hostname, "db-0");
      const a = annotations(host);
      assert.equal(a["example.com/owner"], "tenant-team");
      assert.equal(a["example.com/tls-secret"], hostNameShort("db-tls", ns, vc.name));
      assert.equal(a["vcluster.loft.sh/object-name"], "db");
      assert.deepEqual(host!.metadata.labels, {
        app: "db",
        "vcluster.loft.sh/managed-by": vc.name,
        "vcluster.loft.sh/namespace": ns,
      });
      // The patched values stay on the host: the virtual object keeps what its user wrote.
      const virtual = await virtualEndpoints(vc, ns, "db");
      assert.equal(annotations(virtual)["example.com/owner"], "team");
      assert.equal(annotations(virtual)["example.com/tls-secret"], "db-tls");
      assert.deepEqual(endpointsAddresses(virtual), [UNPATCHED]);
      // The slice kube-proxy reads has the patched address too.
      const slices = await untilValue(
        "the host EndpointSlice of db with the patched address",
        () => hostSlices(rig, vc, ns, "db"),
        (s) => s.length === 1 && sliceAddresses(s).join() === PATCHED,
      );
      assert.equal(slices.length, 1);
    });

    it("an update in the virtual cluster patches only its change set", async () => {
      await mergePatch(vc.virtual.admin, virtualPath("db"), {
        subsets: [
          {
            addresses: [{ ip: UNPATCHED, hostname: "db-0" }, { ip: "10.1.2.4" }],
            ports: [{ name: "http", port: 80, protocol: "TCP" }],
          },
        ],
      });
      const host = await untilValue(
        "the host copy of db with two addresses",
        () => hostEndpoints(rig, vc, ns, "db"),
        (ep) => endpointsAddresses(ep).length === 2,
      );
      assert.deepEqual(endpointsAddresses(host), ["10.1.2.4", PATCHED]);
      // Once per value: "tenant-" + "tenant-ops" would be a second run on a rewritten value.
      await ownerChanges("db", ["ops", "dev", "qa"], (v) => `tenant-${v}`, perChange.with);
      const after = await hostEndpoints(rig, vc, ns, "db");
      assert.equal(annotations(after)["example.com/owner"], "tenant-qa");
      assert.equal(
        annotations(after)["example.com/tls-secret"],
        hostNameShort("db-tls", ns, vc.name),
      );
      assert.equal(annotations(await virtualEndpoints(vc, ns, "db"))["example.com/owner"], "qa");
    });

    it("vgate's host-side change comes back through the syncer, reversed", async () => {
      // The syncer copies what changed on the host since its own write into the virtual object:
      // vgate's patch is such a change. It wrote owner (its managed fields say so), and the
      // virtual webhook made "tenant-team" "team" again.
      const virtual = await untilValue(
        "the syncer's write of owner into the virtual db",
        () => virtualEndpoints(vc, ns, "db"),
        (ep) => ownsOwner(ep, "vcluster"),
      );
      assert.equal(annotations(virtual)["example.com/owner"], "qa");
      // The control, made before the virtual cluster had its webhook: the patched value came back
      // as it is.
      assert.equal(annotations(leaked)["example.com/owner"], "tenant-team");
    });

    it("makes no write in the quiet minute after the last change", async () => {
      await ownerChanges("db", ["last"], (v) => `tenant-${v}`, perChange.with);
      const start = Date.now();
      await new Promise((r) => setTimeout(r, 60_000));
      const writes = [
        ...logsOpen.host.since(start),
        ...logsOpen.slices.since(start),
        ...logsOpen.virtual.since(start),
      ];
      assert.deepEqual(
        writes.map((w) => `${w.type} ${w.name} ${w.resourceVersion}`),
        [],
        "writes in the quiet minute",
      );
      assert.equal(annotations(await virtualEndpoints(vc, ns, "db"))["example.com/owner"], "last");
      const show = (k: "without" | "with") =>
        `host Endpoints ${median(perChange[k].host)} (${perChange[k].host.join(",")}), host EndpointSlices ${median(perChange[k].slices)} (${perChange[k].slices.join(",")}), virtual Endpoints ${median(perChange[k].virtual)} (${perChange[k].virtual.join(",")})`;
      console.log(
        `      writes per virtual annotation change, median (each): without vgate: ${show("without")}; with vgate: ${show("with")}`,
      );
    });
  },
);
