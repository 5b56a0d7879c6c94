// Which discovered vCluster a host object belongs to (`vgate serve --discover-vclusters`), from the
// bookkeeping vCluster's syncer writes on it (pkg/util/translate): the label
// `vcluster.loft.sh/managed-by` holds
// - on a namespaced object: the vCluster's name (translate.VClusterName, the release name); the
//   object sits in the vCluster's host namespace, or, in multi-namespace mode
//   (sync.toHost.namespaces), in a host namespace labelled `vcluster.loft.sh/vcluster-name: <name>`
//   and `vcluster.loft.sh/vcluster-namespace: <its namespace>`;
// - on a cluster-scoped object: SafeConcatName(<host namespace>, "x", <name>)
//   (singleNamespace.MarkerLabelCluster).
// A name alone is not unique on a host (two vClusters may both be called "vc"), so a namespaced
// object is matched by its namespace and the label together, never by the label alone: one
// vCluster's patches can only reach objects in namespaces that are its own. Pure: the registry and
// the namespace labels come from the caller.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { VClusterRef } from "../config/vcluster-secret.js";
import { safeConcatName } from "../patches/host-names.js";
import { MarkerLabel } from "../patches/labels.js";
import { isObject } from "../shared/json.js";
import {
  VCLUSTER_NAME_LABEL,
  VCLUSTER_NAMESPACE_LABEL,
  type NamespaceLabelSource,
} from "./host-ownership.js";
import type { VClusterRunner } from "./patch-runner.js";

/** A vCluster whose config is loaded: its last good config and that config's patches. */
export interface DiscoveredVCluster {
  ref: VClusterRef;
  loaded: LoadedVCluster;
  runner: VClusterRunner;
}

/** What the lookup needs of the discovery (sync/vcluster-discovery.ts). */
export interface VClusterRegistry {
  /** False until the config Secrets were listed and loaded, and while the watch is broken. */
  synced(): boolean;
  get(namespace: string, name: string): DiscoveredVCluster | undefined;
  /** The vClusters whose cluster-scoped marker (SafeConcatName(ns, "x", name)) is `marker`. */
  byClusterMarker(marker: string): readonly DiscoveredVCluster[];
}

export type VClusterMatch =
  | { found: true; vcluster: DiscoveredVCluster }
  /** No vCluster's bookkeeping: not vCluster's object, nothing to patch. */
  | { found: false; reason: "NotManaged"; why: string }
  /** The bookkeeping names a vCluster vgate has no config of (yet): admit untouched. */
  | { found: false; reason: "UnknownVCluster"; why: string }
  /** The configs are not loaded yet: nobody can tell; the caller fails closed (503). */
  | { found: false; reason: "NotSynced"; why: string };

/** The cluster-scoped marker vCluster writes for `ref` (MarkerLabelCluster). */
export function clusterMarker(ref: VClusterRef): string {
  return safeConcatName(ref.namespace, "x", ref.name);
}

function managedBy(object: unknown): string | undefined {
  const meta = isObject(object) ? object.metadata : undefined;
  const labels = isObject(meta) ? meta.labels : undefined;
  if (!isObject(labels) || !Object.hasOwn(labels, MarkerLabel)) return undefined;
  const value = labels[MarkerLabel];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The discovered vCluster whose bookkeeping `object` (in host namespace `namespace`, "" when
 * cluster-scoped) carries. `namespaces` gives the host namespaces' labels, for vClusters in
 * multi-namespace mode; without it only a vCluster's own namespace is matched.
 */
export function vclusterForObject(
  registry: VClusterRegistry,
  namespace: string,
  object: unknown,
  namespaces?: NamespaceLabelSource,
): VClusterMatch {
  const marker = managedBy(object);
  if (marker === undefined) {
    return { found: false, reason: "NotManaged", why: `no ${MarkerLabel} label` };
  }
  if (!registry.synced()) {
    return {
      found: false,
      reason: "NotSynced",
      why: "the vClusters' config Secrets are not loaded yet",
    };
  }
  if (namespace === "") return byMarker(registry, marker);
  const own = registry.get(namespace, marker);
  if (own !== undefined) return { found: true, vcluster: own };
  const unknown = {
    found: false as const,
    reason: "UnknownVCluster" as const,
    why: `${MarkerLabel}=${marker}, but no config Secret vc-config-${marker} of a vCluster was found in namespace ${namespace}`,
  };
  // Multi-namespace mode: the namespace's labels name the vCluster, and its config must map
  // namespaces; host-ownership.ts then checks the namespace again before anything is patched.
  if (namespaces === undefined) return unknown;
  if (!namespaces.synced()) {
    return { found: false, reason: "NotSynced", why: "the namespace labels are not loaded yet" };
  }
  const labels = namespaces.labels(namespace);
  const name = labels?.[VCLUSTER_NAME_LABEL];
  const home = labels?.[VCLUSTER_NAMESPACE_LABEL];
  if (name !== marker || home === undefined) return unknown;
  const mapped = registry.get(home, name);
  if (mapped === undefined || mapped.loaded.vcluster.namespaceMappings === undefined)
    return unknown;
  return { found: true, vcluster: mapped };
}

function byMarker(registry: VClusterRegistry, marker: string): VClusterMatch {
  const all = registry.byClusterMarker(marker);
  const only = all[0];
  if (all.length === 1 && only !== undefined) return { found: true, vcluster: only };
  if (all.length === 0) {
    return {
      found: false,
      reason: "UnknownVCluster",
      why: `${MarkerLabel}=${marker} names no vCluster whose config Secret was found`,
    };
  }
  // SafeConcatName shortens long names with a hash: two vClusters that share a marker are told
  // apart by nothing on the object, so neither gets it.
  return {
    found: false,
    reason: "UnknownVCluster",
    why: `${MarkerLabel}=${marker} names ${all.length} vClusters (${all.map((v) => `${v.ref.namespace}/${v.ref.name}`).join(", ")}); an ambiguous object is patched by none`,
  };
}
