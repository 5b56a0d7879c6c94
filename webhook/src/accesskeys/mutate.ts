// The mutating webhook for OwnedAccessKeys. On CREATE it owns name generation
// (docs/decisions.md OAK-4, so it can report a generateName collision as kube does: 409
// AlreadyExists, retry after 1 s), rejects an explicit name that already exists, and fills in the
// defaults of docs/decisions.md OAK-8.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import {
  newAlreadyExists,
  newGenerateNameConflict,
  newInvalid,
  type KubeError,
} from "../shared/status.js";
import type { KubeApi } from "../kube/ports.js";
import { applyCreateDefaults } from "./defaults.js";
import { findFreeName } from "./generate-name.js";
import { generateAccessKey } from "../shared/key-generation.js";
import { exposureErrors, hashLastApplied, plaintextKeys } from "./key-exposure.js";
import { hashStoredKey } from "./key-storage.js";
import { mutatePreviousKey } from "./previous-key.js";
import type { KeyRequest } from "./request.js";

export interface Mutation {
  error: KubeError | null;
  /** The object to admit; identical to the request's when nothing changed. */
  object: OwnedAccessKey | null;
}

/** kube retries a generateName create after one second (apierrors.NewGenerateNameConflict). */
const GENERATE_NAME_RETRY_AFTER_SECONDS = 1;

const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v !== "";

async function chooseName(
  req: KeyRequest,
  api: KubeApi,
): Promise<{ name: string } | { error: KubeError }> {
  const meta = req.object?.metadata;
  const gr = { group: req.identity.group, resource: req.identity.resource };
  if (nonEmptyString(meta?.name)) {
    const existing = await api.getAccessKey(meta.name);
    if (!existing) return { name: meta.name };
    // kube prefixes the message when the existing object is terminating.
    const prefix = existing.metadata?.deletionTimestamp ? "object is being deleted: " : "";
    return { error: newAlreadyExists(gr, meta.name, prefix) };
  }
  if (nonEmptyString(meta?.generateName)) {
    const found = await findFreeName(
      meta.generateName,
      async (n) => (await api.getAccessKey(n)) !== null,
    );
    if ("name" in found) return { name: found.name };
    return {
      error: newGenerateNameConflict(gr, found.conflict, GENERATE_NAME_RETRY_AFTER_SECONDS),
    };
  }
  return { name: "" };
}

/**
 * Hashed storage keeps no plaintext key: spec.key and the copy kubectl keeps in
 * last-applied-configuration are hashed, and a key that shows anywhere else is refused (422).
 */
function storeHashed(req: KeyRequest, obj: OwnedAccessKey): Mutation {
  const hashed = hashLastApplied(hashStoredKey(obj, req.oldObject));
  const errors = exposureErrors(hashed, plaintextKeys(obj));
  if (errors.length === 0) return { error: null, object: hashed };
  const name = typeof obj.metadata?.name === "string" ? obj.metadata.name : req.name;
  const gk = { group: req.identity.group, kind: req.identity.kind };
  return { error: newInvalid(gk, name, errors), object: null };
}

/**
 * An UPDATE: a rotated key is hashed as on CREATE in hashed storage, and spec.previousKey follows
 * the rotation (previous-key.ts) in either storage mode.
 */
function mutateUpdate(req: KeyRequest, obj: OwnedAccessKey): Mutation {
  const stored = req.keyStorage === "hashed" ? storeHashed(req, obj) : { error: null, object: obj };
  if (stored.error || !stored.object) return stored;
  const rotated = mutatePreviousKey(req, stored.object);
  if ("object" in rotated) return { error: null, object: rotated.object };
  const name = typeof obj.metadata?.name === "string" ? obj.metadata.name : req.name;
  const gk = { group: req.identity.group, kind: req.identity.kind };
  return { error: newInvalid(gk, name, rotated.errors), object: null };
}

export async function mutateKey(req: KeyRequest, api: KubeApi): Promise<Mutation> {
  const obj = req.object;
  const meta: unknown = obj?.metadata;
  if (req.operation === "UPDATE" && obj) return mutateUpdate(req, obj);
  if (
    req.operation !== "CREATE" ||
    !obj ||
    typeof meta !== "object" ||
    !meta ||
    Array.isArray(meta)
  ) {
    // Nothing to default; a malformed object is left for the validating webhook to reject.
    return { error: null, object: obj };
  }
  const chosen = await chooseName(req, api);
  if ("error" in chosen) return { error: chosen.error, object: null };
  const named: OwnedAccessKey = chosen.name
    ? { ...obj, metadata: { ...obj.metadata, name: chosen.name } }
    : obj;
  const defaulted = applyCreateDefaults(
    named,
    { username: req.userInfo.username, name: chosen.name },
    // In hashed storage a key made here could never be given back: the client must bring one.
    req.keyStorage === "hashed" ? () => "" : generateAccessKey,
  );
  return req.keyStorage === "hashed"
    ? storeHashed(req, defaulted)
    : { error: null, object: defaulted };
}
