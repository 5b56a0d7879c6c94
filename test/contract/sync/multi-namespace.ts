// Multi-namespace mode (sync.toHost.namespaces.enabled with mappings.byName): the host copy of
// virtual Endpoints ns/name is ns's mapped host namespace / the same name, referenced objects are
// copied there under their own names, and a namespace no mapping names is synced as in
// single-namespace mode (translate-endpoints.ts hostNameAndNamespace). The controller here runs as
// a vCluster of its own, with the host rights of manifests/sync/rbac-host-multi-namespace.yaml and
// nothing more (the suite's last test reads its log for requests RBAC refused). The host
// namespaces are made by the test with the labels vCluster gives the namespaces it creates
// (docs/reference.md#vcluster-namespace-ownership): vgate sync neither creates nor labels them.

import assert from "node:assert/strict";
import { mayDo } from "../../support/kube/rbac.js";
import { SYNC_SERVICE_ACCOUNT, type SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import {
  assertHostIs,
  SKIP_MIRROR_LABEL,
  BOOKKEEPING,
  LEADER_ARGS,
  MARKER_LABEL,
  NAMESPACE_LABEL,
  ref,
  type Address,
  type Endpoints,
  type ExpectedHost,
  type Obj,
  type SyncContext,
} from "./sync-context.js";

/** A vCluster apart from the suite's: its own host identity, Lease and managed-by label. */
const VC = { name: "multi-vc", namespace: "vcluster-multi-vc" };
/** What vCluster's namespace syncer puts on a host namespace it creates for VC. */
export const ownedBy = (vc: { name: string; namespace: string }): Record<string, string> => ({
  "vcluster.loft.sh/vcluster-name": vc.name,
  "vcluster.loft.sh/vcluster-namespace": vc.namespace,
  "vcluster.loft.sh/managed-by": `${vc.namespace}-x-${vc.name}`,
});
const RBAC_FILE = "manifests/sync/rbac-host-multi-namespace.yaml";

type Data = Obj & { data?: Record<string, string> };

interface Namespaces {
  /** Mapped by name to `host-<name>`, which the test creates. */
  mapped: string;
  /** Matched by the pattern "mnp-*" → "hp-*"; the host namespace is created. */
  pattern: string;
  /** Mapped by name to a host namespace nobody creates. */
  missing: string;
  /** Named by no mapping. */
  unmapped: string;
}

const hostOf = (ns: Namespaces) => ({
  mapped: `host-${ns.mapped}`,
  pattern: `hp-${ns.pattern.slice("mnp-".length)}`,
  missing: `gone-${ns.missing}`,
});

function config(ns: Namespaces): string {
  const host = hostOf(ns);
  return `sync:
  toHost:
    namespaces:
      enabled: true
      mappings:
        byName:
          ${JSON.stringify(ns.mapped)}: ${JSON.stringify(host.mapped)}
          ${JSON.stringify(ns.missing)}: ${JSON.stringify(host.missing)}
          "mnp-*": "hp-*"
    endpoints:
      enabled: true
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: value.toUpperCase()
          reverseExpression: value.toLowerCase()
        - path: metadata.annotations["example.com/secret"]
          reference:
            apiVersion: v1
            kind: Secret
`;
}

/**
 * The host object for `virtual` in a mapped namespace, written out from the rule: the same name in
 * `hostNs`, vCluster's bookkeeping naming both, the scoping labels, and Pod targetRefs of the
 * same virtual namespace moved to `hostNs` under their own names.
 */
function expectedMapped(
  virtual: Endpoints,
  hostNs: string,
  annotations: Record<string, string>,
): ExpectedHost {
  const { name, namespace, uid } = virtual.metadata;
  const copied = Object.keys(annotations).sort();
  const address = (a: Address): Address => {
    if (a.targetRef?.kind !== "Pod") return a;
    const targetRef = { ...a.targetRef, namespace: hostNs };
    delete targetRef.uid;
    return { ...a, targetRef };
  };
  return {
    name,
    namespace: hostNs,
    annotations: {
      ...annotations,
      ...(copied.length > 0 && { [BOOKKEEPING.managedAnnotations]: copied.join("\n") }),
      [BOOKKEEPING.name]: name,
      [BOOKKEEPING.namespace]: namespace,
      [BOOKKEEPING.uid]: uid ?? "",
      [BOOKKEEPING.kind]: "/v1, Kind=Endpoints",
      [BOOKKEEPING.hostName]: name,
      [BOOKKEEPING.hostNamespace]: hostNs,
    },
    labels: {
      ...virtual.metadata.labels,
      [MARKER_LABEL]: VC.name,
      [NAMESPACE_LABEL]: namespace,
      [SKIP_MIRROR_LABEL]: "true",
    },
    subsets: (virtual.subsets ?? []).map((s) => ({
      ...s,
      ...(s.addresses && { addresses: s.addresses.map(address) }),
      ...(s.notReadyAddresses && { notReadyAddresses: s.notReadyAddresses.map(address) }),
    })),
  };
}

export function multiNamespaceTests(ctx: SyncContext): void {
  let proc: SyncProcess | undefined;
  let ns: Namespaces;
  let host: ReturnType<typeof hostOf>;
  /** Virtual objects to delete at the end, so later controllers have nothing of this file's. */
  const made: Obj[] = [];

  const getHostEndpoints = (namespace: string, name: string) =>
    ctx.host.get<Endpoints>(ref(namespace, name));
  const waitForHostEndpoints = async (
    namespace: string,
    name: string,
    check: (e: Endpoints) => boolean = () => true,
  ): Promise<Endpoints> => {
    let last: Endpoints | null = null;
    await until(
      async () => (last = await getHostEndpoints(namespace, name)) !== null && check(last),
      `host Endpoints ${namespace}/${name} (last seen: ${JSON.stringify(last)})`,
      30_000,
    );
    return last!;
  };
  const syncable = async (namespace: string, name: string, annotations = {}) => {
    made.push(ref(namespace, name), { ...ref(namespace, name), kind: "Service" });
    return ctx.syncable(namespace, name, {
      annotations,
      labels: { app: name },
      ips: ["10.2.0.1", "10.2.0.2"],
    });
  };

  before(async () => {
    await ctx.stopMain();
    ns = {
      mapped: await ctx.namespace("mna"),
      pattern: await ctx.namespace("mnp"),
      missing: await ctx.namespace("mnm"),
      unmapped: await ctx.namespace("mnu"),
    };
    host = hostOf(ns);
    for (const name of [host.mapped, host.pattern]) {
      await ctx.host.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: ownedBy(VC) },
      });
    }
    const kubeconfig = await ctx.rig.hostIdentity(RBAC_FILE, VC);
    proc = await ctx.rig.startSync({
      name: "multi-namespace",
      config: await ctx.rig.writeConfig("multi-namespace.yaml", config(ns)),
      args: LEADER_ARGS,
      host: { kubeconfig, vcluster: VC },
    });
    await proc.waitReady();
  });

  after(async () => {
    // Deleted while the controller runs, so that it deletes their host copies too.
    for (const obj of made) await ctx.virtual.delete(obj);
    await proc?.stop();
  });

  it(`grants ${RBAC_FILE} Endpoints, Secrets and ConfigMaps in every namespace, the Lease in its own, a watch of namespaces`, async () => {
    const may = (attrs: Record<string, string>) =>
      mayDo(ctx.host, {
        user: `system:serviceaccount:${VC.namespace}:${SYNC_SERVICE_ACCOUNT}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${VC.namespace}`],
        resourceAttributes: { group: "", ...attrs },
      });
    const lease = { verb: "update", resource: "leases", group: "coordination.k8s.io" };
    assert.equal(await may({ verb: "watch", resource: "endpoints" }), true, "cluster-wide watch");
    assert.equal(await may({ verb: "create", resource: "endpoints", namespace: "any" }), true);
    assert.equal(await may({ verb: "update", resource: "secrets", namespace: "any" }), true);
    assert.equal(await may({ verb: "delete", resource: "configmaps", namespace: "any" }), true);
    assert.equal(await may({ ...lease, namespace: VC.namespace }), true);
    assert.equal(await may({ ...lease, namespace: "any" }), false, "the Lease only in its own");
    assert.equal(await may({ verb: "create", resource: "namespaces" }), false);
    assert.equal(await may({ verb: "watch", resource: "namespaces" }), true, "their labels");
    assert.equal(await may({ verb: "list", resource: "namespaces" }), true);
    assert.equal(await may({ verb: "get", resource: "namespaces" }), false);
    assert.equal(await may({ verb: "update", resource: "namespaces" }), false, "never labels");
    assert.equal(await may({ verb: "patch", resource: "namespaces" }), false);
    assert.equal(await may({ verb: "create", resource: "pods", namespace: "any" }), false);
    assert.equal(await may({ verb: "update", resource: "services", namespace: "any" }), false);
  });

  it("syncs Endpoints of a mapped namespace to the same name in the host namespace: create, update, delete", async () => {
    const created = await syncable(ns.mapped, "db", { "example.com/owner": "ann" });
    let copy = await waitForHostEndpoints(host.mapped, "db");
    assertHostIs(copy, expectedMapped(created, host.mapped, { "example.com/owner": "ANN" }));
    const updated = await ctx.updateVirtual(ns.mapped, "db", (e) => {
      e.metadata.annotations = { "example.com/owner": "bo" };
      e.subsets![0]!.addresses = e.subsets![0]!.addresses!.slice(1);
    });
    copy = await waitForHostEndpoints(
      host.mapped,
      "db",
      (h) => h.metadata.annotations?.["example.com/owner"] === "BO",
    );
    assertHostIs(copy, expectedMapped(updated, host.mapped, { "example.com/owner": "BO" }));
    const longName = `db-x-${ns.mapped}-x-${VC.name}`;
    assert.equal(await getHostEndpoints(VC.namespace, longName), null, "no single-namespace copy");
    await ctx.virtual.delete(ref(ns.mapped, "db"));
    await until(
      async () => (await getHostEndpoints(host.mapped, "db")) === null,
      `host copy ${host.mapped}/db deleted`,
      30_000,
    );
  });

  it("maps a namespace by a pattern mapping ('mnp-*' → 'hp-*')", async () => {
    const created = await syncable(ns.pattern, "web");
    const copy = await waitForHostEndpoints(host.pattern, "web");
    assertHostIs(copy, expectedMapped(created, host.pattern, {}));
  });

  it("lets an annotation edited on the host copy flow back to the virtual Endpoints", async () => {
    await syncable(ns.mapped, "back", { "example.com/owner": "cy" });
    await waitForHostEndpoints(host.mapped, "back");
    await updateHostEndpoints(ctx, host.mapped, "back", (e) => {
      e.metadata.annotations = { ...e.metadata.annotations, "example.com/owner": "ZED" };
    });
    await ctx.waitForVirtual(
      ns.mapped,
      "back",
      (v) => v.metadata.annotations?.["example.com/owner"] === "zed",
      "the host edit, reversed, on the virtual Endpoints",
    );
  });

  it("copies a referenced Secret into the mapped namespace under its own name; the copy follows it", async () => {
    const secret: Data = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "creds", namespace: ns.mapped },
      data: { password: Buffer.from("one").toString("base64") },
    };
    await ctx.virtual.create(secret);
    made.push(secret);
    await syncable(ns.mapped, "uses-creds", { "example.com/secret": "creds" });
    const copy = await waitForHostEndpoints(host.mapped, "uses-creds");
    assert.equal(copy.metadata.annotations?.["example.com/secret"], "creds", "the name stays");
    const hostSecret = { ...secret, metadata: { name: "creds", namespace: host.mapped } };
    const read = () => ctx.host.get<Data>(hostSecret);
    await until(async () => (await read()) !== null, `Secret ${host.mapped}/creds on the host`);
    const first = (await read())!;
    assert.deepEqual(first.data, secret.data);
    const annotations = (first.metadata["annotations"] ?? {}) as Record<string, string>;
    assert.equal(annotations[BOOKKEEPING.name], "creds");
    assert.equal(annotations[BOOKKEEPING.namespace], ns.mapped);
    // Only the Secret changes: the copy follows it without the Endpoints changing.
    const two = { password: Buffer.from("two").toString("base64") };
    await ctx.virtual.apply({ ...secret, data: two });
    await until(
      async () => (await read())?.data?.["password"] === two.password,
      "the host copy of the changed Secret",
    );
  });

  it("syncs Endpoints of a namespace no mapping names as in single-namespace mode, into --vcluster-namespace", async () => {
    await syncable(ns.unmapped, "legacy");
    const hostName = `legacy-x-${ns.unmapped}-x-${VC.name}`;
    const copy = await waitForHostEndpoints(VC.namespace, hostName);
    assert.equal(copy.metadata.annotations?.[BOOKKEEPING.hostName], hostName);
    assert.equal(copy.metadata.annotations?.[BOOKKEEPING.hostNamespace], VC.namespace);
    assert.equal(copy.metadata.annotations?.[BOOKKEEPING.namespace], ns.unmapped);
    assert.equal(copy.metadata.labels?.[MARKER_LABEL], VC.name);
  });

  it("is not ready with the single-namespace rbac-host.yaml: the watch of every namespace is forbidden", async () => {
    // The suite's own host identity has rbac-host.yaml's Role only.
    const single = await ctx.rig.startSync({
      name: "multi-namespace-single-rbac",
      config: await ctx.rig.writeConfig("multi-namespace.yaml", config(ns)),
      args: LEADER_ARGS,
    });
    ctx.exemptFromRbacCheck(single);
    try {
      await until(
        async () => /endpoints.*\b403\b|\b403\b.*endpoints/i.test(await single.log()),
        "a refused LIST of Endpoints in every namespace in the log",
      );
      const ready = await single.get("/readyz");
      assert.notEqual(ready.status, 200, "not ready");
      assert.match(ready.text, /host endpoints/);
    } finally {
      await single.stop();
    }
  });

  it("records a SyncError Event when the mapped host namespace does not exist", async () => {
    await syncable(ns.missing, "nowhere");
    const event = await ctx.waitForSyncError(ns.missing, "nowhere");
    assert.match(
      event.message ?? "",
      new RegExp(
        `host namespace "${host.missing}" does not belong to vCluster "${VC.name}": no namespace of that name carries the labels`,
      ),
    );
    assert.match(event.message ?? "", /vgate sync neither creates nor labels namespaces/);
    assert.equal(await getHostEndpoints(host.missing, "nowhere"), null);
  });
}

async function updateHostEndpoints(
  ctx: SyncContext,
  namespace: string,
  name: string,
  change: (e: Endpoints) => void,
): Promise<void> {
  await until(async () => {
    const live = await ctx.host.get<Endpoints>(ref(namespace, name));
    assert.ok(live, `host Endpoints ${namespace}/${name}`);
    change(live);
    const path = `/api/v1/namespaces/${namespace}/endpoints/${name}`;
    const res = await ctx.host.request("PUT", path, live);
    if (res.status !== 200 && res.status !== 409) assert.fail(`PUT ${path}: ${res.status}`);
    return res.status === 200;
  }, `update host Endpoints ${namespace}/${name}`);
}
