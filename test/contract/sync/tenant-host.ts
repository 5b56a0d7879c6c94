// Tenant → host (docs/decisions.md EPS-19, EPS-21), tried as a tenant would on the two real
// kube-apiservers: everything a tenant controls (virtual namespaces, names, objects, annotations)
// with a permissive namespace mapping, against a host whose other teams' namespaces sit next to
// the vCluster's. Each attack must fail (no host write, a SyncError Event that names the namespace
// or the refused Secret), and the legitimate use next to it must still work.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import { ownedBy } from "./multi-namespace.js";
import {
  BOOKKEEPING,
  LEADER_ARGS,
  ref,
  sleep,
  type Endpoints,
  type KubeEvent,
  type Obj,
  type SyncContext,
} from "./sync-context.js";

type Data = Obj & { type?: string; data?: Record<string, string> };
type Meta = {
  name: string;
  namespace?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ownerReferences?: unknown;
  finalizers?: unknown;
  resourceVersion?: string;
};

const RBAC_FILE = "manifests/sync/rbac-host-multi-namespace.yaml";
const b64 = (text: string) => Buffer.from(text).toString("base64");

function secret(
  namespace: string,
  name: string,
  type: string,
  extra: Partial<Meta> = {},
  data: Record<string, string> = { v: b64(name) },
): Data {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace, ...extra }, type, data };
}

const secretAt = (namespace: string, name: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
});

/** Waits for a SyncError Event on the virtual object whose message matches `pattern`. */
async function syncErrorMatching(
  ctx: SyncContext,
  ns: string,
  name: string,
  pattern: RegExp,
): Promise<KubeEvent> {
  let seen: KubeEvent[] = [];
  await until(
    async () => (seen = await ctx.syncErrors(ns, name)).some((e) => pattern.test(e.message ?? "")),
    `a SyncError Event on ${ns}/${name} matching ${pattern} (seen: ${JSON.stringify(seen.map((e) => e.message))})`,
    30_000,
  );
  return seen.find((e) => pattern.test(e.message ?? ""))!;
}

export function tenantHostTests(ctx: SyncContext): void {
  describe("reference copies carry data, not credentials", () => secretTypeTests(ctx));
  describe("writes only where the vCluster is owner (multi-namespace mode)", () =>
    ownershipTests(ctx));
}

