// The write guard (write-guard.ts, docs/decisions.md EPS-19, EPS-21): every write of a plan is
// checked where it is carried out (applyPlan), whichever path planned it. Unit tests of each rule,
// and a fast-check property over the real planners: for random namespace mappings, namespace
// labels and object names, no write that reaches the host's API ever targets a namespace the
// vCluster does not own.

import assert from "node:assert/strict";
import fc from "fast-check";
import { KubeError } from "../../../../webhook/src/shared/status.js";
import { validateVClusterConfig } from "../../../../webhook/src/config/validate-config.js";
import type { KubeResponse } from "../../../../webhook/src/shared/transport.js";
import { mapNamespaceToHost } from "../../../../webhook/src/patches/host-names.js";
import { referenceHostLocation } from "../../../../webhook/src/patches/reference.js";
import type { JsonObject, VClusterInfo } from "../../../../webhook/src/patches/types.js";
import { applyPlan, type Sides } from "../../../../webhook/src/sync/controller/apply-plan.js";
import {
  SyncError,
  type ReconcileDeps,
  type SyncAction,
  type SyncPlan,
} from "../../../../webhook/src/sync/controller/contracts.js";
import {
  hostKeyFor,
  reconcileEndpoints,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import { reconcileReferenceCopy } from "../../../../webhook/src/sync/controller/reference-copies.js";
import { hostCopyOf } from "../../../../webhook/src/sync/controller/references.js";
import { ResourcePaths } from "../../../../webhook/src/sync/controller/resource-paths.js";
import { writeGuard } from "../../../../webhook/src/sync/controller/write-guard.js";
import { DEFAULT_REFERENCE_SECRET_TYPES } from "../../../../webhook/src/sync/secret-types.js";
import { translateEndpointsToHost } from "../../../../webhook/src/sync/translate-endpoints.js";

const OURS = {
  "vcluster.loft.sh/vcluster-name": "vc",
  "vcluster.loft.sh/vcluster-namespace": "vc-ns",
};
const OTHER = {
  "vcluster.loft.sh/vcluster-name": "other",
  "vcluster.loft.sh/vcluster-namespace": "vc-ns",
};
const SELF = "vgate-system";
const RESERVED = ["kube-system", "kube-public", "kube-node-lease", "default", SELF];

const labelSource = (labels: Record<string, Record<string, string>>, synced = true) => ({
  synced: () => synced,
  labels: (n: string) => (Object.hasOwn(labels, n) ? labels[n] : undefined),
});

const guardFor = (labels: Record<string, Record<string, string>> | null, synced = true) =>
  writeGuard({
    owner: {
      vclusterName: "vc",
      vclusterNamespace: "vc-ns",
      ownNamespaces: ["vc-ns"],
      selfNamespace: SELF,
    },
    namespaces: labels === null ? undefined : labelSource(labels, synced),
    secretTypes: new Set(DEFAULT_REFERENCE_SECRET_TYPES),
    copyKinds: () => new Set(["v1/Secret", "v1/ConfigMap"]),
  });

const endpoints = (namespace: string, name = "db"): JsonObject => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: { name, namespace },
});

const secret = (namespace: string, type?: string, annotations: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "s", namespace, annotations },
  ...(type !== undefined && { type }),
  data: {},
});

const refusal = (check: () => void, pattern: RegExp) =>
  assert.throws(check, (err: unknown) => err instanceof SyncError && pattern.test(err.message));

/** A transport that records every request and answers as an empty API server would. */
class RecordingTransport {
  readonly writes: { method: string; path: string }[] = [];
  request(method: string, path: string): Promise<KubeResponse> {
    if (method !== "GET") this.writes.push({ method, path });
    const status = method === "POST" ? 201 : method === "GET" ? 404 : 200;
    const body =
      status === 404 ? { kind: "Status", code: 404, reason: "NotFound", message: "not found" } : {};
    return Promise.resolve({ status, body, headers: {} } as unknown as KubeResponse);
  }
}

