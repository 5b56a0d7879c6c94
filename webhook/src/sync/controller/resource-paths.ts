// REST paths of objects by apiVersion/kind, for the reconciler's reads and the plan's writes. The
// core kinds a sync touches are in a table; any other kind (a reference to a custom resource) is
// found through discovery, cached per group/version (kube/discovery-cache.ts).

import { answerError } from "../../shared/answer-error.js";
import { DiscoveryCache, type KindTable } from "../../kube/discovery-cache.js";
import { discoveryPath, parseApiVersion, resourcesByKind } from "../../kube/discovery.js";
import type { ResourceMapping } from "../../kube/ports.js";
import type { KubeResponse } from "../../shared/transport.js";
import { SyncError, type ObjectRef } from "./contracts.js";

/** What the paths need of KubeTransport. */
export interface RequestTransport {
  request(method: string, path: string, body?: unknown): Promise<KubeResponse>;
}

const CORE: Record<string, string> = {
  Endpoints: "endpoints",
  Service: "services",
  Secret: "secrets",
  ConfigMap: "configmaps",
  Pod: "pods",
  ServiceAccount: "serviceaccounts",
  PersistentVolumeClaim: "persistentvolumeclaims",
};

const CLUSTER_SCOPED_CORE: Record<string, string> = {
  Namespace: "namespaces",
  Node: "nodes",
  PersistentVolume: "persistentvolumes",
};

export class ResourcePaths {
  private readonly discovery: DiscoveryCache;

  constructor(transport: RequestTransport) {
    this.discovery = new DiscoveryCache((gv) => fetchKinds(transport, gv), {
      ttlMs: 10 * 60_000,
      missRefreshMs: 30_000,
      maxEntries: 64,
    });
  }

  /** The collection path of `apiVersion`/`kind` in `namespace` ("" = all namespaces). */
  async collection(apiVersion: string, kind: string, namespace: string): Promise<string> {
    const mapping = await this.mapping(apiVersion, kind);
    const base =
      mapping.group === ""
        ? `/api/${mapping.version}`
        : `/apis/${mapping.group}/${mapping.version}`;
    const ns =
      mapping.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    return `${base}${ns}/${mapping.resource}`;
  }

  /** Whether objects of `apiVersion`/`kind` live in namespaces. */
  async namespaced(apiVersion: string, kind: string): Promise<boolean> {
    return (await this.mapping(apiVersion, kind)).namespaced;
  }

  /** The path of one object. */
  async object(ref: ObjectRef): Promise<string> {
    const collection = await this.collection(ref.apiVersion, ref.kind, ref.namespace);
    return `${collection}/${encodeURIComponent(ref.name)}`;
  }

  private async mapping(apiVersion: string, kind: string): Promise<ResourceMapping> {
    if (apiVersion === "v1" && Object.hasOwn(CORE, kind)) {
      return { group: "", version: "v1", resource: CORE[kind]!, namespaced: true };
    }
    if (apiVersion === "v1" && Object.hasOwn(CLUSTER_SCOPED_CORE, kind)) {
      return { group: "", version: "v1", resource: CLUSTER_SCOPED_CORE[kind]!, namespaced: false };
    }
    const gv = parseApiVersion(apiVersion);
    const found = gv ? await this.discovery.lookup(gv, kind) : null;
    if (!found) {
      // A reference to a kind this cluster does not serve concerns that one object only.
      throw new SyncError(
        `no resource for ${kind} in ${JSON.stringify(apiVersion)} on the API server`,
      );
    }
    return found;
  }
}

async function fetchKinds(
  transport: RequestTransport,
  gv: { group: string; version: string },
): Promise<KindTable> {
  const res = await transport.request("GET", discoveryPath(gv));
  if (res.status === 404) return null;
  if (res.status !== 200) throw answerError(res);
  return resourcesByKind(gv, res.body);
}
