// What the reconciler tests share: the real sandbox runner for a patch list (sync/patch-runner.ts),
// realistic virtual/host objects, and two plain object maps (the virtual and the host cluster) that
// answer deps.get / deps.list and take a plan's writes with the API server's PUT semantics
// (resourceVersion must match; a write bumps it; a create gets a uid).

import assert from "node:assert/strict";
import {
  startPatchRunner,
  type StartedPatchRunner,
} from "../../../../webhook/src/sync/patch-runner.js";
import type { JsonObject, PatchSpec, VClusterInfo } from "../../../../webhook/src/patches/types.js";
import type {
  EndpointsState,
  ObjectRef,
  ReconcileDeps,
  Side,
  SyncKey,
  SyncPlan,
} from "../../../../webhook/src/sync/controller/contracts.js";
import { hostKeyFor } from "../../../../webhook/src/sync/controller/reconcile.js";

export const VC_NAME = "vc";
export const VC_NAMESPACE = "vc-ns";

export function vclusterFor(patches: PatchSpec[]): VClusterInfo {
  return {
    name: VC_NAME,
    namespace: VC_NAMESPACE,
    config: {
      sync: { toHost: { endpoints: { enabled: true, patches } } },
    } as unknown as JsonObject,
  };
}

/** The real sandbox pool with `patches` loaded; close it in after(). */
export async function startRunner(
  patches: PatchSpec[],
  deadlineMs = 1000,
): Promise<StartedPatchRunner & { vcluster: VClusterInfo }> {
  const vcluster = vclusterFor(patches);
  const runner = await startPatchRunner(
    { vcluster, enabled: true, patches, patchSets: [] },
    { workers: 1, deadlineMs },
  );
  return { ...runner, vcluster };
}

let uidCounter = 0;
export const newUid = (): string =>
  `00000000-0000-4000-8000-${String(++uidCounter).padStart(12, "0")}`;

/** A virtual Endpoints object as the API server returns it. */
export function virtualEndpoints(
  namespace: string,
  name: string,
  opts: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
): JsonObject {
  const metadata: JsonObject = {
    name,
    namespace,
    uid: newUid(),
    resourceVersion: "100",
    creationTimestamp: "2026-11-01T10:00:00Z",
  };
  if (opts.annotations) metadata.annotations = { ...opts.annotations };
  if (opts.labels) metadata.labels = { ...opts.labels };
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata,
    subsets: [
      {
        addresses: [
          { ip: "10.0.0.7", targetRef: { kind: "Pod", name: "db-0", namespace, uid: "p-uid-1" } },
        ],
        ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
      },
    ],
  };
}

export function service(
  namespace: string,
  name: string,
  selector?: Record<string, string>,
): JsonObject {
  const spec: JsonObject = { ports: [{ port: 5432 }] };
  if (selector !== undefined) spec.selector = selector;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, uid: newUid(), resourceVersion: "5" },
    spec,
  };
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const metaOf = (o: JsonObject): JsonObject => (o.metadata ?? {}) as JsonObject;

function objectKey(apiVersion: string, kind: string, namespace: string, name: string): string {
  return JSON.stringify([apiVersion, kind, namespace, name]);
}

function keyOfObject(o: JsonObject): string {
  const m = metaOf(o);
  return objectKey(str(o.apiVersion), str(o.kind), str(m.namespace), str(m.name));
}

/** One cluster's objects, by apiVersion/kind/namespace/name. */
export class Cluster {
  readonly objects = new Map<string, JsonObject>();
  private rv = 1000;

  put(object: JsonObject): JsonObject {
    const copy = structuredClone(object);
    const m = metaOf(copy);
    if (!m.uid) m.uid = newUid();
    m.resourceVersion = String(++this.rv);
    copy.metadata = m;
    this.objects.set(keyOfObject(copy), copy);
    return copy;
  }

  get(ref: ObjectRef): JsonObject | null {
    const o = this.objects.get(objectKey(ref.apiVersion, ref.kind, ref.namespace, ref.name));
    return o === undefined ? null : structuredClone(o);
  }

  endpoints(namespace: string, name: string): JsonObject | null {
    return this.get({ apiVersion: "v1", kind: "Endpoints", namespace, name });
  }

