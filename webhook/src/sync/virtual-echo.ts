// --side virtual: a value vCluster's syncer brings back from the host that is exactly what the
// patches made of the virtual object's own value is vgate's patch coming back, not a change made on
// the host; the virtual object keeps its value (docs/decisions.md EPS-29). vCluster copies into the
// virtual object whatever differs on the host from what it last wrote, and vgate's host-side patch
// is such a difference. A reverseExpression undoes it where it is the exact inverse; a reference
// cannot be undone without the host's objects (its short name is a hash), and an expression may
// have no inverse. Pure.

import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";

const MAPS = ["annotations", "labels"] as const;

const mapOf = (meta: Json | undefined, map: string): JsonObject => {
  const value = isObject(meta) ? meta[map] : undefined;
  return isObject(value) ? value : {};
};

/**
 * `patched` (the reverse-patched metadata of a change set) with every annotation and label whose
 * incoming value equals the forward-patched value of the virtual object's own (`forwardOld`) set
 * back to that own value (`old`).
 */
export function cancelEchoes(
  incoming: JsonObject,
  patched: JsonObject,
  forwardOld: JsonObject,
  old: JsonObject,
): JsonObject {
  const out: JsonObject = { ...patched };
  for (const map of MAPS) {
    const sent = mapOf(incoming, map);
    const echoes = Object.keys(sent).filter((key) => {
      const value = sent[key];
      const own = mapOf(old, map)[key];
      return (
        typeof value === "string" &&
        typeof own === "string" &&
        value !== own &&
        mapOf(forwardOld, map)[key] === value
      );
    });
    if (echoes.length === 0) continue;
    const values: JsonObject = { ...mapOf(patched, map) };
    for (const key of echoes) values[key] = mapOf(old, map)[key] as Json;
    out[map] = values;
  }
  return out;
}
