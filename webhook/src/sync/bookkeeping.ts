// vCluster's own annotations and labels (the `vcluster.loft.sh/` prefix: object-name, object-uid,
// managed-by, translated label keys, ...) are never patched. A `metadata.annotations[*]` patch
// would otherwise rewrite them and break the mapping back to the virtual object
// (docs/reference.md#patch-change-sets, and docs/reference.md#patch-gotchas item 4). They are set
// aside before the patches run and put back afterwards.

import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";

export const VCLUSTER_PREFIX = "vcluster.loft.sh/";
const MAPS = ["annotations", "labels"] as const;

type Saved = Record<(typeof MAPS)[number], [string, Json][]>;

export interface Protected {
  object: JsonObject;
  restore(patched: JsonObject): JsonObject;
}

export function protectBookkeeping(object: JsonObject): Protected {
  const meta = object.metadata;
  const saved: Saved = { annotations: [], labels: [] };
  if (!isObject(meta)) return { object, restore: (p) => p };
  const strippedMeta: JsonObject = { ...meta };
  for (const map of MAPS) {
    const values = meta[map];
    if (!isObject(values)) continue;
    const kept: JsonObject = {};
    for (const [k, v] of Object.entries(values)) {
      if (k.startsWith(VCLUSTER_PREFIX)) saved[map].push([k, v]);
      else
        Object.defineProperty(kept, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    strippedMeta[map] = kept;
  }
  return {
    object: { ...object, metadata: strippedMeta },
    restore(patched) {
      const pm = isObject(patched.metadata) ? { ...patched.metadata } : {};
      for (const map of MAPS) {
        if (!isObject(meta[map])) continue;
        const values: JsonObject = isObject(pm[map]) ? { ...pm[map] } : {};
        for (const [k, v] of saved[map]) values[k] = v;
        pm[map] = values;
      }
      return { ...patched, metadata: pm };
    },
  };
}
