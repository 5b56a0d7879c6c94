// Which host namespaces belong to this vCluster, so that vgate writes (and patches) only there
// (docs/decisions.md EPS-19; docs/reference.md#vcluster-namespace-ownership):
// - its own namespaces: --vcluster-namespace, and --target-namespace in single-namespace mode;
// - a namespace that carries the labels vCluster's namespace syncer puts on every host namespace
//   it creates in multi-namespace mode: `vcluster.loft.sh/vcluster-name: <vCluster name>` and
//   `vcluster.loft.sh/vcluster-namespace: <its own host namespace>`;
// and never a reserved namespace (config/reserved-namespaces.ts, EPS-20), nor "" (a cluster-scoped
// object). Pure: the labels come from the caller (a namespace watch cache).

import { describeReserved, reservedNamespaces } from "../config/reserved-namespaces.js";

/** vCluster's ownership labels on host namespaces (pkg/constants/annotation.go). */
export const VCLUSTER_NAME_LABEL = "vcluster.loft.sh/vcluster-name";
export const VCLUSTER_NAMESPACE_LABEL = "vcluster.loft.sh/vcluster-namespace";

export interface HostOwner {
  /** --vcluster-name. */
  vclusterName: string;
  /** --vcluster-namespace: the namespace the labels must name. */
  vclusterNamespace: string;
  /** The namespaces the flags name as the vCluster's own (--vcluster-namespace, --target-namespace). */
  ownNamespaces: readonly string[];
  /** The namespace vgate runs in, when known (--namespace). */
  selfNamespace?: string;
}

/** Namespace labels from a watch cache: only trust labels() while synced() (kube/ports.ts). */
export interface NamespaceLabelSource {
  synced(): boolean;
  labels(name: string): Readonly<Record<string, string>> | undefined;
}

export type Ownership = { owned: true } | { owned: false; why: string };

/** The label selector of the namespaces a vCluster owns (what the namespace cache watches). */
export function ownedNamespaceSelector(
  owner: Pick<HostOwner, "vclusterName" | "vclusterNamespace">,
): string {
  return `${VCLUSTER_NAME_LABEL}=${owner.vclusterName},${VCLUSTER_NAMESPACE_LABEL}=${owner.vclusterNamespace}`;
}

/**
 * Whether `namespace` on the host belongs to `owner`. `source` is absent when only the own
 * namespaces can be targets (single-namespace mode). "unknown" when the labels cannot be trusted
 * yet (the cache is not synced): the caller must neither write nor assume.
 */
export function hostNamespaceOwnership(
  namespace: string,
  owner: HostOwner,
  source?: NamespaceLabelSource,
): Ownership | "unknown" {
  if (namespace === "") {
    return { owned: false, why: "vgate writes no cluster-scoped object on the host" };
  }
  if (owner.ownNamespaces.includes(namespace)) return { owned: true };
  if (reservedNamespaces(owner.selfNamespace).includes(namespace)) {
    return {
      owned: false,
      why: `host namespace ${JSON.stringify(namespace)} is reserved: vgate never writes to ${describeReserved(owner.selfNamespace)}`,
    };
  }
  const notOurs = `host namespace ${JSON.stringify(namespace)} does not belong to vCluster ${JSON.stringify(owner.vclusterName)}`;
  const marking = `${VCLUSTER_NAME_LABEL}=${owner.vclusterName} and ${VCLUSTER_NAMESPACE_LABEL}=${owner.vclusterNamespace}`;
  if (source === undefined) {
    return {
      owned: false,
      why: `${notOurs}: in single-namespace mode only ${owner.ownNamespaces.map((n) => JSON.stringify(n)).join(" and ")} ${owner.ownNamespaces.length > 1 ? "are" : "is"} its`,
    };
  }
  if (!source.synced()) return "unknown";
  const labels = source.labels(namespace);
  if (labels === undefined) {
    return {
      owned: false,
      why: `${notOurs}: no namespace of that name carries the labels ${marking} that vCluster puts on the host namespaces it creates (vgate sync neither creates nor labels namespaces)`,
    };
  }
  const name = labels[VCLUSTER_NAME_LABEL];
  const home = labels[VCLUSTER_NAMESPACE_LABEL];
  if (name === owner.vclusterName && home === owner.vclusterNamespace) return { owned: true };
  const other =
    name !== undefined || home !== undefined
      ? `it is labelled for vCluster ${JSON.stringify(name ?? "")} of namespace ${JSON.stringify(home ?? "")}`
      : "it lacks the labels";
  return { owned: false, why: `${notOurs}: ${other}, not ${marking}` };
}
