// Resolves host objects back to their virtual names from vCluster's bookkeeping annotations, for
// reference patches going host → virtual (docs/reference.md#reference-patches-reverse). Only
// objects that carry the annotations are known; anything else resolves to null and the engine
// leaves the value unchanged.

import type { Json, JsonObject, ReferenceResolver } from "./types.js";

export const OBJECT_NAME_ANNOTATION = "vcluster.loft.sh/object-name";
export const OBJECT_NAMESPACE_ANNOTATION = "vcluster.loft.sh/object-namespace";

const str = (v: Json | undefined): string => (typeof v === "string" ? v : "");

function field(obj: JsonObject, key: string): JsonObject {
  const v = Object.hasOwn(obj, key) ? obj[key] : undefined;
  return v && typeof v === "object" && !Array.isArray(v) ? v : {};
}

const keyOf = (kind: string, namespace: string, name: string): string =>
  JSON.stringify([kind, namespace, name]);

export function resolverFromObjects(objects: readonly Json[]): ReferenceResolver {
  const index = new Map<string, { namespace: string; name: string }>();
  for (const obj of objects) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) continue;
    const meta = field(obj, "metadata");
    const annotations = field(meta, "annotations");
    const name = str(annotations[OBJECT_NAME_ANNOTATION]);
    if (!name) continue;
    index.set(keyOf(str(obj.kind), str(meta.namespace), str(meta.name)), {
      name,
      namespace: str(annotations[OBJECT_NAMESPACE_ANNOTATION]),
    });
  }
  return {
    hostToVirtual: (ref, hostNamespace, hostName) =>
      index.get(keyOf(ref.kind, hostNamespace, hostName)) ??
      // Cluster-scoped referents carry no namespace.
      index.get(keyOf(ref.kind, "", hostName)) ??
      null,
  };
}
