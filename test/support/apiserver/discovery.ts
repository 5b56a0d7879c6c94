// Discovery documents as kube-apiserver writes them (APIVersions, APIGroupList, APIGroup,
// APIResourceList), built from the resource registry.

import { apiVersionOf, type ResourceRegistry, type ResourceType } from "./resources.js";

export const SERVER_VERSION = {
  major: "1",
  minor: "31",
  gitVersion: "v1.31.0-vgate-test",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2024-08-13T00:00:00Z",
  goVersion: "go1.22.5",
  compiler: "gc",
  platform: "linux/amd64",
};

export function apiVersions(serverAddress: string): object {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

function apiGroup(group: string, versions: string[]): object {
  const list = [...versions]
    .sort(compareVersions)
    .map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(registry: ResourceRegistry): object {
  const groups = registry
    .groups()
    .filter((g) => g.group !== "")
    .map((g) => apiGroup(g.group, g.versions));
  return { kind: "APIGroupList", apiVersion: "v1", groups };
}

/** `/apis/<group>`, or null when the group is not served. */
export function apiGroupDocument(registry: ResourceRegistry, group: string): object | null {
  const entry = registry.groups().find((g) => g.group === group && group !== "");
  return entry ? { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, entry.versions) } : null;
}

/** `/api/v1` or `/apis/<group>/<version>`, or null when the group/version is not served. */
export function apiResourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): object | null {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return null;
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf(group, version),
    resources: [...types]
      .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0))
      .flatMap(resourceEntries),
  };
}

function resourceEntries(t: ResourceType): object[] {
  const main: Record<string, unknown> = {
    name: t.resource,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: t.verbs,
  };
  if (t.shortNames) main["shortNames"] = t.shortNames;
  if (t.categories) main["categories"] = t.categories;
  const subs = (t.subresources ?? []).map((s) => ({
    name: `${t.resource}/${s.name}`,
    singularName: "",
    namespaced: t.namespaced,
    kind: s.kind,
    verbs: s.verbs,
  }));
  return [main, ...subs];
}

/**
 * kube's version priority (version.CompareKubeAwareVersionStrings), highest first: GA before beta
 * before alpha, higher numbers first, then anything else alphabetically. The first is preferred.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    const level = m[2] === "alpha" ? 1 : m[2] === "beta" ? 2 : 3;
    return [level, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [la, ma, na] = rank(a);
  const [lb, mb, nb] = rank(b);
  if (la === 0 && lb === 0) return a < b ? -1 : a > b ? 1 : 0;
  return lb - la || mb - ma || nb - na;
}
