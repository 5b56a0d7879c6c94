// Change sets, as vCluster's syncer computes them: a JSON merge patch (RFC 7386) from the state
// before to the state after, keeping only annotations, labels and finalizers inside metadata.
// Patches on UPDATE run on this change set, never on the whole object, so a transform such as
// '"tenant-" + value' is not applied twice to a value it already rewrote.

import mergePatch from "json-merge-patch";
import { setOwn } from "../patches/traverse.js";
import type { Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";

const KEPT_METADATA = ["annotations", "labels", "finalizers"];

export function changeSet(before: JsonObject, after: JsonObject): JsonObject {
  const diff = (mergePatch.generate(before, after) ?? {}) as JsonObject;
  const meta = diff.metadata;
  if (meta && typeof meta === "object" && !Array.isArray(meta)) {
    const kept: JsonObject = {};
    for (const key of KEPT_METADATA) if (Object.hasOwn(meta, key)) kept[key] = meta[key] as Json;
    if (Object.keys(kept).length) diff.metadata = kept;
    else delete diff.metadata;
  }
  return diff;
}

/** Applies a (patched) change set to the state before; returns a new object. */
export function applyChangeSet(before: JsonObject, changes: JsonObject): JsonObject {
  return mergePatch.apply(structuredClone(before), changes) as JsonObject;
}

/**
 * The state after an UPDATE whose change set was patched: the state before with `changes`
 * applied; of the metadata, annotations, labels and finalizers come from there, the rest as sent.
 */
export function mergeUpdate(before: JsonObject, sent: JsonObject, changes: JsonObject): JsonObject {
  const merged = applyChangeSet(before, changes);
  const sentMeta = isObject(sent["metadata"]) ? sent["metadata"] : {};
  const mergedMeta = isObject(merged["metadata"]) ? merged["metadata"] : {};
  const meta: JsonObject = {};
  for (const [key, value] of Object.entries(sentMeta)) {
    if (!KEPT_METADATA.includes(key)) setOwn(meta, key, value);
  }
  for (const key of KEPT_METADATA) {
    if (Object.hasOwn(mergedMeta, key)) meta[key] = mergedMeta[key] as Json;
  }
  return { ...merged, metadata: meta };
}