  /** List items carry no kind, as in a real LIST response. */
  list(apiVersion: string, kind: string, namespace: string): JsonObject[] {
    return [...this.objects.values()]
      .filter((o) => o.apiVersion === apiVersion && o.kind === kind)
      .filter((o) => namespace === "" || metaOf(o).namespace === namespace)
      .map((o) =>
        Object.fromEntries(
          Object.entries(structuredClone(o)).filter(([k]) => k !== "apiVersion" && k !== "kind"),
        ),
      );
  }

  delete(ref: ObjectRef): void {
    this.objects.delete(objectKey(ref.apiVersion, ref.kind, ref.namespace, ref.name));
  }
}

export class World {
  readonly virtual = new Cluster();
  readonly host = new Cluster();
  reads = 0;

  side(side: Side): Cluster {
    return side === "virtual" ? this.virtual : this.host;
  }

  deps(
    runner: { run: ReconcileDeps["run"]; vcluster: VClusterInfo },
    enabled = true,
  ): ReconcileDeps {
    return {
      vcluster: runner.vcluster,
      enabled,
      run: runner.run,
      get: (side, ref) => {
        this.reads++;
        return Promise.resolve(this.side(side).get(ref));
      },
      list: (side, apiVersion, kind, namespace) => {
        this.reads++;
        return Promise.resolve(this.side(side).list(apiVersion, kind, namespace));
      },
    };
  }

  /** What the controller hands the reconciler for `key`. */
  state(key: SyncKey, vcluster: VClusterInfo): EndpointsState {
    const host = hostKeyFor(key, vcluster);
    return {
      key,
      virtual: this.virtual.endpoints(key.namespace, key.name),
      service: this.virtual.get({ apiVersion: "v1", kind: "Service", ...key }),
      host: this.host.endpoints(host.namespace, host.name),
    };
  }

  /** Carries a plan out with the API server's semantics: a stale resourceVersion is a conflict. */
  apply(plan: SyncPlan): void {
    for (const action of plan.actions) {
      const cluster = this.side(action.side);
      if (action.type === "delete") {
        const current = cluster.get(action.ref);
        assert.ok(current, "delete of a missing object");
        assert.equal(str(metaOf(current).uid), action.uid, "uid precondition failed");
        cluster.delete(action.ref);
        continue;
      }
      const m = metaOf(action.object);
      const ref = {
        apiVersion: str(action.object.apiVersion),
        kind: str(action.object.kind),
        namespace: str(m.namespace),
        name: str(m.name),
      };
      const existing = cluster.get(ref);
      if (action.type === "create") assert.equal(existing, null, "create of an existing object");
      if (action.type === "update") {
        assert.ok(existing, "update of a missing object");
        assert.equal(m.resourceVersion, metaOf(existing).resourceVersion, "409 Conflict");
      }
      const keep: JsonObject = existing === null ? {} : { uid: str(metaOf(existing).uid) };
      cluster.put({ ...action.object, metadata: { ...m, ...keep } });
    }
  }
}

export const annotationsOf = (o: JsonObject | null): Record<string, string> =>
  (metaOf(o ?? {}).annotations ?? {}) as Record<string, string>;

export const labelsOf = (o: JsonObject | null): Record<string, string> =>
  (metaOf(o ?? {}).labels ?? {}) as Record<string, string>;

/** Sets (or with null, removes) annotations on an object in place. */
export function editAnnotations(o: JsonObject, edits: Record<string, string | null>): void {
  const m = metaOf(o);
  const a = { ...((m.annotations ?? {}) as Record<string, string>) };
  for (const [k, v] of Object.entries(edits)) {
    if (v === null) Reflect.deleteProperty(a, k);
    else a[k] = v;
  }
  m.annotations = a;
  o.metadata = m;
}

export function editLabels(o: JsonObject, edits: Record<string, string | null>): void {
  const m = metaOf(o);
  const l = { ...((m.labels ?? {}) as Record<string, string>) };
  for (const [k, v] of Object.entries(edits)) {
    if (v === null) Reflect.deleteProperty(l, k);
    else l[k] = v;
  }
  m.labels = l;
  o.metadata = m;
}
