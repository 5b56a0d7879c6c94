// Turns an AdmissionRequest for ownedaccesskeys into an AdmissionReview response, for the mutating
// and the validating route. No answer quotes a key the request holds (keyHider).

import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import { asKubeError, newBadRequest, type Status } from "../shared/status.js";
import { allow, allowWithPatch, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import type { KubeApi } from "../kube/ports.js";
import { keyHider } from "./key-exposure.js";
import { mutateKey } from "./mutate.js";
import type { KeyRequest, KeyStorage } from "./request.js";
import { validateKey } from "./validate.js";
import { expiresAt } from "../shared/key-expiry.js";
import { retentionOver } from "./expiry-notices.js";

export interface AccessKeyAdmission {
  identity: ResourceIdentity;
  adminGroups: readonly string[];
  api: KubeApi;
  /** How spec.key is stored; "plain" when omitted. */
  keyStorage?: KeyStorage;
  /**
   * The token webhook's key index, for the duplicate-key check; absent when nothing is stored
   * (no API server). Until it has synced, writes that set a key fail closed (503).
   */
  keyIndex?: { synced(): boolean; namesWithSameKey(stored: string): string[] };
  /** The longest grace a rotation may ask for (--max-rotation-grace); 24 h when omitted. */
  maxRotationGraceMs?: number;
  /** The clock; Date.now when omitted. */
  now?: () => number;
  /**
   * --expired-key-retention: the user vgate runs as may delete a key expired longer than
   * `retentionMs` ago (cli/serve-lifecycle.ts deletes them); absent: only owners and admins delete.
   */
  expiredCleanup?: { username: () => string | undefined; retentionMs: number; now: () => number };
}

/** Whether a DELETE is vgate's own of a key whose retention is over. */
function isExpiredCleanup(req: AdmissionRequest, deps: AccessKeyAdmission): boolean {
  const cleanup = deps.expiredCleanup;
  if (!cleanup || req.operation !== "DELETE" || !req.oldObject) return false;
  const self = cleanup.username();
  if (self === undefined || req.userInfo.username !== self) return false;
  const at = expiresAt(req.oldObject);
  return at !== undefined && retentionOver(at, cleanup.now(), cleanup.retentionMs);
}

/** The request must be about our resource; anything else means the webhook is misconfigured. */
function checkResource(req: AdmissionRequest, identity: ResourceIdentity): void {
  const { group, version, resource } = req.resource;
  if (group === identity.group && version === identity.version && resource === identity.resource) {
    if (req.subResource === "") return;
  }
  const got = `${group || "core"}/${version} ${resource}${req.subResource ? `/${req.subResource}` : ""}`;
  throw newBadRequest(
    `this endpoint admits ${identity.resource}.${identity.group}/${identity.version} only, but the request is for ${got}; check the webhook configuration's rules`,
  );
}

function toKeyRequest(req: AdmissionRequest, deps: AccessKeyAdmission): KeyRequest {
  return {
    operation: req.operation,
    object: req.object as OwnedAccessKey | null,
    oldObject: req.oldObject as OwnedAccessKey | null,
    name: req.name,
    userInfo: req.userInfo,
    isAdmin: req.userInfo.groups.some((g) => deps.adminGroups.includes(g)),
    adminGroups: deps.adminGroups,
    identity: deps.identity,
    dryRun: req.dryRun,
    keyStorage: deps.keyStorage ?? "plain",
    keyIndex: deps.keyIndex,
    now: (deps.now ?? Date.now)(),
    maxRotationGraceMs: deps.maxRotationGraceMs,
    expiredCleanup: isExpiredCleanup(req, deps),
  };
}

function requireObject(req: AdmissionRequest): void {
  if ((req.operation === "CREATE" || req.operation === "UPDATE") && !req.object) {
    throw newBadRequest(`invalid AdmissionReview: request.object is required for ${req.operation}`);
  }
  if ((req.operation === "UPDATE" || req.operation === "DELETE") && !req.oldObject) {
    throw newBadRequest(
      `invalid AdmissionReview: request.oldObject is required for ${req.operation}`,
    );
  }
}

/**
 * `review` with every key the request's objects hold hidden from its texts: a refusal's message,
 * name and causes, and the warnings. A name or a field path can hold a key the scrubber cannot
 * know (one found by its hash alone); the hider is built only for answers that carry text.
 */
function hideKeys(req: AdmissionRequest, review: AdmissionReviewResponse): AdmissionReviewResponse {
  const { status, warnings } = review.response;
  if (!status && !warnings?.length) return review;
  const hide = keyHider([req.object, req.oldObject] as (OwnedAccessKey | null)[]);
  const response = { ...review.response };
  if (status) response.status = hideInStatus(status, hide);
  if (warnings?.length) response.warnings = warnings.map(hide);
  return { ...review, response };
}

function hideInStatus(status: Status, hide: (text: string) => string): Status {
  const out: Status = { ...status, message: hide(status.message) };
  const details = status.details;
  if (!details) return out;
  out.details = { ...details };
  if (details.name !== undefined) out.details.name = hide(details.name);
  if (details.causes) {
    out.details.causes = details.causes.map((c) => ({
      ...c,
      message: hide(c.message),
      field: hide(c.field),
    }));
  }
  return out;
}

/** Checks the request is for our resource and well-formed, then answers with `decide`. */
async function admit(
  req: AdmissionRequest,
  deps: AccessKeyAdmission,
  decide: (keyRequest: KeyRequest) => Promise<AdmissionReviewResponse>,
): Promise<AdmissionReviewResponse> {
  let review: AdmissionReviewResponse;
  try {
    checkResource(req, deps.identity);
    requireObject(req);
    review = await decide(toKeyRequest(req, deps));
  } catch (err) {
    review = deny(req.uid, asKubeError(err));
  }
  return hideKeys(req, review);
}

export function admitValidate(
  req: AdmissionRequest,
  deps: AccessKeyAdmission,
): Promise<AdmissionReviewResponse> {
  return admit(req, deps, async (keyRequest) => {
    const decision = await validateKey(keyRequest, deps.api);
    return decision.error
      ? deny(req.uid, decision.error, decision.warnings)
      : allow(req.uid, decision.warnings);
  });
}

export function admitMutate(
  req: AdmissionRequest,
  deps: AccessKeyAdmission,
): Promise<AdmissionReviewResponse> {
  return admit(req, deps, async (keyRequest) => {
    const mutation = await mutateKey(keyRequest, deps.api);
    if (mutation.error) return deny(req.uid, mutation.error);
    return allowWithPatch(req.uid, req.object, mutation.object);
  });
}
