// --side virtual, sync.fromHost kinds: which virtual objects vCluster's syncer writes from host
// objects, and which of their fields it copies from the host (vCluster v0.34). Only those get the
// kind's host → virtual patches (docs/decisions.md KND-50, KND-51). Pure.
//
// - Nodes (pkg/controllers/resources/nodes/): every virtual Node is patched. The syncer creates
//   one with the host node's labels and annotations only (its `vcluster.loft.sh/managed-by`
//   marker comes with its first update, and a tenant can write it too), then copies labels,
//   annotations, the spec (taints merged) and the status.
// - ConfigMaps and Secrets (pkg/controllers/resources/{configmaps,secrets}/from_host_syncer.go,
//   pkg/syncer/translator/from_config_translator.go): only the objects `mappings.byName` names,
//   never a host `kube-root-ca.crt`; it copies annotations, labels and `data`.
// - Namespaced custom resources: only the objects their `mappings.byName` names, as ConfigMaps
//   (docs/decisions.md KND-90; vCluster Pro's syncer, through the same fromHostTranslate).
// - Gateways (v0.36, pkg/controllers/resources/gateways/syncer.go): only the imported ones, which
//   the syncer labels `vcluster.loft.sh/imported-gateway: "true"` on create and every sync; a
//   tenant's own Gateway is a sync.toHost one (docs/decisions.md KND-92).
// - Any other fromHost kind (pkg/syncer/from_host_syncer.go and the class syncers): the host
//   object, so every field but the rest of the metadata.

import type { JsonObject } from "../patches/types.js";

const METADATA = ["metadata.annotations", "metadata.labels"];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  nodes: [...METADATA, "spec", "status"],
  configMaps: [...METADATA, "data"],
  secrets: [...METADATA, "data"],
};

/** The fields of `changes` vCluster's fromHost syncer for `key` copies from the host. */
export function fromHostFields(key: string, changes: JsonObject): readonly string[] {
  const fields = FIELDS[key];
  if (fields !== undefined) return fields;
  const body = Object.keys(changes).filter((k) => !["apiVersion", "kind", "metadata"].includes(k));
  return [...METADATA, ...body];
}

/** Whether the syncer writes `status` through the status subresource for the kind. */
export function fromHostStatus(key: string): boolean {
  return key === "nodes";
}

/** The label vCluster's Gateway import puts on every virtual Gateway it writes (v0.36). */
const IMPORTED_GATEWAY_LABEL = "vcluster.loft.sh/imported-gateway";

/**
 * Whether a virtual object of the fromHost `key` carries the marker its syncer writes on every
 * object it imports; true for a kind whose syncer writes none.
 */
export function markedFromHost(key: string, object: JsonObject): boolean {
  if (key !== "gateways") return true;
  const meta = object["metadata"];
  const labels =
    typeof meta === "object" && meta !== null && !Array.isArray(meta) ? meta["labels"] : undefined;
  return (
    typeof labels === "object" &&
    labels !== null &&
    !Array.isArray(labels) &&
    labels[IMPORTED_GATEWAY_LABEL] === "true"
  );
}

/** Host names vCluster never syncs from the host, per kind (skipKubeRootCaConfigMap). */
const SKIPPED: Readonly<Record<string, string>> = { configMaps: "kube-root-ca.crt" };

/**
 * Whether the virtual `namespace/name` is where one of `mappings` (host → virtual, as in
 * `sync.fromHost.<key>.mappings.byName`) puts a host object: `ns/name` or `/name` (the vCluster's
 * host namespace) to `vns/vname` (`vns/*` keeps the host name); `ns/*` to `vns/...` and `""` to
 * `vns/*` or `vns`: any name in `vns`.
 */
export function mappedFromHost(
  key: string,
  mappings: Readonly<Record<string, string>>,
  namespace: string,
  name: string,
): boolean {
  const skipped = SKIPPED[key];
  for (const [host, virtual] of Object.entries(mappings)) {
    const slash = virtual.indexOf("/");
    const vns = slash < 0 ? virtual : virtual.slice(0, slash);
    const vname = slash < 0 ? undefined : virtual.slice(slash + 1);
    if (vns !== namespace) continue;
    const hostSlash = host.indexOf("/");
    const hostName = host.slice(hostSlash + 1);
    const anyName =
      (host === "" && vname !== "") || (hostSlash > 0 && hostName === "*" && vname !== undefined);
    if (anyName) {
      // The virtual name is the host name, and a skipped host name is never synced.
      if (name !== skipped) return true;
      continue;
    }
    if (hostSlash < 0 || hostName === "" || hostName === skipped) continue;
    if (vname === undefined || vname === "") continue;
    const target = vname === "*" && hostSlash > 0 ? hostName : vname;
    if (target === name) return true;
  }
  return false;
}
