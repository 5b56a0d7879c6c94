// What every `vgate sync` contract test needs: the rig (two real kube-apiservers, started once for
// the file), a namespace of its own in the virtual cluster per test, builders for Services and
// Endpoints, reads of the host copy, and waits. Expected host objects are written out here from the
// rules (vCluster's naming and bookkeeping, docs/reference.md#endpoints-syncer-create), never by
// calling the code under test.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { randomBytes } from "node:crypto";
import type { KubeObject, KubeTestClient } from "../../support/kube/kube-client.js";
import { startSyncRig, type SyncProcess, type SyncRig } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";

export type Obj = KubeObject;
type Meta = {
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown;
  finalizers?: unknown;
};
export type Endpoints = Obj & { metadata: Meta; subsets?: Subset[] };
export interface Subset {
  addresses?: Address[];
  notReadyAddresses?: Address[];
  ports?: { name?: string; port: number; protocol?: string }[];
}
export interface Address {
  ip: string;
  hostname?: string;
  targetRef?: { kind: string; name: string; namespace?: string; uid?: string };
}

export const BOOKKEEPING = {
  name: "vcluster.loft.sh/object-name",
  namespace: "vcluster.loft.sh/object-namespace",
  uid: "vcluster.loft.sh/object-uid",
  kind: "vcluster.loft.sh/object-kind",
  hostName: "vcluster.loft.sh/object-host-name",
  hostNamespace: "vcluster.loft.sh/object-host-namespace",
  managedAnnotations: "vcluster.loft.sh/managed-annotations",
} as const;
export const MARKER_LABEL = "vcluster.loft.sh/managed-by";
export const NAMESPACE_LABEL = "vcluster.loft.sh/namespace";
export const SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror";

/** The config most tests run with: an annotation patch both ways and two reference patches. */
export const BASE_CONFIG = `sync:
  toHost:
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
        - path: metadata.annotations["example.com/config"]
          reference:
            apiVersion: v1
            kind: ConfigMap
`;

/**
 * Flags every controller of the suite gets: leader election as an install runs it (it is on by
 * default), with short timings so a controller killed with SIGKILL is replaced within seconds.
 */
export const LEADER_ARGS = [
  "--leader-elect-lease-duration=3s",
  "--leader-elect-renew-deadline=2s",
  "--leader-elect-retry-period=500ms",
];

export class SyncContext {
  private current: SyncRig | undefined;
  private counter = 0;
  private readonly runId = randomBytes(2).toString("hex");
  private mainProc: SyncProcess | undefined;
  private mainConfig = "";
  private readonly exempt = new Set<SyncProcess>();

  /** Leaves `proc`'s log out of the final check for requests refused by RBAC. */
  exemptFromRbacCheck(proc: SyncProcess): void {
    this.exempt.add(proc);
  }

  /** The controllers whose logs the RBAC check reads. */
  rbacChecked(): SyncProcess[] {
    return this.rig.processes().filter((p) => !this.exempt.has(p));
  }

  get rig(): SyncRig {
    if (!this.current) throw new Error("the sync rig is not started");
    return this.current;
  }
  get virtual(): KubeTestClient {
    return this.rig.virtual.admin;
  }
  get host(): KubeTestClient {
    return this.rig.host.admin;
  }
  get vc(): { name: string; namespace: string } {
    return this.rig.vcluster;
  }

  async start(): Promise<void> {
    this.current = await startSyncRig();
    this.mainConfig = await this.rig.writeConfig("main.yaml", BASE_CONFIG);
  }

  async stop(): Promise<void> {
    await this.current?.stop();
  }

