// Translation fidelity (issue 22, item 1): for a corpus of virtual Endpoints next to selector-less
// Services, the host Endpoints vCluster's own syncer (v0.34.0, no patches) writes, the one
// `vgate translate` prints for the same virtual object, and the one `vgate sync` writes are equal
// field by field, except what the API server sets (uid, resourceVersion, creationTimestamp,
// managedFields, generation).
//
// vgate sync runs as a process against the same virtual cluster, with the rights manifests/sync/
// gives it, the same --vcluster-name but its own host namespace (--vcluster-namespace vgate-vc), so
// it never writes the syncer's objects; its copies are compared with the syncer's modulo that
// namespace, and modulo vgate's own sync snapshot annotation, which takes the place of a virtual
// one (docs/decisions.md#eps-17): the one deliberate difference. Each host namespace has a Service
// named after the vCluster, as the chart makes one, which both name as the copies' owner.
//
// Before an Endpoints object is made, its Service must have settled: vCluster's Service syncer
// recreates a virtual Service to give it its host copy's ClusterIP, and the virtual
// kube-controller-manager's endpoints controller deletes the Endpoints of a deleted Service. The
// last test shows that with Endpoints made at once, and that all three follow the virtual object.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { repoRoot } from "../support/fixtures.js";
import type { KubeObject, KubeTestClient } from "../support/kube/kube-client.js";
import { freePort, supervise, type Supervised } from "../support/kube/processes.js";
import { nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { tokenKubeconfig } from "../support/node/vgate-install.js";
import { manifestObjects, MANIFEST_VCLUSTER, SYNC_SERVICE_ACCOUNT } from "../support/sync-rig.js";
import { until } from "../support/until.js";
import { entryArbitrary, fixedCorpus, type Entry } from "../support/vcluster/endpoints-corpus.js";
import {
  HAVE_VCLUSTER,
  VCLUSTER_SKIP_REASON,
  vclusterParts,
} from "../support/vcluster/vcluster-tier.js";
import { startVCluster, type VClusterRig } from "../support/vcluster/vcluster-rig.js";

const VGATE = resolve(repoRoot, "webhook/bin/vgate");
/** vgate sync's host namespace: not the syncer's, so the two never write the same object. */
const VGATE_NS = "vgate-vc";
/** Property runs, each a batch of generated entries synced at once. */
const RUNS = 10;
const SERVER_SET = ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"];
const SNAPSHOT = "vgate.loft.sh/sync-snapshot";
const OBJECT_NAME = "vcluster.loft.sh/object-name";
const OBJECT_NAMESPACE = "vcluster.loft.sh/object-namespace";
const HOST_NAMESPACE = "vcluster.loft.sh/object-host-namespace";
const MANAGED_ANNOTATIONS = "vcluster.loft.sh/managed-annotations";
const SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror";
const SLICE_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";

type Obj = KubeObject & Record<string, unknown>;
type Meta = {
  name: string;
  namespace: string;
  uid: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ownerReferences?: { uid: string }[];
};
const metaOf = (o: Obj): Meta => o.metadata as Meta;
const keyOf = (e: { namespace: string; name: string }) => `${e.namespace}/${e.name}`;

/** The virtual key a host copy is of, from the syncer's bookkeeping. */
const sourceKey = (host: Obj): string | null => {
  const a = metaOf(host).annotations ?? {};
  return a[OBJECT_NAME] ? `${a[OBJECT_NAMESPACE] ?? ""}/${a[OBJECT_NAME]}` : null;
};

/** The items of a LIST, each with the kind a GET would give it (a LIST's items carry none). */
async function list(client: KubeTestClient, path: string, kind: string): Promise<Obj[]> {
  const res = await client.request<{ items?: Obj[] }>("GET", path);
  assert.equal(res.status, 200, `GET ${path}: ${JSON.stringify(res.body)}`);
  return (res.body.items ?? []).map((item) => ({ ...item, apiVersion: "v1", kind }));
}

/** `what` without the fields the API server sets, deep-copied. */
function withoutServerFields(what: Obj): Obj {
  const copy = structuredClone(what);
  const m = copy.metadata as Record<string, unknown>;
  for (const f of SERVER_SET) Reflect.deleteProperty(m, f);
  return copy;
}

/**
 * A vgate sync copy as the syncer's would read in the syncer's namespace: the host namespace and
 * the owner Service's uid (each namespace has its own Service) swapped for the syncer's, and
 * vgate's own snapshot annotation set aside.
 */
function asInSyncerNamespace(copy: Obj, syncer: { namespace: string; ownerUid: string }): Obj {
  const out = withoutServerFields(copy);
  const m = out.metadata as Meta;
  const from = m.namespace;
  m.namespace = syncer.namespace;
  // vgate sync writes the EndpointSlices and labels its host Endpoints skip-mirror
  // (docs/decisions.md KND-82): a deliberate difference, as the snapshot is.
  if (m.labels) Reflect.deleteProperty(m.labels, SKIP_MIRROR);
  if (m.annotations) {
    Reflect.deleteProperty(m.annotations, SNAPSHOT);
    if (m.annotations[HOST_NAMESPACE] === from) m.annotations[HOST_NAMESPACE] = syncer.namespace;
  }
  for (const ref of m.ownerReferences ?? []) ref.uid = syncer.ownerUid;
  for (const subset of (out["subsets"] as Record<string, unknown>[] | undefined) ?? []) {
    for (const list of ["addresses", "notReadyAddresses"]) {
      for (const a of (subset[list] as { targetRef?: Record<string, string> }[] | undefined) ??
        []) {
        if (a.targetRef?.["kind"] === "Pod" && a.targetRef["namespace"] === from) {
          a.targetRef["namespace"] = syncer.namespace;
        }
      }
    }
  }
  return out;
}

/**
 * The syncer's copy as vgate sync must write it: vgate sync never copies a virtual object's
 * `vgate.loft.sh/sync-snapshot` (its own goes there, set aside by asInSyncerNamespace), so that
 * key is not among the copied ones (docs/decisions.md#eps-17).
 */
function withoutVirtualSnapshot(theirs: Obj): Obj {
  const out = structuredClone(theirs);
  const annotations = (out.metadata as Meta).annotations ?? {};
  if (!Object.hasOwn(annotations, SNAPSHOT)) return out;
  Reflect.deleteProperty(annotations, SNAPSHOT);
  const managed = (annotations[MANAGED_ANNOTATIONS] ?? "")
    .split("\n")
    .filter((k) => k !== SNAPSHOT);
  if (managed.length > 0 && managed[0] !== "")
    annotations[MANAGED_ANNOTATIONS] = managed.join("\n");
  else Reflect.deleteProperty(annotations, MANAGED_ANNOTATIONS);
  return out;
}

/** Every leaf path where `a` and `b` differ, with both values (JSON), for the report. */
function differences(a: unknown, b: unknown, path = ""): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
  if (isMap(a) && isMap(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences(a[k], b[k], path ? `${path}.${k}` : k));
  }
  const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v).slice(0, 200));
  return [`${path || "(root)"}: vCluster ${show(a)}, vgate ${show(b)}`];
}

