// apiVersion/kind -> resource through discovery (what kube-apiserver's RESTMapper does for the
// OwnerReferencesPermissionEnforcement plugin). Pure parsing here; the cache is in discovery-cache.ts.

import type { ResourceMapping } from "./ports.js";
import { isObject } from "../shared/json.js";

export interface GroupVersion {
  group: string;
  version: string;
}

// Both are path segments of the discovery URL, so only DNS-ish characters may pass.
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * schema.ParseGroupVersion: `v1` is the core group, `group/version` any other; anything else
 * (empty, more than one '/') cannot be mapped. Returns null for those.
 */
export function parseApiVersion(apiVersion: string): GroupVersion | null {
  const parts = apiVersion.split("/");
  if (parts.length === 1) return VERSION.test(parts[0]!) ? { group: "", version: parts[0]! } : null;
  if (parts.length !== 2) return null;
  const [group, version] = parts as [string, string];
  return GROUP.test(group) && VERSION.test(version) ? { group, version } : null;
}

/** The discovery document of a group/version: `/api/v1` for core, `/apis/<group>/<version>`. */
export function discoveryPath(gv: GroupVersion): string {
  return gv.group === "" ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
}

/**
 * Kind -> mapping from an APIResourceList. Subresources (`pods/status`) share their parent's kind
 * and are skipped; the first top-level resource of a kind wins. Malformed entries are ignored.
 */
export function resourcesByKind(gv: GroupVersion, list: unknown): Map<string, ResourceMapping> {
  const byKind = new Map<string, ResourceMapping>();
  const resources = isObject(list) && Object.hasOwn(list, "resources") ? list["resources"] : null;
  if (!Array.isArray(resources)) return byKind;
  for (const entry of resources as unknown[]) {
    const mapping = toMapping(gv, entry);
    if (mapping && !byKind.has(mapping.kind)) byKind.set(mapping.kind, mapping.value);
  }
  return byKind;
}

function toMapping(
  gv: GroupVersion,
  entry: unknown,
): { kind: string; value: ResourceMapping } | null {
  if (!isObject(entry)) return null;
  const { name, kind, namespaced } = ownFields(entry, ["name", "kind", "namespaced"]);
  if (typeof name !== "string" || name === "" || name.includes("/")) return null;
  if (typeof kind !== "string" || kind === "") return null;
  return {
    kind,
    value: {
      group: gv.group,
      version: gv.version,
      resource: name,
      namespaced: namespaced === true,
    },
  };
}

function ownFields(
  obj: Record<string, unknown>,
  names: readonly string[],
): Record<string, unknown> {
  return Object.fromEntries(names.map((n) => [n, Object.hasOwn(obj, n) ? obj[n] : undefined]));
}
