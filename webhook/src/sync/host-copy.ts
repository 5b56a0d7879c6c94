// --side host, any kind: whether a host object is a copy vCluster's syncer wrote for this vCluster,
// by the bookkeeping vCluster itself checks before it treats a host object as its own
// (pkg/util/translate/single_namespace.go IsManaged, translate.go addHostAnnotations, v0.34):
// - the label vcluster.loft.sh/managed-by names this vCluster: its name on a namespaced object; on a
//   cluster-scoped one SafeConcatName(<vCluster namespace>, "x", <vCluster name>)
//   (MarkerLabelCluster), which names the namespace too;
// - the annotation vcluster.loft.sh/object-name is set;
// - vcluster.loft.sh/object-kind, when set, names the request's group and kind (Go's
//   GroupVersionKind.String(): "<group>/<version>, Kind=<kind>"; the version is not compared, as a
//   webhook with matchPolicy Equivalent may see another version of the same object);
// - vcluster.loft.sh/object-host-name and object-host-namespace, when set, are the object's own.
// Bookkeeping alone proves nothing about who wrote it: namespaced objects are patched only in a
// namespace the vCluster owns (host-ownership.ts), and cluster-scoped ones as docs/decisions.md
// KND-13 says. Pure.

import type { GroupVersionKind } from "../admission/review.js";
import { safeConcatName } from "../patches/host-names.js";
import { MarkerLabel } from "../patches/labels.js";
import type { JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";
import { BOOKKEEPING_ANNOTATIONS } from "./translate-endpoints.js";

export interface CopyOwner {
  vclusterName: string;
  vclusterNamespace: string;
}

/** The managed-by label vCluster puts on its host copies (labels.go addScopingLabels). */
export function markerLabelValue(owner: CopyOwner, namespaced: boolean): string {
  return namespaced
    ? owner.vclusterName
    : safeConcatName(owner.vclusterNamespace, "x", owner.vclusterName);
}

/** "<group>/<version>, Kind=<kind>" split back into group and kind, or null. */
function parseKindAnnotation(value: string): { group: string; kind: string } | null {
  const match = /^([^/]*)\/[^,]*, Kind=(.+)$/.exec(value);
  return match ? { group: match[1]!, kind: match[2]! } : null;
}

const stringOf = (map: JsonObject, key: string): string =>
  Object.hasOwn(map, key) && typeof map[key] === "string" ? map[key] : "";

/** Why `object` is not this vCluster's host copy, or null when it is. */
export function notOurHostCopy(
  object: JsonObject,
  kind: GroupVersionKind,
  owner: CopyOwner,
): string | null {
  const meta = isObject(object["metadata"]) ? object["metadata"] : {};
  const labels = isObject(meta["labels"]) ? meta["labels"] : {};
  const annotations = isObject(meta["annotations"]) ? meta["annotations"] : {};
  const namespace = stringOf(meta, "namespace");
  const marker = stringOf(labels, MarkerLabel);
  const expected = markerLabelValue(owner, namespace !== "");
  if (marker === "") return `it lacks the label ${MarkerLabel} that vCluster puts on its copies`;
  if (marker !== expected) {
    // The value is not quoted back: mutating admission runs before validation, so it may be long.
    return `its label ${MarkerLabel} names another vCluster, not ${JSON.stringify(expected)}`;
  }
  const A = BOOKKEEPING_ANNOTATIONS;
  if (stringOf(annotations, A.name) === "") return `it lacks the annotation ${A.name}`;
  const kindAnnotation = stringOf(annotations, A.kind);
  if (kindAnnotation !== "") {
    const named = parseKindAnnotation(kindAnnotation);
    if (!named || named.group !== kind.group || named.kind !== kind.kind) {
      const own = `${kind.group}/${kind.version}, Kind=${kind.kind}`;
      return `its annotation ${A.kind} names another kind than ${JSON.stringify(own)}`;
    }
  }
  const hostName = stringOf(annotations, A.hostName);
  if (hostName !== "" && hostName !== stringOf(meta, "name")) {
    return `its annotation ${A.hostName} names another object`;
  }
  const hostNamespace = stringOf(annotations, A.hostNamespace);
  if (hostNamespace !== "" && hostNamespace !== namespace) {
    return `its annotation ${A.hostNamespace} names another namespace`;
  }
  return null;
}

/**
 * The virtual object as far as the host copy's bookkeeping tells it (context.virtualObject when
 * vgate cannot read the virtual cluster): its kind, name, namespace and uid.
 */
export function virtualStubFromHost(object: JsonObject): JsonObject {
  const meta = isObject(object["metadata"]) ? object["metadata"] : {};
  const annotations = isObject(meta["annotations"]) ? meta["annotations"] : {};
  const A = BOOKKEEPING_ANNOTATIONS;
  const metadata: JsonObject = { name: stringOf(annotations, A.name) };
  const namespace = stringOf(annotations, A.namespace);
  if (namespace !== "") metadata["namespace"] = namespace;
  const uid = stringOf(annotations, A.uid);
  if (uid !== "") metadata["uid"] = uid;
  const out: JsonObject = { metadata };
  if (typeof object["apiVersion"] === "string") out["apiVersion"] = object["apiVersion"];
  if (typeof object["kind"] === "string") out["kind"] = object["kind"];
  return out;
}
