// Builds AdmissionReview responses. This is the only place that does: every route answers through
// these functions so uid echo, status shape and patch encoding are the same everywhere.

import fastJsonPatch from "fast-json-patch";
import type { KubeError } from "../shared/status.js";
import {
  ADMISSION_API_VERSION,
  type AdmissionResponse,
  type AdmissionReviewResponse,
} from "./review.js";

function review(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
}

function withWarnings(response: AdmissionResponse, warnings: readonly string[]): AdmissionResponse {
  const unique = [...new Set(warnings)];
  if (unique.length) response.warnings = unique;
  return response;
}

export function allow(uid: string, warnings: readonly string[] = []): AdmissionReviewResponse {
  return review(withWarnings({ uid, allowed: true }, warnings));
}

/**
 * Allows with the JSONPatch that turns `original` into `mutated`; without a difference, a plain
 * allow. The patch is computed with fast-json-patch (RFC 6902) and sent base64-encoded.
 */
export function allowWithPatch(
  uid: string,
  original: unknown,
  mutated: unknown,
  warnings: readonly string[] = [],
): AdmissionReviewResponse {
  const isObj = (v: unknown): v is object => typeof v === "object" && v !== null;
  if (!isObj(original) || !isObj(mutated)) return allow(uid, warnings);
  const ops = fastJsonPatch.compare(original, mutated);
  if (ops.length === 0) return allow(uid, warnings);
  const patch = Buffer.from(JSON.stringify(ops)).toString("base64");
  return review(withWarnings({ uid, allowed: true, patch, patchType: "JSONPatch" }, warnings));
}

export function deny(
  uid: string,
  error: KubeError,
  warnings: readonly string[] = [],
): AdmissionReviewResponse {
  return review(withWarnings({ uid, allowed: false, status: error.toStatus() }, warnings));
}