  /** The end of every controller log written since `since` (ms), for a failed test's report. */
  async logsSince(since: number, lines = 40): Promise<string> {
    const out: string[] = [];
    for (const p of this.current?.processes() ?? []) {
      const text = await p.log();
      const recent = text
        .trimEnd()
        .split("\n")
        .filter((l) => {
          const m = /"time":"([^"]+)"/.exec(l);
          return !m || Date.parse(m[1]!) >= since;
        })
        .slice(-lines);
      if (recent.length > 0) out.push(`--- ${p.name} (${p.logFile}):`, ...recent);
    }
    return out.join("\n");
  }

  /** The controller most tests share, started with BASE_CONFIG when it is not running. */
  async main(): Promise<SyncProcess> {
    if (this.mainProc && !this.mainProc.exited()) return this.mainProc;
    await this.rig.writeConfig("main.yaml", BASE_CONFIG);
    this.mainProc = await this.rig.startSync({
      name: "main",
      config: this.mainConfig,
      args: LEADER_ARGS,
    });
    await this.mainProc.waitReady();
    return this.mainProc;
  }

  /** Stops the shared controller, for tests that run their own. */
  async stopMain(): Promise<void> {
    await this.mainProc?.stop();
    this.mainProc = undefined;
  }

  /** Starts a controller of the test's own with `config`; ready when this resolves. */
  async controller(name: string, config: string, args: string[] = []): Promise<SyncProcess> {
    const path = await this.rig.writeConfig(`${name}.yaml`, config);
    const proc = await this.rig.startSync({ name, config: path, args: [...LEADER_ARGS, ...args] });
    await proc.waitReady();
    return proc;
  }

  /** A fresh namespace in the virtual cluster. */
  async namespace(prefix = "t"): Promise<string> {
    this.counter += 1;
    const name = `${prefix}-${this.runId}-${this.counter}`;
    await this.virtual.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    return name;
  }

  /**
   * vCluster's host name `name-x-ns-x-vc` (SafeConcatName: over 63 bytes, the first 52 bytes, "-"
   * and 10 hex digits of its sha256, with ".-" collapsed).
   */
  hostName(name: string, ns: string): string {
    const n = `${name}-x-${ns}-x-${this.vc.name}`;
    if (Buffer.byteLength(n) <= 63) return n;
    const hash = createHash("sha256").update(n).digest("hex").slice(0, 10);
    return `${n.slice(0, 52)}-${hash}`.split(".-").join("-");
  }

  /** vCluster's HostNameShort, for reference patches (docs/decisions.md EPS-1). */
  shortName(name: string, ns: string): string {
    const digest = createHash("sha256").update(`${name}-x-${ns}-x-${this.vc.name}`).digest();
    let zeros = 0;
    while (digest[zeros] === 0) zeros++;
    const digits = BigInt(`0x${digest.toString("hex")}`).toString(36);
    return `v${("0".repeat(zeros) + digits).slice(0, 13)}`;
  }

  async service(ns: string, name: string, selector?: Record<string, string>): Promise<Obj> {
    return this.virtual.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: ns },
      spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }], ...(selector && { selector }) },
    });
  }

  async endpoints(
    ns: string,
    name: string,
    opts: { annotations?: Record<string, string>; labels?: Record<string, string>; ips?: string[] },
  ): Promise<Endpoints> {
    return this.virtual.create(endpointsObject(ns, name, opts));
  }

  /** A selector-less Service and its Endpoints: what the controller syncs. */
  async syncable(
    ns: string,
    name: string,
    opts: { annotations?: Record<string, string>; labels?: Record<string, string>; ips?: string[] },
  ): Promise<Endpoints> {
    await this.service(ns, name);
    return this.endpoints(ns, name, opts);
  }

  async getVirtual(ns: string, name: string): Promise<Endpoints | null> {
    return this.virtual.get<Endpoints>(ref(ns, name));
  }

  async getHost(ns: string, name: string): Promise<Endpoints | null> {
    return this.host.get<Endpoints>(ref(this.vc.namespace, this.hostName(name, ns)));
  }

  /** Waits until the host copy of ns/name exists and satisfies `check`; returns it. */
  async waitForHost(
    ns: string,
    name: string,
    check: (host: Endpoints) => boolean = () => true,
    what = `the host copy of ${ns}/${name}`,
    ms = 30_000,
  ): Promise<Endpoints> {
    let last: Endpoints | null = null;
    await until(
      async () => {
        last = await this.getHost(ns, name);
        return last !== null && check(last);
      },
      `${what} (last seen: ${JSON.stringify(last)})`,
      ms,
    );
    return last!;
  }

  async waitForHostGone(ns: string, name: string, ms = 30_000): Promise<void> {
    await until(
      async () => (await this.getHost(ns, name)) === null,
      `host copy of ${ns}/${name} deleted`,
      ms,
    );
  }

  async waitForVirtual(
    ns: string,
    name: string,
    check: (v: Endpoints) => boolean,
    what: string,
    ms = 30_000,
  ): Promise<Endpoints> {
    const seen: { last: Endpoints | null } = { last: null };
    await until(
      async () => {
        seen.last = await this.getVirtual(ns, name);
        return seen.last !== null && check(seen.last);
      },
      `${what} (last seen: ${JSON.stringify(seen.last?.metadata)})`,
      ms,
    );
    return seen.last!;
  }

  /** Replaces the virtual Endpoints with `change` applied to the live object (retries conflicts). */
  async updateVirtual(
    ns: string,
    name: string,
    change: (e: Endpoints) => void,
  ): Promise<Endpoints> {
    return updateWith(this.virtual, ref(ns, name), change);
  }

  async updateHost(ns: string, name: string, change: (e: Endpoints) => void): Promise<Endpoints> {
    return updateWith(this.host, ref(this.vc.namespace, this.hostName(name, ns)), change);
  }

  /** The SyncError Events recorded on the virtual Endpoints ns/name. */
  async syncErrors(ns: string, name: string): Promise<KubeEvent[]> {
    const res = await this.virtual.request<{ items?: KubeEvent[] }>(
      "GET",
      `/api/v1/namespaces/${ns}/events`,
    );
    return (res.body.items ?? []).filter(
      (e) =>
        e.reason === "SyncError" &&
        e.involvedObject?.name === name &&
        e.involvedObject.kind === "Endpoints",
    );
  }

  async waitForSyncError(ns: string, name: string, ms = 30_000): Promise<KubeEvent> {
    let events: KubeEvent[] = [];
    await until(
      async () => (events = await this.syncErrors(ns, name)).length > 0,
      `a SyncError Event on Endpoints ${ns}/${name}`,
      ms,
    );
    return events[0]!;
  }

  /** Every host Endpoints object that names `ns` as its virtual namespace. */
  async hostCopiesOf(ns: string): Promise<Endpoints[]> {
    const res = await this.host.request<{ items?: Endpoints[] }>(
      "GET",
      `/api/v1/namespaces/${this.vc.namespace}/endpoints`,
    );
    return (res.body.items ?? []).filter(
      (e) => e.metadata.annotations?.[BOOKKEEPING.namespace] === ns,
    );
  }

  /**
   * The host object vgate must write for `virtual` (as read back from the virtual API server),
   * before patches: vCluster's name, bookkeeping annotations, scoping labels and Pod targetRefs.
   */
  expectedHost(virtual: Endpoints, annotations: Record<string, string>): ExpectedHost {
    const { name, namespace, uid } = virtual.metadata;
    const hostName = this.hostName(name, namespace);
    const copied = Object.keys(annotations).sort();
    return {
      name: hostName,
      namespace: this.vc.namespace,
      annotations: {
        ...annotations,
        ...(copied.length > 0 && { [BOOKKEEPING.managedAnnotations]: copied.join("\n") }),
        [BOOKKEEPING.name]: name,
        [BOOKKEEPING.namespace]: namespace,
        [BOOKKEEPING.uid]: uid ?? "",
        [BOOKKEEPING.kind]: "/v1, Kind=Endpoints",
        [BOOKKEEPING.hostName]: hostName,
        [BOOKKEEPING.hostNamespace]: this.vc.namespace,
      },
      labels: {
        ...virtual.metadata.labels,
        [MARKER_LABEL]: this.vc.name,
        [NAMESPACE_LABEL]: namespace,
        // vgate sync writes the slices (sync.toHost.endpointSlices is on by default): KND-82.
        [SKIP_MIRROR_LABEL]: "true",
      },
      subsets: (virtual.subsets ?? []).map((s) => this.hostSubset(s)),
    };
  }

  private hostSubset(subset: Subset): Subset {
    const address = (a: Address): Address => {
      if (a.targetRef?.kind !== "Pod") return a;
      // uid and resourceVersion belong to the virtual Pod: they are dropped.
      const targetRef = { ...a.targetRef };
      delete targetRef.uid;
      return {
        ...a,
        targetRef: {
          ...targetRef,
          name: this.hostName(a.targetRef.name, a.targetRef.namespace ?? ""),
          namespace: this.vc.namespace,
        },
      };
    };
    return {
      ...subset,
      ...(subset.addresses && { addresses: subset.addresses.map(address) }),
      ...(subset.notReadyAddresses && { notReadyAddresses: subset.notReadyAddresses.map(address) }),
    };
  }
}

