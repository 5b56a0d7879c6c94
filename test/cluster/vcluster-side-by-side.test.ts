// `vgate sync --alongside-vcluster` next to vCluster's real syncer (docs/decisions.md EPS-25,
// EPS-26), on the node rig: both run from the same vcluster.yaml, which turns vCluster's Endpoints
// and EndpointSlice sync off and carries the patches. vgate sync runs as a process in the rig's
// network namespace with the rights of manifests/sync/ (service-account tokens in both clusters).
//
// The host kube-apiserver writes an audit log of every write to Endpoints, EndpointSlices and
// Services, and of every write vgate sync makes: who wrote which host object is read from there,
// not guessed. The syncer's requests are told apart by their user agent (`vcluster/…`; it runs with
// the rig's admin kubeconfig), vgate sync's by its service account.
//
// What must hold: the Endpoints of every selector-less virtual Service reach the host once, as one
// object that only vgate sync writes (its creates, its updates, its field manager), patched; the
// vgate sync alone writes their slices (copies of the virtual slices, docs/decisions.md KND-83),
// with the patched addresses, and the host's mirroring controller makes none (KND-82);
// vCluster's syncer writes no Endpoints and no EndpointSlice, and still does the rest of its work
// (a Deployment's pod runs on the node, a Service with a selector routes to it); once the virtual
// objects stop changing, nobody writes those host objects again. The control, last: the syncer
// restarted with its Endpoints sync on, the two write the same host objects in a loop.

import assert from "node:assert/strict";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { repoFile, repoRoot } from "../support/fixtures.js";
import type { OpenWatch } from "../support/kube/kube-client.js";
import { writeKubeconfig } from "../support/kube/kubeconfig-file.js";
import type { Supervised } from "../support/kube/processes.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { manifestObjects, MANIFEST_VCLUSTER, SYNC_SERVICE_ACCOUNT } from "../support/sync-rig.js";
import { until } from "../support/until.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import type { Values } from "../support/vcluster/syncer-config.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";

/**
 * The user's vcluster.yaml, the README's example: what vCluster's syncer and vgate sync both run
 * with.
 */
const VCLUSTER_YAML = parse(repoFile("webhook/examples/vcluster-alongside.yaml")) as Values;
const patchedIp = (ip: string) => ip.replace("192.0.2.", "198.51.100.");

/** The virtual cluster's host namespace, and vgate sync's service account there. */
const HOST_NAMESPACE = "vcluster-vc";
const VGATE_USER = `system:serviceaccount:${HOST_NAMESPACE}:${SYNC_SERVICE_ACCOUNT}`;

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["${VGATE_USER}"]
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
    resources:
      - group: ""
        resources: ["endpoints", "services"]
      - group: "discovery.k8s.io"
        resources: ["endpointslices"]
  - level: None
