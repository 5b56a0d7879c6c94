// The resource types the test API server serves: what discovery lists and what the generic object
// handlers accept. Add types with `ResourceRegistry.add` (e.g. to simulate installing a CRD).

export interface SubresourceType {
  name: string;
  kind: string;
  verbs: string[];
}

export interface ResourceType {
  group: string;
  version: string;
  /** The plural, lower-case name used in URLs. */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  subresources?: SubresourceType[];
}

const OBJECT_VERBS = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

export const apiVersionOf = (group: string, version: string): string =>
  group ? `${group}/${version}` : version;

export class ResourceRegistry {
  private readonly types: ResourceType[] = [];

  add(type: ResourceType): void {
    this.remove(type.group, type.version, type.resource);
    this.types.push(type);
  }

  remove(group: string, version: string, resource: string): void {
    const i = this.types.findIndex(
      (t) => t.group === group && t.version === version && t.resource === resource,
    );
    if (i >= 0) this.types.splice(i, 1);
  }

  byResource(group: string, version: string, resource: string): ResourceType | undefined {
    return this.types.find(
      (t) => t.group === group && t.version === version && t.resource === resource,
    );
  }

  /** By apiVersion and either the kind (`Pod`) or the resource (`pods`). */
  lookup(apiVersion: string, kindOrResource: string): ResourceType | undefined {
    return this.types.find(
      (t) =>
        apiVersionOf(t.group, t.version) === apiVersion &&
        (t.kind === kindOrResource || t.resource === kindOrResource),
    );
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.types.filter((t) => t.group === group && t.version === version);
  }

  /** Every served group with its versions, in registration order; the core group is "". */
  groups(): { group: string; versions: string[] }[] {
    const out: { group: string; versions: string[] }[] = [];
    for (const t of this.types) {
      const entry = out.find((g) => g.group === t.group);
      if (!entry) out.push({ group: t.group, versions: [t.version] });
      else if (!entry.versions.includes(t.version)) entry.versions.push(t.version);
    }
    return out;
  }
}

/** A ResourceType with the usual verbs; `subresources` lists `name:Kind` pairs. */
export function resourceType(
  apiVersion: string,
  kind: string,
  resource: string,
  namespaced: boolean,
  subresources: string[] = [],
): ResourceType {
  const [group, version] = apiVersion.includes("/")
    ? (apiVersion.split("/") as [string, string])
    : ["", apiVersion];
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    verbs: OBJECT_VERBS,
    subresources: subresources.map((s) => {
      const [name, subKind] = s.split(":") as [string, string | undefined];
      return { name, kind: subKind ?? kind, verbs: ["get", "patch", "update"] };
    }),
  };
}

/** What a small cluster with Loft's management and storage APIs serves. */
export function defaultResources(groupDomain: string): ResourceType[] {
  const management = `management.${groupDomain}/v1`;
  const storage = `storage.${groupDomain}/v1`;
  const createOnly = (t: ResourceType): ResourceType => ({ ...t, verbs: ["create"] });
  return [
    resourceType("v1", "Namespace", "namespaces", false, ["finalize", "status"]),
    resourceType("v1", "Node", "nodes", false, ["status"]),
    resourceType("v1", "Pod", "pods", true, ["binding:Binding", "eviction:Eviction", "status"]),
    resourceType("v1", "ConfigMap", "configmaps", true),
    resourceType("v1", "Secret", "secrets", true),
    resourceType("v1", "Service", "services", true, ["status"]),
    resourceType("v1", "ServiceAccount", "serviceaccounts", true, ["token:TokenRequest"]),
    resourceType("v1", "Endpoints", "endpoints", true),
    resourceType("v1", "Event", "events", true),
    resourceType("apps/v1", "Deployment", "deployments", true, ["scale:Scale", "status"]),
    resourceType("apps/v1", "ReplicaSet", "replicasets", true, ["scale:Scale", "status"]),
    resourceType("apps/v1", "StatefulSet", "statefulsets", true, ["scale:Scale", "status"]),
    resourceType("apps/v1", "DaemonSet", "daemonsets", true, ["status"]),
    createOnly(
      resourceType("authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews", false),
    ),
    createOnly(
      resourceType(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
      ),
    ),
    createOnly(
      resourceType(
        "authorization.k8s.io/v1",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
      ),
    ),
    resourceType(management, "OwnedAccessKey", "ownedaccesskeys", false),
    resourceType(management, "User", "users", false),
    resourceType(management, "Team", "teams", false),
    resourceType(storage, "User", "users", false, ["status"]),
    resourceType(storage, "Team", "teams", false, ["status"]),
  ];
}