export interface ExpectedHost {
  name: string;
  namespace: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
  subsets: Subset[];
}

export interface KubeEvent {
  reason?: string;
  message?: string;
  type?: string;
  action?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

/** vgate's snapshot of the last sync, kept on the host copy only (reconciler's choice of key). */
export const SNAPSHOT_ANNOTATION = "vgate.loft.sh/sync-snapshot";

/** The annotations without vgate's snapshot. */
export function ownAnnotations(annotations: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== SNAPSHOT_ANNOTATION));
}

/** Asserts that `host` is exactly `expected` where it matters: identity, metadata, subsets. */
export function assertHostIs(host: Endpoints, expected: ExpectedHost): void {
  assert.equal(host.metadata.name, expected.name);
  assert.equal(host.metadata.namespace, expected.namespace);
  assert.deepEqual(ownAnnotations(host.metadata.annotations), expected.annotations);
  assert.ok(host.metadata.annotations?.[SNAPSHOT_ANNOTATION], "the sync snapshot is kept");
  assert.deepEqual(host.metadata.labels ?? {}, expected.labels);
  assert.deepEqual(host.subsets ?? [], expected.subsets);
  assert.equal(host.metadata.ownerReferences, undefined, "no ownerReferences on the host copy");
  assert.equal(host.metadata.finalizers, undefined, "no finalizers on the host copy");
}

