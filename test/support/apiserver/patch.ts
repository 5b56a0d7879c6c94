// PATCH bodies, as kube-apiserver's patch handler applies them to the stored object: JSON patch
// (RFC 6902), JSON merge patch (RFC 7386) and, for built-in types only, strategic merge patch.
// The content type is checked first (415 with the accepted list); a JSON patch whose operations
// cannot be applied is 422 with the generic "rejected our request" text, as kube answers it.

import jsonpatch from "fast-json-patch";
import mergePatch from "json-merge-patch";
import { newBadRequest } from "../../../webhook/src/api/status.js";
import { unprocessable, unsupportedMediaType } from "./errors.js";
import type { ResourceType } from "./resources.js";
import type { KubeObject } from "./store.js";
import { strategicMerge, strategyTable } from "./strategic-merge.js";
import { isCustomResource } from "./type-strategy.js";

export const JSON_PATCH = "application/json-patch+json";
export const MERGE_PATCH = "application/merge-patch+json";
export const STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";
export const APPLY_PATCH = "application/apply-patch+yaml";

/** The media types kube's PATCH route lists for the type (server-side apply included). */
export function patchTypes(type: ResourceType): string[] {
  return isCustomResource(type)
    ? [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    : [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH];
}

/** The Content-Type without parameters (`; charset=utf-8`), as the patch handler reads it. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * 415 unless the type accepts the media type. Server-side apply is listed (as kube lists it) but
 * not implemented by the emulator, so it is refused the same way.
 */
export function checkPatchType(type: ResourceType, contentType: string): void {
  const accepted = patchTypes(type);
  if (!accepted.includes(contentType) || contentType === APPLY_PATCH) {
    throw unsupportedMediaType(accepted);
  }
}

/** The object after the patch; `original` is not changed. */
export function applyPatch(
  type: ResourceType,
  contentType: string,
  original: KubeObject,
  patch: unknown,
): KubeObject {
  switch (contentType) {
    case JSON_PATCH:
      return applyJsonPatch(original, patch);
    case MERGE_PATCH:
      if (typeof patch !== "object" || patch === null) throw newBadRequest("Invalid JSON Patch");
      return asObject(mergePatch.apply(structuredClone(original), patch));
    default:
      return asObject(strategicMerge(original, patch, strategyTable(type.group, type.kind)));
  }
}

function applyJsonPatch(original: KubeObject, patch: unknown): KubeObject {
  if (!Array.isArray(patch)) {
    // evanphx/json-patch decodes the body into a list of operations.
    const got = typeof patch === "object" && patch !== null ? "object" : typeof patch;
    throw newBadRequest(`json: cannot unmarshal ${got} into Go value of type jsonpatch.Patch`);
  }
  try {
    const ops = patch as jsonpatch.Operation[];
    const result = jsonpatch.applyPatch(structuredClone(original), ops, true, false).newDocument;
    return asObject(result);
  } catch {
    throw unprocessable();
  }
}

function asObject(value: unknown): KubeObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw newBadRequest("the patched object is not a JSON object");
  }
  const obj = value as KubeObject;
  if (typeof obj.metadata !== "object" || obj.metadata === null) {
    obj.metadata = { name: "" };
  }
  return obj;
}