/** `vgate translate` of one virtual object: its exit status, output and error text. */
function translate(
  virtual: Obj,
  config: string,
  ownerUid: string,
  namespace: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      VGATE,
      [
        "translate",
        `--config=${config}`,
        "--vcluster-name=vc",
        `--vcluster-namespace=${namespace}`,
        `--vcluster-service-uid=${ownerUid}`,
        "-",
      ],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", fail);
    child.on("close", (code) =>
      done({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
    child.stdin.end(JSON.stringify(virtual));
  });
}

/** Runs `work` over `items`, `limit` at a time (the machine has two cores). */
async function pooled<T, R>(items: T[], limit: number, work: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((done) => {
    httpRequest(url, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    })
      .on("error", () => done(0))
      .end();
  });
}

(HAVE_VCLUSTER ? describe : describe.skip)(
  `translation fidelity: vCluster's syncer, vgate translate and vgate sync${VCLUSTER_SKIP_REASON}`,
  function () {
    this.timeout(300_000);
    let rig: NodeRig;
    let vc: VClusterRig;
    let sync: Supervised;
    let dir: string;
    let config: string;
    /** The uid of the Service named after the vCluster in each host namespace. */
    const ownerUid: Record<string, string> = {};
    const namespaces = new Set<string>(["default"]);
    /** How many synced objects were compared so far. */
    let compared = 0;

    before(async () => {
      rig = await startNodeRig({ pause: nodeImages().pause, images: [] });
      vc = await startVCluster(rig, vclusterParts());
      dir = await mkdtemp(join(tmpdir(), "vgate-fidelity-"));
      config = join(dir, "vcluster.yaml");
      await writeFile(config, "sync:\n  toHost:\n    endpoints:\n      enabled: true\n");
      await rig.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: VGATE_NS } });
      // vgate sync's namespace gets the Service the chart makes in the syncer's.
      await rig.admin.create({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: vc.name, namespace: VGATE_NS },
        spec: { ports: [{ name: "https", port: 443, protocol: "TCP" }] },
      });
      for (const ns of [vc.hostNamespace, VGATE_NS]) {
        const svc = await rig.admin.get<Obj>({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: vc.name, namespace: ns },
        });
        ownerUid[ns] = metaOf(svc!).uid;
      }
      // vgate sync runs with exactly the rights manifests/sync/ gives it in each cluster.
      for (const o of manifestObjects("manifests/sync/rbac-host.yaml", (text) =>
        text.replaceAll(MANIFEST_VCLUSTER.namespace, VGATE_NS),
      )) {
        await rig.admin.apply(o);
      }
      for (const o of manifestObjects("manifests/sync/rbac-virtual.yaml", (text) => text)) {
        await virtual().apply(o);
      }
      const hostToken = await rig.admin.request<{ status?: { token?: string } }>(
        "POST",
        `/api/v1/namespaces/${VGATE_NS}/serviceaccounts/${SYNC_SERVICE_ACCOUNT}/token`,
        { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
      );
      assert.equal(hostToken.status, 201, "a token of vgate sync's host ServiceAccount");
      const hostKubeconfig = tokenKubeconfig(rig, hostToken.body.status!.token!, "vgate-sync");
      const virtualKubeconfig = await vc.virtual.tokenKubeconfig(
        join(dir, "virtual.kubeconfig"),
        await vc.virtual.serviceAccountToken("kube-system", SYNC_SERVICE_ACCOUNT),
        "vgate-sync",
      );
      const [probe, metrics] = [await freePort(), await freePort()];
      sync = supervise(
        "vgate sync",
        VGATE,
        [
          "sync",
          `--config=${config}`,
          `--virtual-kubeconfig=${virtualKubeconfig}`,
          `--host-kubeconfig=${hostKubeconfig}`,
          `--vcluster-name=${vc.name}`,
          `--vcluster-namespace=${VGATE_NS}`,
          "--leader-elect=false",
          `--health-probe-bind-address=127.0.0.1:${probe}`,
          `--metrics-bind-address=127.0.0.1:${metrics}`,
        ],
        join(dir, "vgate-sync.log"),
        { env: { ...process.env, KUBECONFIG: "" } },
      );
      await until(
        async () => (await httpStatus(`http://127.0.0.1:${probe}/readyz`)) === 200,
        "vgate sync ready",
        60_000,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await sync.logTail(30)}`);
      });
    });
    const virtual = () => vc.virtual.admin;

    after(async () => {
      await sync?.stop();
      await vc?.stop();
      await rig?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const endpointsIn = (ns: string) =>
      list(rig.admin, `/api/v1/namespaces/${ns}/endpoints`, "Endpoints");

    async function ensureNamespaces(entries: Entry[]): Promise<void> {
      for (const ns of new Set(entries.map((e) => e.namespace))) {
        if (namespaces.has(ns)) continue;
        await virtual().create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
        namespaces.add(ns);
      }
    }

    /**
     * Creates each entry's Service and waits until each has settled: it has its host copy's
     * ClusterIP (the syncer recreated it for that). Answers the settled Services' uids.
     */
    async function settledServices(entries: Entry[]): Promise<Map<string, string>> {
      const makeService = async (e: Entry) => {
        const res = await virtual().request("POST", `/api/v1/namespaces/${e.namespace}/services`, {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: e.name, namespace: e.namespace },
          spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
        });
        // A Service made before (by an earlier test) is reused.
        assert.ok(res.status === 201 || res.status === 409, JSON.stringify(res.body));
      };
      await pooled(entries, 4, makeService);
      const uids = new Map<string, string>();
      const missingSince = new Map<string, number>();
      /** Each entry's ClusterIPs when last read, for the failure's message. */
      const last = new Map<string, string>();
      await until(
        async () => {
          const hostIps = new Map(
            (
              await list(rig.admin, `/api/v1/namespaces/${vc.hostNamespace}/services`, "Service")
            ).map((s) => [sourceKey(s), (s["spec"] as { clusterIP?: string }).clusterIP]),
          );
          const present = new Set<string>();
          const virtualIps = new Map<string, string>();
          for (const ns of new Set(entries.map((e) => e.namespace))) {
            for (const s of await list(virtual(), `/api/v1/namespaces/${ns}/services`, "Service")) {
              const key = keyOf(metaOf(s));
              present.add(key);
              const ip = (s["spec"] as { clusterIP?: string }).clusterIP;
              virtualIps.set(key, ip ?? "none");
              if (ip && hostIps.get(key) === ip) uids.set(key, metaOf(s).uid);
            }
          }
          // vCluster's syncer gives a virtual Service its host copy's ClusterIP by deleting it and
          // creating it again (recreateService in its services syncer), and does not retry a
          // create that fails: another virtual Service, not yet settled, may still hold that
          // address in the virtual cluster. The Service is then gone, and the syncer deletes its
          // host copy. A user would make it again; so does this test, once it has stayed away for
          // 5 s (the syncer's own delete-then-create takes milliseconds).
          for (const e of entries) {
            const key = keyOf(e);
            last.set(
              key,
              `virtual ${virtualIps.get(key) ?? "absent"}, host ${hostIps.get(key) ?? "absent"}`,
            );
            if (present.has(key)) {
              missingSince.delete(key);
              continue;
            }
            const since = missingSince.get(key) ?? Date.now();
            missingSince.set(key, since);
            if (Date.now() - since >= 5_000) {
              console.log(`      (vCluster's syncer lost Service ${key}; made again)`);
              missingSince.delete(key);
              await makeService(e);
            }
          }
          return entries.every((e) => uids.has(keyOf(e)));
        },
        "every virtual Service has its host copy's ClusterIP",
        120_000,
      ).catch((err: Error) => {
        const unsettled = entries
          .filter((e) => !uids.has(keyOf(e)))
          .map((e) => `${keyOf(e)} (${last.get(keyOf(e)) ?? "not read"})`);
        throw new Error(`${err.message}; unsettled: ${unsettled.join(", ")}`);
      });
      return uids;
    }

    function endpointsOf(e: Entry, serviceUid: string): Obj {
      const metadata: Record<string, unknown> = { name: e.name, namespace: e.namespace };
      if (e.generateName) metadata["generateName"] = e.generateName;
      if (e.labels) metadata["labels"] = e.labels;
      if (e.annotations) metadata["annotations"] = e.annotations;
      if (e.finalizers) metadata["finalizers"] = e.finalizers;
      if (e.ownedByService) {
        metadata["ownerReferences"] = [
          {
            apiVersion: "v1",
            kind: "Service",
            name: e.name,
            uid: serviceUid,
            controller: e.ownedByService.controller,
          },
        ];
      }
      return {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata,
        ...(e.subsets ? { subsets: e.subsets } : {}),
      } as Obj;
    }

    /**
     * Syncs `entries` (Services first, then Endpoints) and compares, for each one vCluster syncs,
     * its copy with `vgate translate`'s output and vgate sync's copy. Answers every difference.
     */
    async function syncAndCompare(entries: Entry[]): Promise<string[]> {
      await ensureNamespaces(entries);
      const serviceUids = await settledServices(entries);
      const created = await pooled(entries, 4, (e) =>
        virtual().create(endpointsOf(e, serviceUids.get(keyOf(e))!)),
      );
      const virtuals = new Map(created.map((v) => [keyOf(metaOf(v as Obj)), v as Obj]));
      const synced = entries.filter((e) => !e.notSynced);
      const copies = { syncer: new Map<string, Obj>(), vgate: new Map<string, Obj>() };
      await until(
        async () => {
          for (const [side, ns] of [
            ["syncer", vc.hostNamespace],
            ["vgate", VGATE_NS],
          ] as const) {
            for (const host of await endpointsIn(ns)) {
              const key = sourceKey(host);
              if (key !== null) copies[side].set(key, host);
            }
          }
          return synced.every((e) => copies.syncer.has(keyOf(e)) && copies.vgate.has(keyOf(e)));
        },
        "the host copies of the syncer and of vgate sync",
        120_000,
      ).catch((err: Error) => {
        const missing = synced
          .filter((e) => !copies.syncer.has(keyOf(e)) || !copies.vgate.has(keyOf(e)))
          .map(
            (e) =>
              `${keyOf(e)} (syncer: ${copies.syncer.has(keyOf(e))}, vgate: ${copies.vgate.has(keyOf(e))})`,
          );
        throw new Error(`${err.message}; missing: ${missing.join(", ")}`);
      });
      const problems = await pooled(entries, 2, async (e) => {
        const key = keyOf(e);
        const v = virtuals.get(key)!;
        const translated = await translate(
          v,
          config,
          ownerUid[vc.hostNamespace]!,
          vc.hostNamespace,
        );
        if (e.notSynced) {
          return translated.code === 1 && /creates no host object/.test(translated.stderr)
            ? []
            : [
                `${key} (${e.why}): vgate translate printed a host object for it: ${translated.stderr}`,
              ];
        }
        assert.equal(translated.code, 0, `${key}: ${translated.stderr}`);
        const theirs = withoutServerFields(copies.syncer.get(key)!);
        const printed = JSON.parse(translated.stdout) as Obj;
        const ours = asInSyncerNamespace(copies.vgate.get(key)!, {
          namespace: vc.hostNamespace,
          ownerUid: ownerUid[vc.hostNamespace]!,
        });
        // vgate's own owner Service is the one in its namespace.
        for (const ref of metaOf(copies.vgate.get(key)!).ownerReferences ?? []) {
          assert.equal(ref.uid, ownerUid[VGATE_NS], `${key}: vgate sync's owner reference`);
        }
        compared++;
        return [
          ...differences(theirs, printed).map((d) => `${key} (${e.why}) translate: ${d}`),
          ...differences(withoutVirtualSnapshot(theirs), ours).map(
            (d) => `${key} (${e.why}) sync: ${d}`,
          ),
        ];
      });
      return problems.flat();
    }

    it("the fixed corpus: vgate translate prints and vgate sync writes the syncer's host object", async () => {
      const diffs = await syncAndCompare(fixedCorpus());
      assert.deepEqual(diffs, []);
    });

    it(`generated Endpoints (fast-check, ${RUNS} runs of a batch): the same, field by field`, async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(entryArbitrary, { minLength: 5, maxLength: 8, selector: keyOf }),
          async (generated) => {
            // Each run writes objects of its own: its namespaces carry the run's number.
            run++;
            const entries = generated.map((e) => ({ ...e, namespace: `${e.namespace}-p${run}` }));
            const diffs = await syncAndCompare(entries);
            assert.deepEqual(diffs, [], JSON.stringify(entries).slice(0, 4000));
          },
        ),
        { numRuns: RUNS, endOnFailure: true },
      );
    });

    it("an object vCluster leaves to another controller gets no host copy from either", async () => {
      // By now the syncer and vgate sync have made every later object's copy.
      const notSynced = fixedCorpus()
        .filter((e) => e.notSynced)
        .map(keyOf);
      assert.ok(notSynced.length > 0);
      for (const ns of [vc.hostNamespace, VGATE_NS]) {
        const sources = (await endpointsIn(ns)).map(sourceKey);
        assert.deepEqual(
          notSynced.filter((k) => sources.includes(k)),
          [],
          `host copies in ${ns}`,
        );
      }
    });

    it("Endpoints made before their Service settled go with the Service vCluster recreates, and so do their copies", async () => {
      const entry: Entry = {
        why: "made at once with its Service",
        namespace: "early",
        name: "early",
        subsets: [{ addresses: [{ ip: "10.200.11.1" }], ports: [{ name: "http", port: 80 }] }],
      };
      await ensureNamespaces([entry]);
      let outcome: string;
      let uid = "";
      const copiesOf = async (ns: string) =>
        (await endpointsIn(ns)).filter(
          (h) => metaOf(h).annotations?.["vcluster.loft.sh/object-uid"] === uid,
        ).length;
      const ref = {
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: entry.name, namespace: entry.namespace },
      };
      /** Whether the first object is gone (absent, or another one by the same name). */
      const gone = async () => {
        const now = await virtual().get<Obj>(ref);
        return now === null || metaOf(now).uid !== uid;
      };
      await virtual().create({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: entry.name, namespace: entry.namespace },
        spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
      });
      uid = metaOf((await virtual().create(endpointsOf(entry, ""))) as Obj).uid;
      await settledServices([entry]);
      // The virtual cluster's endpoints controller deletes a deleted Service's Endpoints, unless
      // the recreated Service is already in its cache when it looks: either way, the host copies
      // (the syncer's and vgate sync's) follow what the virtual cluster has.
      await until(
        async () => {
          const copies = [await copiesOf(vc.hostNamespace), await copiesOf(VGATE_NS)];
          if (await gone()) {
            outcome = "deleted with the old Service; no copy is left";
            return copies[0] === 0 && copies[1] === 0;
          }
          outcome = "kept; both copies made";
          return copies[0] === 1 && copies[1] === 1;
        },
        "the host copies follow the virtual Endpoints",
        120_000,
      );
      console.log(`      (the Endpoints made at once were ${outcome!})`);
      if (!(await gone())) {
        await virtual().delete(ref);
        await until(
          async () => (await copiesOf(vc.hostNamespace)) + (await copiesOf(VGATE_NS)) === 0,
          "the copies of the deleted Endpoints gone",
          120_000,
        );
      }
      // Made again now that the Service has settled, it stays, and all three agree; by then both
      // controllers have seen the first object's deletion, and no copy of it came back.
      assert.deepEqual(await syncAndCompare([entry]), []);
      assert.deepEqual([await copiesOf(vc.hostNamespace), await copiesOf(VGATE_NS)], [0, 0]);
      assert.ok(await virtual().get(ref), "the Endpoints made after the Service settled stay");
      console.log(`      (${compared} objects compared field by field, three ways)`);
    });

    it("EndpointSlices: vgate sync writes the syncer's host slice, but for its manager label; a long Service name", async () => {
      // The syncer's copy as it created it: the host's mirroring controller adopts it (it carries
      // the virtual mirroring controller's label) and rewrites it at once, so a later read would
      // show that controller's writes too.
      const firstSeen = new Map<string, Obj>();
      const watch = rig.admin.watch(
        `/apis/discovery.k8s.io/v1/namespaces/${vc.hostNamespace}/endpointslices?watch=true`,
        (e) => {
          const o = e.object as Obj;
          const key = sourceKey(o);
          if (e.type === "ADDED" && key !== null && !firstSeen.has(key)) firstSeen.set(key, o);
        },
      );
      try {
        const long = "s".repeat(56);
        const entries = ["slc", long].map((name) => ({
          why: "a selector-less Service's slice",
          namespace: "slices",
          name,
        })) as Entry[];
        await ensureNamespaces(entries);
        await settledServices(entries);
        for (const e of entries) {
          await virtual().create({
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: e.name, namespace: e.namespace, labels: { app: "slc" } },
            subsets: [
              {
                addresses: [
                  {
                    ip: "10.200.21.1",
                    targetRef: {
                      kind: "Pod",
                      name: "slc-0",
                      namespace: e.namespace,
                      uid: "u-slc-0",
                    },
                  },
                ],
                ports: [{ name: "http", port: 80, protocol: "TCP" }],
              },
            ],
          } as Obj);
        }
        const slicesIn = async (ns: string) =>
          (
            await list(
              rig.admin,
              `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
              "EndpointSlice",
            )
          ).map((o) => ({ ...o, apiVersion: "discovery.k8s.io/v1" }));
        const ofService = (o: Obj, name: string) =>
          (metaOf(o).annotations?.[OBJECT_NAME] ?? "").startsWith(`${name}-`) &&
          metaOf(o).annotations?.[OBJECT_NAMESPACE] === "slices";
        let ours: Obj[] = [];
        let theirs: Obj | undefined;
        await until(
          async () => {
            ours = (await slicesIn(VGATE_NS)).filter((o) =>
              entries.some((e) => ofService(o, e.name)),
            );
            theirs = [...firstSeen.values()].find((o) => ofService(o, "slc"));
            return ours.length === 2 && theirs !== undefined;
          },
          "vgate sync's two slices and the syncer's slice of slc",
          120_000,
        );
        const short = ours.find((o) => ofService(o, "slc"))!;
        const longSlice = ours.find((o) => ofService(o, long))!;
        // The one deliberate difference (KND-82): vgate sync's slices name it as their manager.
        assert.equal(metaOf(short).labels?.[SLICE_MANAGED_BY], "vgate-sync.vgate.loft.sh");
        const mine = asInSyncerNamespace(short, {
          namespace: vc.hostNamespace,
          ownerUid: ownerUid[vc.hostNamespace]!,
        });
        metaOf(mine).labels![SLICE_MANAGED_BY] = metaOf(theirs!).labels?.[SLICE_MANAGED_BY] ?? "";
        for (const endpoint of (mine["endpoints"] as { targetRef?: Record<string, string> }[]) ??
          []) {
          if (endpoint.targetRef?.["namespace"] === VGATE_NS)
            endpoint.targetRef["namespace"] = vc.hostNamespace;
        }
        assert.deepEqual(differences(withoutServerFields(theirs!), mine), []);
        // A Service whose host name is hashed: vgate's label names the host Service as it is; the
        // syncer's would be the unhashed name, longer than a label value may be.
        // The host Service's name as the syncer made it (hashed: over 63 characters).
        const hostService = metaOf(
          (
            await list(rig.admin, `/api/v1/namespaces/${vc.hostNamespace}/services`, "Service")
          ).find((o) => sourceKey(o) === `slices/${long}`)!,
        ).name;
        assert.equal(metaOf(longSlice).labels?.["kubernetes.io/service-name"], hostService);
        assert.ok(`${long}-x-slices-x-${vc.name}`.length > 63);
        let log = "";
        await until(
          async () => /must be no more than 63/.test((log = await vc.syncer.logTail(400))),
          "the syncer refused by the API server for the long Service's slice",
          60_000,
        ).catch(() => undefined);
        const refused = /must be no more than 63/.test(log);
        const syncerLong = [...firstSeen.values()].find((o) => ofService(o, long));
        console.log(
          `      (long Service name: the syncer's slice ${syncerLong ? `was written with service-name ${JSON.stringify(metaOf(syncerLong).labels?.["kubernetes.io/service-name"])}` : "was not written"}; its log ${refused ? "shows" : "does not show"} the 63-character refusal)`,
        );
        assert.equal(syncerLong, undefined, "the syncer writes no slice for the long Service");
      } finally {
        watch.stop();
      }
    });
  },
);