export function endpointsObject(
  ns: string,
  name: string,
  opts: { annotations?: Record<string, string>; labels?: Record<string, string>; ips?: string[] },
): Endpoints {
  const ips = opts.ips ?? ["10.1.0.1"];
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name,
      namespace: ns,
      ...(opts.annotations && { annotations: opts.annotations }),
      ...(opts.labels && { labels: opts.labels }),
    },
    subsets: [
      {
        addresses: ips.map((ip, i) => ({
          ip,
          targetRef: {
            kind: "Pod",
            name: `${name}-${i}`,
            namespace: ns,
            uid: "6f0c6a9e-2b8c-4d8e-9a39-4f3b5d7c1e0" + String(i % 10),
          },
        })),
        notReadyAddresses: [{ ip: "10.9.9.9" }],
        ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      },
    ],
  };
}

export function ref(
  namespace: string,
  name: string,
): Pick<Obj, "apiVersion" | "kind" | "metadata"> {
  return { apiVersion: "v1", kind: "Endpoints", metadata: { name, namespace } };
}

async function updateWith(
  client: KubeTestClient,
  at: Pick<Obj, "apiVersion" | "kind" | "metadata">,
  change: (e: Endpoints) => void,
): Promise<Endpoints> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const live = await client.get<Endpoints>(at);
    assert.ok(live, `${at.metadata.namespace}/${at.metadata.name} exists`);
    change(live);
    const res = await client.request<Endpoints>(
      "PUT",
      `/api/v1/namespaces/${at.metadata.namespace}/endpoints/${at.metadata.name}`,
      live,
    );
    if (res.status === 200) return res.body;
    if (res.status !== 409)
      assert.fail(`update ${at.metadata.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return assert.fail(`update ${at.metadata.name}: conflicts`);
}

/**
 * Asserts that the objects `read` returns settle: once SETTLE_MS pass with no write to any of them
 * (within 10 s: a follow-up write such as the snapshot's is fine), none is written for `ms` more.
 * Ping-pong between the two sides never settles.
 */
const SETTLE_MS = 700;

export async function assertQuiet(
  read: () => Promise<(Obj | null)[]>,
  ms: number,
  what: string,
): Promise<void> {
  const versions = async () =>
    JSON.stringify(
      (await read()).map((o) => (o ? String(o.metadata["resourceVersion"]) : "absent")),
    );
  const deadline = Date.now() + 10_000;
  let last = await versions();
  for (;;) {
    await sleep(SETTLE_MS);
    const now = await versions();
    if (now === last) break;
    if (Date.now() > deadline)
      assert.fail(`${what}: still written every ${SETTLE_MS} ms after 10 s`);
    last = now;
  }
  await sleep(ms);
  assert.equal(await versions(), last, `${what}: no writes for ${ms} ms once settled`);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The sum of a metric's samples on a controller's /metrics whose labels include `labels`
 * (Prometheus text format); NaN when the metric is absent.
 */
export async function metric(
  proc: SyncProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const { text } = await proc.get("/metrics");
  const samples = text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)));
  if (samples.length === 0) return NaN;
  return samples.reduce((sum, line) => sum + Number(line.split(" ").pop()), 0);
}