describe("sync/controller/write-guard", () => {
  it("lets a host write into the vCluster's namespace and a namespace labelled for it through", () => {
    const guard = guardFor({ "team-a": OURS });
    for (const ns of ["vc-ns", "team-a"]) {
      guard({ type: "create", side: "host", object: endpoints(ns), reason: "t" });
      guard({ type: "ensure", side: "host", object: secret(ns, "Opaque"), reason: "t" });
      guard({ type: "delete", side: "host", ref: { ...refOf(ns) }, uid: "u", reason: "t" });
    }
  });

  it("refuses create, update, ensure and delete on the host anywhere else, naming the namespace", () => {
    const guard = guardFor({ payments: { team: "payments" }, theirs: OTHER, "kube-system": OURS });
    const actions = (ns: string): SyncAction[] => [
      { type: "create", side: "host", object: endpoints(ns), reason: "t" },
      { type: "update", side: "host", object: endpoints(ns), reason: "t" },
      { type: "ensure", side: "host", object: secret(ns, "Opaque"), reason: "t" },
      { type: "delete", side: "host", ref: refOf(ns), uid: "u", reason: "t" },
    ];
    for (const ns of ["payments", "theirs", "kube-system", "nowhere"]) {
      for (const action of actions(ns)) {
        refusal(() => guard(action), new RegExp(`^refused to \\S+.* host namespace "${ns}"`));
      }
    }
    refusal(
      () =>
        guard({
          type: "create",
          side: "host",
          object: { kind: "Namespace", apiVersion: "v1", metadata: { name: "x" } },
          reason: "t",
        }),
      /no cluster-scoped object on the host/,
    );
  });

  it("while the namespace labels are not synced, writes nothing and retries without an Event", () => {
    const guard = guardFor({ "team-a": OURS }, false);
    const err = (() => {
      try {
        guard({ type: "create", side: "host", object: endpoints("team-a"), reason: "t" });
      } catch (e) {
        return e;
      }
      return null;
    })();
    assert.ok(err instanceof KubeError && !(err instanceof SyncError), String(err));
    assert.equal(err.code, 503);
    // Its own namespace needs no label.
    guard({ type: "create", side: "host", object: endpoints("vc-ns"), reason: "t" });
  });

  it("copies and imports Secrets of allowed types only, on either side", () => {
    const guard = guardFor({});
    for (const type of [...DEFAULT_REFERENCE_SECRET_TYPES, undefined, ""]) {
      guard({ type: "ensure", side: "host", object: secret("vc-ns", type), reason: "t" });
    }
    const copy = {
      "vcluster.loft.sh/object-name": "tok",
      "vcluster.loft.sh/object-namespace": "team",
    };
    for (const type of [
      "kubernetes.io/service-account-token",
      "bootstrap.kubernetes.io/token",
      "kubernetes.io/dockercfg",
      "example.com/anything",
    ]) {
      refusal(
        () =>
          guard({ type: "ensure", side: "host", object: secret("vc-ns", type, copy), reason: "t" }),
        new RegExp(
          `^refused to create or update host Secret "vc-ns/s" \\(copy of virtual Secret team/tok\\): its type "${type.replaceAll(".", "\\.")}" is not one vgate sync copies`,
        ),
      );
      const imported = {
        ...copy,
        "vcluster.loft.sh/object-imported": "true",
        "vcluster.loft.sh/object-namespace": "vc-ns",
      };
      refusal(
        () =>
          guard({
            type: "ensure",
            side: "virtual",
            object: secret("team", type, imported),
            reason: "t",
          }),
        /^refused to create or update virtual Secret "team\/s" \(import of host Secret vc-ns\/tok\)/,
      );
    }
  });

  it("copies and imports only kinds the config's reference patches name, whatever kindPath says", () => {
    const guard = guardFor({});
    // A tenant's annotation naming a kind through kindPath: RBAC objects, pods, service accounts.
    for (const [apiVersion, kind] of [
      ["rbac.authorization.k8s.io/v1", "RoleBinding"],
      ["v1", "Pod"],
      ["v1", "ServiceAccount"],
    ] as const) {
      const object = { apiVersion, kind, metadata: { name: "x", namespace: "vc-ns" } };
      refusal(
        () => guard({ type: "ensure", side: "host", object, reason: "t" }),
        new RegExp(
          `^refused to create or update host ${kind} "vc-ns/x": ${apiVersion.replaceAll(".", "\\.")} ${kind} is not a kind the config's reference patches name`,
        ),
      );
      const imported = {
        ...object,
        metadata: {
          name: "x",
          namespace: "team",
          annotations: {
            "vcluster.loft.sh/object-imported": "true",
            "vcluster.loft.sh/object-namespace": "vc-ns",
          },
        },
      };
      refusal(
        () => guard({ type: "ensure", side: "virtual", object: imported, reason: "t" }),
        /is not a kind the config's reference patches name/,
      );
    }
    // Cluster-scoped kinds never pass: they have no namespace the vCluster could own.
    refusal(
      () =>
        guard({
          type: "ensure",
          side: "host",
          object: {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: "x" },
          },
          reason: "t",
        }),
      /no cluster-scoped object on the host/,
    );
    // The named kinds, and the Endpoints copies themselves, pass.
    guard({
      type: "ensure",
      side: "host",
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "vc-ns" } },
      reason: "t",
    });
    guard({ type: "create", side: "host", object: endpoints("vc-ns"), reason: "t" });
  });

  it("imports only from a host namespace the vCluster owns", () => {
    const guard = guardFor({ payments: {} });
    const imported = (from: string) =>
      secret("team", "Opaque", {
        "vcluster.loft.sh/object-imported": "true",
        "vcluster.loft.sh/object-name": "x",
        "vcluster.loft.sh/object-namespace": from,
      });
    guard({ type: "ensure", side: "virtual", object: imported("vc-ns"), reason: "t" });
    refusal(
      () => guard({ type: "ensure", side: "virtual", object: imported("payments"), reason: "t" }),
      /^refused to import Secret payments\/s from the host: host namespace "payments" does not belong/,
    );
  });

  it("applyPlan checks the whole plan first: a refused action means no write at all", async () => {
    const transport = new RecordingTransport();
    const access = { transport, paths: new ResourcePaths(transport) };
    const sides: Sides = { virtual: access, host: access };
    const plan: SyncPlan = {
      actions: [
        { type: "ensure", side: "host", object: secret("vc-ns", "Opaque"), reason: "t" },
        { type: "create", side: "host", object: endpoints("payments"), reason: "t" },
      ],
      warnings: [],
    };
    await assert.rejects(applyPlan(plan, sides, guardFor({})), SyncError);
    assert.deepEqual(transport.writes, []);
  });
});