function secretTypeTests(ctx: SyncContext): void {
  before(() => ctx.main());

  const hostSecret = (ns: string, name: string) =>
    ctx.host.get<Data>(secretAt(ctx.vc.namespace, ctx.shortName(name, ns)));

  it("never copies a Secret Kubernetes fills with a credential, nor one of a type not on the list", async () => {
    const ns = await ctx.namespace("st");
    // A tenant's token request: the host's token controller would fill this Secret with a token of
    // the vCluster's own service account on the host.
    const planted = [
      secret(ns, "sa-tok", "kubernetes.io/service-account-token", {
        annotations: { "kubernetes.io/service-account.name": `vc-${ctx.vc.name}` },
      }),
      secret(
        ns,
        "bootstrap-token-abcdef",
        "bootstrap.kubernetes.io/token",
        {},
        {
          "token-id": b64("abcdef"),
          "token-secret": b64("0123456789abcdef"),
          "usage-bootstrap-authentication": b64("true"),
        },
      ),
      secret(ns, "odd", "example.com/not-listed"),
    ];
    for (const s of planted) {
      await ctx.virtual.create(s);
      const name = `uses-${s.metadata.name}`.slice(0, 40);
      await ctx.syncable(ns, name, { annotations: { "example.com/secret": s.metadata.name! } });
      const event = await syncErrorMatching(ctx, ns, name, /not one vgate sync copies/);
      assert.match(
        event.message ?? "",
        new RegExp(
          `^refused to create or update host Secret "${ctx.vc.namespace}/${ctx.shortName(s.metadata.name!, ns)}" \\(copy of virtual Secret ${ns}/${s.metadata.name}\\): its type "${s.type!.replaceAll(".", "\\.")}" is not one vgate sync copies`,
        ),
      );
      assert.equal(await hostSecret(ns, s.metadata.name!), null, `${s.type} not on the host`);
      assert.equal(await ctx.getHost(ns, name), null, "the plan that needed it wrote nothing");
    }
  });

  it("copies an Opaque and a TLS Secret, without owners, finalizers or service-account annotations", async () => {
    const ns = await ctx.namespace("st");
    const owner = await ctx.virtual.create<Obj>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "owner", namespace: ns },
      data: {},
    });
    const opaque = secret(ns, "plain", "Opaque", {
      annotations: {
        note: "kept",
        // Harmless on an Opaque Secret, but Kubernetes' own: never copied.
        "kubernetes.io/service-account.name": "default",
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: String(owner.metadata["uid"]) },
      ],
      finalizers: ["example.com/keep"],
    });
    const tls = secret(
      ns,
      "cert",
      "kubernetes.io/tls",
      {},
      {
        "tls.crt": b64("crt"),
        "tls.key": b64("key"),
      },
    );
    for (const s of [opaque, tls]) await ctx.virtual.create(s);
    await ctx.syncable(ns, "uses-plain", { annotations: { "example.com/secret": "plain" } });
    await ctx.syncable(ns, "uses-cert", { annotations: { "example.com/secret": "cert" } });
    let copies: (Data | null)[] = [];
    await until(
      async () =>
        (copies = [await hostSecret(ns, "plain"), await hostSecret(ns, "cert")]).every(Boolean),
      "both Secrets copied",
    );
    const [plain, cert] = copies as [Data, Data];
    assert.deepEqual(plain.data, opaque.data);
    assert.equal(plain.type, "Opaque");
    assert.deepEqual(cert.data, tls.data);
    assert.equal(cert.type, "kubernetes.io/tls");
    const meta = plain.metadata as Meta;
    assert.equal(meta.ownerReferences, undefined, "no ownerReferences");
    assert.equal(meta.finalizers, undefined, "no finalizers");
    assert.equal(meta.annotations?.["note"], "kept");
    assert.equal(meta.annotations?.["kubernetes.io/service-account.name"], undefined);
    await ctx.virtual.delete(secretAt(ns, "plain"), { force: true });
  });

  it("never imports a host service-account token into the virtual cluster; an Opaque one still is", async () => {
    const ns = await ctx.namespace("st");
    await ctx.syncable(ns, "imp", {});
    await ctx.waitForHost(ns, "imp");
    await ctx.host.create(
      secret(ctx.vc.namespace, `sa-tok-${ns}`, "kubernetes.io/service-account-token", {
        annotations: { "kubernetes.io/service-account.name": "vgate-sync" },
      }),
    );
    await ctx.updateHost(ns, "imp", (h) => {
      h.metadata.annotations!["example.com/secret"] = `sa-tok-${ns}`;
    });
    const event = await syncErrorMatching(ctx, ns, "imp", /import of host Secret/);
    assert.match(
      event.message ?? "",
      new RegExp(
        `^refused to create or update virtual Secret "${ns}/sa-tok-${ns}" \\(import of host Secret ${ctx.vc.namespace}/sa-tok-${ns}\\): its type "kubernetes\\.io/service-account-token" is not one vgate sync copies`,
      ),
    );
    assert.equal(await ctx.virtual.get(secretAt(ns, `sa-tok-${ns}`)), null, "not imported");
    // The legitimate use next to it: an Opaque host Secret named instead is imported.
    await ctx.host.create(secret(ctx.vc.namespace, `plain-${ns}`, "Opaque"));
    await ctx.updateHost(ns, "imp", (h) => {
      h.metadata.annotations!["example.com/secret"] = `plain-${ns}`;
    });
    await until(
      async () => (await ctx.virtual.get(secretAt(ns, `plain-${ns}`))) !== null,
      "the Opaque host Secret imported",
    );
    assert.equal(await ctx.virtual.get(secretAt(ns, `sa-tok-${ns}`)), null);
  });
}

