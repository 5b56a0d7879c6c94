// --side virtual: a value vCluster's syncer brings back from the host that is exactly what the
// patches made of the virtual object's own value is vgate's patch coming back, not a change made on
// the host; the virtual object keeps its value (docs/decisions.md EPS-29). vCluster copies into the
// virtual object whatever differs on the host from what it last wrote, and vgate's host-side patch
// is such a difference. A reverseExpression undoes it where it is the exact inverse; a reference
// cannot be undone without the host's objects (its short name is a hash), and an expression may
// have no inverse. Pure.

import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";
import { setOwn } from "../patches/traverse.js";

const MAPS = ["annotations", "labels"] as const;

const mapOf = (meta: Json | undefined, map: string): JsonObject => {
  const value = isObject(meta) ? meta[map] : undefined;
  return isObject(value) ? value : {};
};

/**
 * `patched` (the reverse-patched metadata of a change set) with every annotation and label whose
 * incoming value equals the forward-patched value of the virtual object's own (`forwardOld`) set
 * back to that own value (`old`), and every one the virtual object lacks whose value is what the
 * forward patches add left out.
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
    const own = mapOf(old, map);
    const forward = mapOf(forwardOld, map);
    const echoes = Object.keys(sent).filter((key) => {
      const value = sent[key];
      if (typeof value !== "string" || forward[key] !== value) return false;
      // A key the virtual object lacks that the forward patches add (a map patch): KND-61.
      if (!Object.hasOwn(own, key)) return true;
      return typeof own[key] === "string" && value !== own[key];
    });
    if (echoes.length === 0) continue;
    const values: JsonObject = {};
    for (const [key, value] of Object.entries(mapOf(patched, map))) {
      if (!echoes.includes(key)) setOwn(values, key, value);
    }
    for (const key of echoes) if (Object.hasOwn(own, key)) setOwn(values, key, own[key]!);
    out[map] = values;
  }
  return out;
}