function refOf(namespace: string) {
  return { apiVersion: "v1", kind: "Endpoints", namespace, name: "db" };
}

// ---- the property ----

const HOST_POOL = ["vc-ns", "owned-a", "owned-b", "team-x", "other-vc", ...RESERVED];
const VIRTUAL_POOL = ["a", "team-x", "owned-a", "default", "kube-system", "x-system", "b"];
const PATTERNS = ["*", "owned-*", "kube-*", "*-system", "team-*", "t*", "*-a"];

const mappingArb = fc.dictionary(
  fc.oneof(fc.constantFrom(...VIRTUAL_POOL), fc.constantFrom(...PATTERNS)),
  fc.oneof(fc.constantFrom(...HOST_POOL), fc.constantFrom(...PATTERNS)),
  { maxKeys: 5 },
);
const labelsArb = fc.record(
  Object.fromEntries(
    HOST_POOL.map((ns) => [
      ns,
      fc.constantFrom<Record<string, string> | null>(OURS, OTHER, {}, null),
    ]),
  ),
);
const objectArb = fc.record({
  namespace: fc.oneof(
    fc.constantFrom(...VIRTUAL_POOL),
    fc.stringMatching(/^[a-z][a-z-]{0,10}[a-z]$/),
  ),
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
});

describe("sync/controller/write-guard property", () => {
  it("for random mappings, labels and objects, no host write reaches a namespace the vCluster does not own", async () => {
    await fc.assert(
      fc.asyncProperty(
        mappingArb,
        labelsArb,
        fc.array(objectArb, { minLength: 1, maxLength: 4 }),
        async (mappings, rawLabels, objects) => {
          const labels = Object.fromEntries(
            Object.entries(rawLabels).filter(
              (e): e is [string, Record<string, string>] => e[1] !== null,
            ),
          );
          // The oracle, written from the rule rather than the code: the vCluster's own namespace,
          // or one labelled with its name and namespace that is not reserved.
          const owned = (ns: string) =>
            ns === "vc-ns" ||
            (!RESERVED.includes(ns) &&
              labels[ns]?.["vcluster.loft.sh/vcluster-name"] === "vc" &&
              labels[ns]?.["vcluster.loft.sh/vcluster-namespace"] === "vc-ns");
          const vcluster: VClusterInfo & { targetNamespace?: string } = {
            name: "vc",
            namespace: "vc-ns",
            config: { sync: { toHost: { endpoints: { enabled: true, patches: [] } } } },
            namespaceMappings: mappings,
          };
          const transport = new RecordingTransport();
          const access = { transport, paths: new ResourcePaths(transport) };
          const sides: Sides = { virtual: access, host: access };
          const guard = guardFor(labels);
          for (const plan of await plansFor(objects, vcluster)) {
            await applyPlan(plan, sides, guard).catch((err: unknown) => {
              if (!(err instanceof SyncError)) throw err;
            });
          }
          for (const write of transport.writes) {
            const ns = /^\/api\/v1\/namespaces\/([^/]+)\//.exec(write.path)?.[1];
            assert.ok(ns !== undefined, `a host write outside any namespace: ${write.path}`);
            assert.ok(owned(ns), `${write.method} ${write.path} reached namespace ${ns}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a config that loads never maps a virtual namespace to a reserved one", () => {
    fc.assert(
      fc.property(
        mappingArb,
        fc.constantFrom(...VIRTUAL_POOL, "system", "public", "a-system"),
        (mappings, virtualNs) => {
          const raw = {
            sync: { toHost: { namespaces: { enabled: true, mappings: { byName: mappings } } } },
          };
          fc.pre(validateVClusterConfig(raw, { selfNamespace: SELF }).length === 0);
          const host = mapNamespaceToHost(virtualNs, mappings);
          assert.ok(host === null || !RESERVED.includes(host), `${virtualNs} → ${host}`);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/**
 * What the real planners plan for each object: the create of its host copy, the delete of a host
 * copy whose virtual object is gone, and the rewrite of a reference copy whose source changed.
 */
async function plansFor(
  objects: { namespace: string; name: string }[],
  vcluster: VClusterInfo & { targetNamespace?: string },
): Promise<SyncPlan[]> {
  const plans: SyncPlan[] = [];
  for (const { namespace, name } of objects) {
    const virtual: JsonObject = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name, namespace, uid: "v-uid", resourceVersion: "1" },
      subsets: [],
    };
    const service: JsonObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, uid: "s-uid" },
      spec: {},
    };
    const hostCopy = translateEndpointsToHost(virtual, vcluster);
    (hostCopy.metadata as JsonObject).uid = "h-uid";
    const sourceSecret: JsonObject = {
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: { name, namespace, uid: "sec-uid", resourceVersion: "2" },
      data: {},
    };
    const at = referenceHostLocation(name, namespace, vcluster);
    const secretCopy = hostCopyOf(
      {
        ...sourceSecret,
        metadata: { ...(sourceSecret.metadata as JsonObject), resourceVersion: "1" },
      },
      {
        patchIndex: 0,
        direction: "toHost",
        apiVersion: "v1",
        kind: "Secret",
        virtual: { namespace, name },
        host: at,
      },
      { name: vcluster.name, namespace: vcluster.namespace },
    );
    (secretCopy.metadata as JsonObject).resourceVersion = "9";
    const deps: ReconcileDeps = {
      vcluster,
      enabled: true,
      run: () => Promise.reject(new Error("no patch runs with patches: []")),
      get: (side, ref) =>
        Promise.resolve(
          side === "virtual" ? (ref.kind === "Secret" ? sourceSecret : null) : secretCopy,
        ),
      list: () => Promise.resolve([]),
    };
    const key = { namespace, name };
    const host = hostKeyFor(key, vcluster);
    plans.push(await reconcileEndpoints({ key, virtual, service, host: null }, deps));
    plans.push(
      await reconcileEndpoints(
        { key, virtual: null, service, host: host.name === "" ? null : hostCopy },
        deps,
      ),
    );
    plans.push(
      await reconcileReferenceCopy({ apiVersion: "v1", kind: "Secret", namespace, name }, deps),
    );
  }
  return plans;
}