function ownershipTests(ctx: SyncContext): void {
  const id = randomBytes(2).toString("hex");
  const VC = { name: "bound-vc", namespace: "vcluster-bound-vc" };
  /** The host namespaces: the vCluster's, a host team's, another vCluster's, a twin's, a later one. */
  const host = {
    owned: `bo-${id}`,
    team: `bt-${id}`,
    other: `bx-${id}`,
    twin: `bw-${id}`,
    later: `bl-${id}`,
  };
  const virtualNs = {} as Record<keyof typeof host, string>;
  let proc: SyncProcess | undefined;
  const made: Obj[] = [];

  const notOurs = (namespace: string) =>
    `host namespace "${namespace}" does not belong to vCluster "${VC.name}": no namespace of that name carries the labels vcluster.loft.sh/vcluster-name=${VC.name} and vcluster.loft.sh/vcluster-namespace=${VC.namespace} that vCluster puts on the host namespaces it creates (vgate sync neither creates nor labels namespaces)`;
  const hostEndpoints = (namespace: string, name: string) =>
    ctx.host.get<Endpoints>(ref(namespace, name));
  const syncable = async (ns: string, name: string, annotations: Record<string, string> = {}) => {
    made.push(ref(ns, name), { ...ref(ns, name), kind: "Service" });
    return ctx.syncable(ns, name, { annotations, ips: ["10.66.0.66"] });
  };
  const namespaceObject = (name: string, labels?: Record<string, string>): Obj => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, ...(labels && { labels }) },
  });

  before(async () => {
    await ctx.stopMain();
    for (const key of Object.keys(host) as (keyof typeof host)[]) {
      virtualNs[key] = await ctx.namespace(`v${key.slice(0, 3)}`);
    }
    await ctx.host.create(namespaceObject(host.owned, ownedBy(VC)));
    await ctx.host.create(namespaceObject(host.team, { team: "payments" }));
    await ctx.host.create(
      namespaceObject(host.other, ownedBy({ name: "someone-else", namespace: VC.namespace })),
    );
    await ctx.host.create(
      namespaceObject(host.twin, ownedBy({ name: VC.name, namespace: "vcluster-twin" })),
    );
    await ctx.host.create(namespaceObject(host.later));
    // The host team's own selector-less Service, waiting for its Endpoints, and Endpoints of theirs.
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: host.team },
      spec: { ports: [{ port: 80 }] },
    });
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "api", namespace: host.team },
      subsets: [{ addresses: [{ ip: "10.77.0.1" }], ports: [{ port: 80 }] }],
    });
    const byName = Object.entries(host)
      .map(
        ([k, h]) =>
          `          ${JSON.stringify(virtualNs[k as keyof typeof host])}: ${JSON.stringify(h)}\n`,
      )
      .join("");
    const config = `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n${byName}    endpoints:\n      enabled: true\n      patches:\n        - path: metadata.annotations["example.com/secret"]\n          reference:\n            apiVersion: v1\n            kind: Secret\n`;
    const kubeconfig = await ctx.rig.hostIdentity(RBAC_FILE, VC);
    proc = await ctx.rig.startSync({
      name: "tenant-host",
      config: await ctx.rig.writeConfig("tenant-host.yaml", config),
      args: LEADER_ARGS,
      host: { kubeconfig, vcluster: VC },
    });
    await proc.waitReady();
  });

  after(async () => {
    for (const obj of made) await ctx.virtual.delete(obj);
    await proc?.stop();
  });

  it("never writes Endpoints into a host team's namespace, where its Service would route to the tenant; its own namespace syncs", async () => {
    const teamApi = await hostEndpoints(host.team, "api");
    await syncable(virtualNs.team, "web");
    await syncable(virtualNs.team, "api");
    await syncable(virtualNs.owned, "web");
    for (const name of ["web", "api"]) {
      const event = await syncErrorMatching(ctx, virtualNs.team, name, /refused to create/);
      // vgate sync watches only the namespaces labelled for it, so any other is "no namespace".
      assert.equal(
        event.message,
        `refused to create host Endpoints "${host.team}/${name}": ${notOurs(host.team)}`,
      );
    }
    await until(
      async () => (await hostEndpoints(host.owned, "web")) !== null,
      "the copy in the owned namespace",
    );
    assert.equal(
      await hostEndpoints(host.team, "web"),
      null,
      "the team's Service has no tenant endpoints",
    );
    const after = await hostEndpoints(host.team, "api");
    assert.equal(
      after?.metadata.resourceVersion,
      teamApi?.metadata.resourceVersion,
      "theirs untouched",
    );
  });

  it("never writes into a namespace labelled for another vCluster, or for a same-named one of another namespace", async () => {
    await syncable(virtualNs.other, "db");
    await syncable(virtualNs.twin, "db");
    for (const key of ["other", "twin"] as const) {
      const event = await syncErrorMatching(ctx, virtualNs[key], "db", /refused to create/);
      assert.equal(
        event.message,
        `refused to create host Endpoints "${host[key]}/db": ${notOurs(host[key])}`,
      );
    }
    assert.equal(await hostEndpoints(host.other, "db"), null);
    assert.equal(await hostEndpoints(host.twin, "db"), null);
  });

  it("never copies a referenced Secret into a namespace it does not own; into its own it does", async () => {
    for (const key of ["team", "owned"] as const) {
      const s = secret(virtualNs[key], "creds", "Opaque");
      await ctx.virtual.create(s);
      made.push(s);
      await syncable(virtualNs[key], "uses-creds", { "example.com/secret": "creds" });
    }
    await until(
      async () => (await ctx.host.get(secretAt(host.owned, "creds"))) !== null,
      "the Secret copied into the owned namespace",
    );
    const event = await syncErrorMatching(ctx, virtualNs.team, "uses-creds", /refused to/);
    assert.match(
      event.message ?? "",
      new RegExp(
        `^refused to create or update host Secret "${host.team}/creds": host namespace "${host.team}" does not belong`,
      ),
    );
    assert.equal(await ctx.host.get(secretAt(host.team, "creds")), null);
    assert.equal(await hostEndpoints(host.team, "uses-creds"), null);
  });

  it("follows the labels: a namespace labelled later is synced; once unlabelled it is not written, not even to delete", async () => {
    const ns = virtualNs.later;
    await syncable(ns, "late");
    await syncErrorMatching(ctx, ns, "late", /refused to create host Endpoints/);
    await ctx.host.apply(namespaceObject(host.later, ownedBy(VC)));
    await until(
      async () => (await hostEndpoints(host.later, "late")) !== null,
      "the copy once labelled",
      60_000,
    );
    // The namespace is handed to someone else: its labels go.
    await ctx.host.apply(namespaceObject(host.later, { team: "new-owner" }));
    await ctx.updateVirtual(ns, "late", (e) => {
      e.metadata.annotations = { "example.com/changed": "1" };
    });
    await syncErrorMatching(ctx, ns, "late", /refused to update host Endpoints/);
    const before = await hostEndpoints(host.later, "late");
    await ctx.virtual.delete(ref(ns, "late"));
    await until(
      async () =>
        (await proc!.log()).includes(`refused to delete host Endpoints \\"${host.later}/late\\"`),
      "the refused delete in the log",
    );
    await sleep(500);
    const after = await hostEndpoints(host.later, "late");
    assert.equal(after?.metadata.resourceVersion, before?.metadata.resourceVersion, "left alone");
    assert.equal(after?.metadata.annotations?.[BOOKKEEPING.name], "late");
  });
}
