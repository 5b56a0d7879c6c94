// The validating webhook for OwnedAccessKeys: metadata rules, spec checks, ownership and the
// blockOwnerDeletion permission check, in that order. Returns a decision; the admission layer turns
// it into a response.

import { newInvalid, type KubeError } from "../shared/status.js";
import type { KubeApi } from "../kube/ports.js";
import { checkBlockOwnerDeletion } from "./block-owner-deletion.js";
import { metadataWarnings, validateMetadata } from "./metadata.js";
import { checkOwnership } from "./ownership.js";
import { duplicateCheckUnavailable, keyStorageErrors } from "./key-storage.js";
import { previousKeyErrors } from "./previous-key.js";
import type { KeyRequest } from "./request.js";
import { keyWarnings, validateKeySpec } from "./spec-rules.js";

export interface Decision {
  error: KubeError | null;
  warnings: string[];
}

/** The name to put in messages: the object's name, else its generateName, else request.name. */
export function displayName(req: KeyRequest): string {
  const meta = (req.object ?? req.oldObject)?.metadata;
  const pick = (v: unknown): string => (typeof v === "string" ? v : "");
  return pick(meta?.name) || pick(meta?.generateName) || req.name;
}

export async function validateKey(req: KeyRequest, api: KubeApi): Promise<Decision> {
  if (req.operation === "DELETE" || req.operation === "CONNECT") {
    return { error: req.operation === "DELETE" ? checkOwnership(req) : null, warnings: [] };
  }
  const warnings = [...keyWarnings(req), ...metadataWarnings(req)];
  const gk = { group: req.identity.group, kind: req.identity.kind };
  const fieldErrors = [
    ...validateKeySpec(req),
    ...validateMetadata(req),
    ...keyStorageErrors(req),
    ...previousKeyErrors(req),
  ];
  if (fieldErrors.length) return { error: newInvalid(gk, displayName(req), fieldErrors), warnings };
  const unavailable = duplicateCheckUnavailable(req);
  if (unavailable) return { error: unavailable, warnings };
  const ownership = checkOwnership(req);
  if (ownership) return { error: ownership, warnings };
  const blockErrors = await checkBlockOwnerDeletion(req, api);
  if (blockErrors.length) return { error: newInvalid(gk, displayName(req), blockErrors), warnings };
  return { error: null, warnings };
}
