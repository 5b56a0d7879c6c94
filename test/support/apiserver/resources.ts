// The resource types the test API server serves: what discovery lists and what the generic object
// handlers accept. Add types with `ResourceRegistry.add` (e.g. to simulate installing a CRD);
// creating a CustomResourceDefinition through the API adds them too (crds.ts).

import { builtinResources } from "./builtin-types.js";

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
  /** Discovery categories, e.g. `all` (what `kubectl get all` lists). */
  categories?: string[];
  subresources?: SubresourceType[];
  /** Set for custom resources: the CRD that serves this type (`<plural>.<group>`). */
  crd?: string;
  /** The version's `openAPIV3Schema` (custom resources): objects are validated and pruned by it. */
  schema?: Record<string, unknown>;
  /** The version's `additionalPrinterColumns` (custom resources), for Table output. */
  printerColumns?: PrinterColumn[];
}

/** apiextensions/v1 CustomResourceColumnDefinition. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  priority?: number;
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

export const OBJECT_VERB_LIST: readonly string[] = OBJECT_VERBS;

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

  /** Every served type, in registration order. */
  all(): ResourceType[] {
    return [...this.types];
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

export interface DefaultResourceOptions {
  /**
   * Serve management.<domain>/v1 ownedaccesskeys as a built-in type without a schema (the
   * default). Turn it off to install the real CRD from manifests/ instead.
   */
  builtinOwnedAccessKeys?: boolean;
}

/** What a small cluster with Loft's management and storage APIs serves. */
export function defaultResources(
  groupDomain: string,
  opts: DefaultResourceOptions = {},
): ResourceType[] {
  const management = `management.${groupDomain}/v1`;
  const storage = `storage.${groupDomain}/v1`;
  const loft = [
    resourceType(management, "User", "users", false),
    resourceType(management, "Team", "teams", false),
    resourceType(storage, "User", "users", false, ["status"]),
    resourceType(storage, "Team", "teams", false, ["status"]),
  ];
  if (opts.builtinOwnedAccessKeys !== false) {
    loft.unshift(resourceType(management, "OwnedAccessKey", "ownedaccesskeys", false));
  }
  return [...builtinResources(), ...loft];
}