`;

const WRITES = new Set(["create", "update", "patch", "delete", "deletecollection"]);

interface AuditEvent {
  verb: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
  stageTimestamp: string;
}

/** A selector-less virtual Service, its virtual Endpoints' addresses, and its host names. */
interface Case {
  namespace: string;
  name: string;
  ips: string[];
  owner: string;
}

const CASES: Case[] = [
  { namespace: "default", name: "db", ips: ["192.0.2.10"], owner: "amy" },
  { namespace: "default", name: "cache", ips: ["192.0.2.20", "192.0.2.21"], owner: "bob" },
  { namespace: "team-a", name: "db", ips: ["192.0.2.30"], owner: "cy" },
];

type Obj = {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: { manager?: string; operation?: string }[];
  };
};
type Endpoints = Obj & { subsets?: { addresses?: { ip: string }[] }[] };
type Slice = Obj & { endpoints?: { addresses: string[] }[] };

/** until(), with what `last()` shows at the deadline in the failure. */
async function untilShowing(
  check: () => Promise<boolean>,
  what: string,
  last: () => unknown,
  ms: number,
): Promise<void> {
  await until(check, what, ms).catch((err: unknown) => {
    throw new Error(`${(err as Error).message} (last seen: ${JSON.stringify(last())})`);
  });
}

const ipsOf = (e: Endpoints) =>
  (e.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
const managers = (o: Obj) => [...new Set((o.metadata.managedFields ?? []).map((m) => m.manager))];

(HAVE_VCLUSTER ? describe : describe.skip)(
  `vgate sync --alongside-vcluster next to vCluster's syncer${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    let vgate: Supervised;
    let hostWatch: OpenWatch | undefined;
    /** Every watch event on the host Endpoints of the selector-less Services. */
    const watched: { type: string; object: Endpoints }[] = [];
    let auditDir = "";
    let auditLog = "";
    const hostNames = () => new Set(CASES.map((c) => vc.hostName(c.namespace, c.name)));

    /** Successful writes in the audit log so far (read on from where the last call stopped). */
    const seen: AuditEvent[] = [];
    let read = 0;
    let partial = "";
    function audit(): AuditEvent[] {
      const size = statSync(auditLog).size;
      if (size > read) {
        const fd = openSync(auditLog, "r");
        const chunk = Buffer.alloc(size - read);
        readSync(fd, chunk, 0, chunk.length, read);
        closeSync(fd);
        read = size;
        const lines = (partial + chunk.toString("utf8")).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines.filter(Boolean)) {
          const e = JSON.parse(line) as AuditEvent;
          if (WRITES.has(e.verb) && (e.responseStatus?.code ?? 0) < 300) seen.push(e);
        }
      }
      return [...seen];
    }
    const bySyncer = (e: AuditEvent) => (e.userAgent ?? "").startsWith("vcluster/");
    const byVgate = (e: AuditEvent) => e.user.username === VGATE_USER;
    const onHostCopies = (e: AuditEvent) =>
      e.objectRef?.resource === "endpoints" &&
      e.objectRef.namespace === vc.hostNamespace &&
      hostNames().has(e.objectRef.name ?? "");
    /** A host slice of one of the cases: the copy of a virtual slice `<name>-<suffix>`. */
    const onHostSlices = (e: AuditEvent) =>
      e.objectRef?.resource === "endpointslices" &&
      e.objectRef.namespace === vc.hostNamespace &&
      CASES.some((c) => {
        const name = e.objectRef?.name ?? "";
        return name.startsWith(`${c.name}-`) && name.endsWith(`-x-${c.namespace}-x-${vc.name}`);
      });

    const vapply = async (obj: unknown) => {
      const r = await vc.vkubectl(["apply", "-f", "-"], { input: JSON.stringify(obj) });
      assert.equal(r.code, 0, r.stderr);
    };
    const hostGet = async <T>(kind: string, name: string): Promise<T | null> => {
      const r = await rig.kubectl([
        "-n",
        vc.hostNamespace,
        "get",
        kind,
        name,
        "--show-managed-fields",
        "-o",
        "json",
      ]);
      return r.code === 0 ? (JSON.parse(r.stdout) as T) : null;
    };
    const endpointsOf = (c: Case, ips = c.ips) => ({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: {
        name: c.name,
        namespace: c.namespace,
        annotations: { "example.com/owner": c.owner },
      },
      subsets: [
        {
          addresses: ips.map((ip) => ({ ip })),
          ports: [{ name: "http", port: 80, protocol: "TCP" }],
        },
      ],
    });
    const waitPatched = async (c: Case, ips = c.ips) => {
      let host: Endpoints | null = null;
      await untilShowing(
        async () => {
          host = await hostGet<Endpoints>("endpoints", vc.hostName(c.namespace, c.name));
          return (
            host !== null &&
            JSON.stringify(ipsOf(host)) === JSON.stringify(ips.map(patchedIp)) &&
            host.metadata.annotations?.["example.com/owner"] === `tenant-${c.owner}`
          );
        },
        `the patched host Endpoints of ${c.namespace}/${c.name}`,
        () => host,
        60_000,
      );
      return host!;
    };

    before(async function () {
      this.timeout(420_000);
      auditDir = mkdtempSync(join(tmpdir(), "vgate-side-by-side-"));
      auditLog = join(auditDir, "audit.log");
      writeFileSync(join(auditDir, "policy.yaml"), AUDIT_POLICY);
      const images = nodeImages();
      rig = await startNodeRig({
        pause: images.pause,
        images: [images.test],
        apiserverArgs: [
          `--audit-policy-file=${join(auditDir, "policy.yaml")}`,
          `--audit-log-path=${auditLog}`,
          "--audit-log-mode=blocking",
        ],
      });
      vc = await startVCluster(rig, vclusterParts(), {
        hostNamespace: HOST_NAMESPACE,
        values: VCLUSTER_YAML,
      });

      // vgate sync's identities, as manifests/sync/ makes them (its namespace: the vCluster's).
      const forVc = (text: string) =>
        text.replaceAll(MANIFEST_VCLUSTER.namespace, vc.hostNamespace);
      for (const o of manifestObjects("manifests/sync/rbac-host.yaml", forVc)) {
        await rig.admin.apply(o);
      }
      for (const o of manifestObjects("manifests/sync/rbac-virtual.yaml", (t) => t)) {
        await vc.virtual.admin.apply(o);
      }
      const token = await rig.admin.request<{ status?: { token?: string } }>(
        "POST",
        `/api/v1/namespaces/${vc.hostNamespace}/serviceaccounts/${SYNC_SERVICE_ACCOUNT}/token`,
        { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
      );
      assert.equal(token.status, 201, "a token of vgate sync's host service account");
      const hostKubeconfig = await writeKubeconfig(join(rig.dir, "vgate-host.kubeconfig"), {
        server: rig.url,
        caPem: rig.ca.cert,
        name: "vgate-sync-host",
        token: token.body.status!.token!,
      });
      const virtualKubeconfig = await vc.virtual.tokenKubeconfig(
        join(rig.dir, "vgate-virtual.kubeconfig"),
        await vc.virtual.serviceAccountToken("kube-system", SYNC_SERVICE_ACCOUNT),
        "vgate-sync-virtual",
      );
      const config = join(rig.dir, "vcluster.yaml");
      writeFileSync(config, repoFile("webhook/examples/vcluster-alongside.yaml"), { mode: 0o600 });

      // Every event on the host copies, from before vgate sync starts.
      hostWatch = rig.admin.watch(
        `/api/v1/namespaces/${vc.hostNamespace}/endpoints?watch=true&labelSelector=${encodeURIComponent(`vcluster.loft.sh/managed-by=${vc.name}`)}`,
        (e) => watched.push({ type: e.type, object: e.object as Endpoints }),
      );
      vgate = rig.startInNetns("vgate-sync", "env", [
        "-u",
        "KUBECONFIG",
        resolve(repoRoot, "webhook/bin/vgate"),
        "sync",
        "--alongside-vcluster",
        `--config=${config}`,
        `--virtual-kubeconfig=${virtualKubeconfig}`,
        `--host-kubeconfig=${hostKubeconfig}`,
        `--vcluster-name=${vc.name}`,
        `--vcluster-namespace=${vc.hostNamespace}`,
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
      ]);
      await until(
        async () => {
          if (vgate.exited()) assert.fail(`vgate sync exited: ${await vgate.logTail(20)}`);
          return /"became leader"/.test(await vgate.logTail(50));
        },
        "vgate sync leading",
        60_000,
      );

      // The syncer's own work, started now so the pod comes up while the Endpoints are synced.
      await vapply({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "default" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              containers: [
                {
                  name: "sleep",
                  image: images.test.ref,
                  imagePullPolicy: "Never",
                  command: ["sleep", "3600"],
                },
              ],
            },
          },
        },
      });
      await vapply({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "default" },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      });
    });
    after(async () => {
      hostWatch?.stop();
      await vgate?.stop();
      await vc?.stop();
      await rig?.stop();
      if (auditDir) rmSync(auditDir, { recursive: true, force: true });
    });

    it("runs vCluster's syncer without its Endpoints and EndpointSlice syncers", async () => {
      const log = await vc.syncer.logTail(100_000);
      // BuildSyncers logs every syncer it creates (pkg/controllers/resources/register.go).
      assert.match(log, /Created service syncer/);
      assert.match(log, /Created pod syncer/);
      assert.doesNotMatch(log, /Created endpoints syncer/);
      assert.doesNotMatch(log, /Created endpointslice syncer/);
    });

    it("writes each selector-less Service's Endpoints to the host once, patched, by vgate sync alone", async () => {
      await vc.vkubectl(["create", "namespace", "team-a"]);
      for (const c of CASES) {
        await vapply({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: c.name, namespace: c.namespace },
          spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
        });
      }
      // The syncer recreates a virtual Service to give it its host copy's ClusterIP, taking
      // Endpoints made before along with it: wait for the IPs to agree first.
      for (const c of CASES) {
        await until(
          async () => {
            const [v, h] = await Promise.all([
              vc.vkubectl([
                "-n",
                c.namespace,
                "get",
                "service",
                c.name,
                "-o",
                "jsonpath={.spec.clusterIP}",
              ]),
              rig.kubectl([
                "-n",
                vc.hostNamespace,
                "get",
                "service",
                vc.hostName(c.namespace, c.name),
                "-o",
                "jsonpath={.spec.clusterIP}",
              ]),
            ]);
            return v.code === 0 && v.stdout !== "" && v.stdout === h.stdout;
          },
          `${c.namespace}/${c.name} has its host ClusterIP`,
          60_000,
        );
      }
      for (const c of CASES) await vapply(endpointsOf(c));
      for (const c of CASES) await waitPatched(c);
      // One change of one virtual object: only its host copy follows.
      const changed = CASES[1]!;
      await vapply(endpointsOf(changed, [...changed.ips, "192.0.2.22"]));
      await waitPatched(changed, [...changed.ips, "192.0.2.22"]);

      const events = audit();
      for (const c of CASES) {
        const name = vc.hostName(c.namespace, c.name);
        const writes = events.filter((e) => onHostCopies(e) && e.objectRef?.name === name);
        assert.deepEqual(
          [...new Set(writes.map((e) => e.user.username))],
          [VGATE_USER],
          `only vgate sync writes ${name}`,
        );
        assert.equal(writes.filter((e) => e.verb === "create").length, 1, `${name} created once`);
        const updates = writes.filter((e) => e.verb !== "create").length;
        assert.equal(updates, c === changed ? 1 : 0, `${name}: one host write per virtual change`);
      }
      // One host copy per virtual object, and no other object carries vgate's or vCluster's
      // bookkeeping for them.
      const list = await rig.kubectl([
        "-n",
        vc.hostNamespace,
        "get",
        "endpoints",
        "-l",
        `vcluster.loft.sh/managed-by=${vc.name}`,
        "-o",
        "jsonpath={range .items[*]}{.metadata.annotations.vcluster\\.loft\\.sh/object-namespace}/{.metadata.annotations.vcluster\\.loft\\.sh/object-name}{'\\n'}{end}",
      ]);
      assert.deepEqual(
        list.stdout
          .split("\n")
          .filter((l) => l !== "/" && l !== "")
          .sort(),
        CASES.map((c) => `${c.namespace}/${c.name}`).sort(),
      );
    });

    it("shows one field manager on every host copy at every watch event: vgate-sync", async () => {
      const ours = watched.filter((e) => hostNames().has(e.object.metadata.name));
      assert.ok(ours.length >= CASES.length + 1, `watch events: ${ours.length}`);
      const seen = new Set(ours.flatMap((e) => managers(e.object)));
      assert.deepEqual([...seen], ["vgate-sync"], "the field managers at every event");
    });

    it("has vgate sync alone write their EndpointSlices, with the patched addresses", async () => {
      for (const c of CASES) {
        const service = vc.hostName(c.namespace, c.name);
        let slices: Slice[] = [];
        const want = (c === CASES[1] ? [...c.ips, "192.0.2.22"] : c.ips).map(patchedIp).sort();
        await untilShowing(
          async () => {
            const r = await rig.kubectl([
              "-n",
              vc.hostNamespace,
              "get",
              "endpointslices",
              "-l",
              `kubernetes.io/service-name=${service}`,
              "-o",
              "json",
            ]);
            slices = (JSON.parse(r.stdout) as { items: Slice[] }).items;
            const addresses = slices[0]?.endpoints?.flatMap((e) => e.addresses) ?? [];
            return slices.length === 1 && JSON.stringify(addresses.sort()) === JSON.stringify(want);
          },
          `one slice of ${service} with the patched addresses`,
          () => slices,
          30_000,
        );
        assert.equal(
          slices[0]!.metadata.labels?.["endpointslice.kubernetes.io/managed-by"],
          "vgate-sync.vgate.loft.sh",
        );
      }
      // Every write to a slice of these Services is vgate sync's: the host's mirroring controller
      // skips Endpoints labelled skip-mirror, and the syncer's slice sync is off.
      const sliceWriters = new Set(
        audit()
          .filter(
            (e) =>
              e.objectRef?.resource === "endpointslices" &&
              e.objectRef.namespace === vc.hostNamespace &&
              [...hostNames()].some((n) => (e.objectRef?.name ?? "").startsWith(n)),
          )
          .map((e) => e.user.username),
      );
      assert.deepEqual([...sliceWriters], [], "no slice mirrored from the host Endpoints");
      const writers = new Set(
        audit()
          .filter(onHostSlices)
          .map((e) => e.user.username),
      );
      assert.deepEqual([...writers], [VGATE_USER], "the host slices' writers");
    });

    it("keeps the syncer's other work as it is: a Deployment's pod, a Service with a selector", async () => {
      let vPod = { name: "", ip: "" };
      await until(
        async () => {
          const r = await vc.vkubectl([
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.podIP}{'\\n'}{end}",
          ]);
          const [name, phase, ip] = r.stdout.trim().split(" ");
          vPod = { name: name ?? "", ip: ip ?? "" };
          return phase === "Running" && vPod.ip !== "";
        },
        "the virtual pod Running with an IP",
        180_000,
      );
      const hostPod = vc.hostName("default", vPod.name);
      const hostService = (await hostGet<{ spec: { selector: Record<string, string> } }>(
        "service",
        vc.hostName("default", "web"),
      ))!;
      // The host copy of the Service selects the host copy of the pod…
      const selected = await rig.kubectl([
        "-n",
        vc.hostNamespace,
        "get",
        "pods",
        "-l",
        Object.entries(hostService.spec.selector)
          .map(([k, v]) => `${k}=${v}`)
          .join(","),
        "-o",
        "jsonpath={.items[*].metadata.name} {.items[*].status.podIP}",
      ]);
      assert.equal(selected.stdout, `${hostPod} ${vPod.ip}`);
      // …and the host's EndpointSlice controller routes the Service to it.
      await until(
        async () => {
          const r = await rig.kubectl([
            "-n",
            vc.hostNamespace,
            "get",
            "endpointslices",
            "-l",
            `kubernetes.io/service-name=${vc.hostName("default", "web")}`,
            "-o",
            "jsonpath={.items[*].endpoints[*].addresses[*]}",
          ]);
          return r.stdout === vPod.ip;
        },
        "the host Service's EndpointSlice has the pod's address",
        60_000,
      );
      const events = audit();
      assert.ok(events.some(bySyncer), "the syncer's writes are in the audit log");
      // vgate sync never wrote anything of the selector Service, nor anything but its copies and
      // its Lease.
      const vgateWrites = events.filter(byVgate);
      assert.deepEqual(
        vgateWrites.filter(
          (e) => !onHostCopies(e) && !onHostSlices(e) && e.objectRef?.resource !== "leases",
        ),
        [],
      );
    });

    it("writes nothing more once the virtual objects stop changing; the syncer writes no Endpoints or slices", async () => {
      const settle = 15_000;
      const before = audit().length;
      await new Promise((r) => setTimeout(r, settle));
      const quiet = audit()
        .slice(before)
        .filter(
          (e) =>
            onHostCopies(e) ||
            onHostSlices(e) ||
            (e.objectRef?.resource === "endpointslices" &&
              [...hostNames()].some((n) => (e.objectRef?.name ?? "").startsWith(n))),
        );
      assert.deepEqual(quiet, [], `writes over ${settle} ms of quiet`);
      const events = audit();
      // The syncer's only Endpoints are those of its node Services (`<name>-node-<node>`, in front
      // of its kubelet proxy: pkg/controllers/resources/nodes/nodeservice/), whatever the config.
      const syncerOnEndpoints = events.filter(
        (e) =>
          bySyncer(e) &&
          (e.objectRef?.resource === "endpointslices" ||
            (e.objectRef?.resource === "endpoints" &&
              !(e.objectRef.name ?? "").startsWith(`${vc.name}-node-`))),
      );
      assert.deepEqual(syncerOnEndpoints, [], "the syncer wrote Endpoints or EndpointSlices");
      const copies = events.filter(onHostCopies);
      const sliceCopies = events.filter(onHostSlices);
      const syncerWrites = events.filter(bySyncer);
      const count = (list: AuditEvent[], resource: string) =>
        list.filter((e) => e.objectRef?.resource === resource).length;
      console.log(
        `      host writes to the ${CASES.length} Endpoints copies: ${copies.length} (${copies.filter((e) => e.verb === "create").length} creates), to their slices: ${sliceCopies.length} (${sliceCopies.filter((e) => e.verb === "create").length} creates), all vgate sync's; ` +
          `the syncer's: ${syncerWrites.length} (Services ${count(syncerWrites, "services")}, Endpoints ${count(syncerWrites, "endpoints")}, EndpointSlices ${count(syncerWrites, "endpointslices")})`,
      );
    });

    it("the control: with vCluster's Endpoints sync on too, both write the same host Endpoints", async () => {
      // What --alongside-vcluster refuses in vgate sync's config, done to the syncer's alone. The
      // syncer's copy has no patches: vCluster without a Pro licence fails every Endpoints sync
      // when it has any (pkg/pro/patches.go), which is no way to share the host objects either.
      const both = structuredClone(VCLUSTER_YAML) as {
        sync: { toHost: { endpoints: { enabled: boolean; patches?: unknown } } };
      };
      both.sync.toHost.endpoints = { enabled: true };
      const restarted = audit().length;
      await vc.restartSyncer(both);
      // The new syncer starts syncing once it holds its own lease.
      await until(
        () =>
          audit()
            .slice(restarted)
            .some((e) => onHostCopies(e) && bySyncer(e)),
        "the syncer writing a host copy of vgate sync's",
        120_000,
      ).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${await vc.syncer.logTail(80)}`);
      });
      const before = audit().length;
      const window = 5_000;
      await new Promise((r) => setTimeout(r, window));
      const writes = audit().slice(before).filter(onHostCopies);
      console.log(
        `      over ${window} ms with both on: ${writes.length} writes to the copies (syncer ${writes.filter(bySyncer).length}, vgate sync ${writes.filter(byVgate).length})`,
      );
      // Each undoes the other's write: a loop, where --alongside-vcluster has one writer.
      assert.ok(writes.some(bySyncer) && writes.some(byVgate), "both keep writing the copies");
    });
  },
);
