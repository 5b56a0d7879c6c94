// How spec.key is stored (docs/decisions.md OAK-14). In plain storage spec.key is the bearer token.
// In hashed storage (--key-storage=hashed) the mutating webhook replaces a client's key with
// `sha256:<hex>` before it is stored, so etcd and every reader of the CRD see only hashes; the
// client keeps the key it made (kubectl accesskey create and rotate make their own). Either way no
// two keys may share a key: the token webhook could not tell their owners apart.

import { OMIT_VALUE, required, invalid, type FieldError } from "../shared/field-errors.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { newServiceUnavailable, type KubeError } from "../shared/status.js";
import { exposureErrors, lastAppliedErrors } from "./key-exposure.js";
import {
  digestsEqual,
  hashKey,
  isStoredHash,
  MIN_KEY_LENGTH,
  storedDigest,
} from "../shared/key-hash.js";
import { isObject, own } from "./json-fields.js";
import type { KeyRequest } from "./request.js";

function keyOf(obj: OwnedAccessKey | null): string | undefined {
  const spec = isObject(obj) ? own(obj, "spec") : undefined;
  const key = isObject(spec) ? own(spec, "key") : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/**
 * `obj` with a plain spec.key replaced by its hash; `obj` itself when there is nothing to hash. A
 * key that could not be stored (unusable, or too short and new) is left as it is, for the
 * validating webhook to refuse with the reason.
 */
export function hashStoredKey(
  obj: OwnedAccessKey,
  old: OwnedAccessKey | null = null,
): OwnedAccessKey {
  const key = keyOf(obj);
  if (key === undefined || isStoredHash(key) || !usable(key)) return obj;
  if (key.length < MIN_KEY_LENGTH && isNewKey(key, old)) return obj;
  return { ...obj, spec: { ...obj.spec, key: hashKey(key) } };
}

/** Whether `key` is another key than the stored object's (a CREATE, or a rotation). */
function isNewKey(key: string, old: OwnedAccessKey | null): boolean {
  const stored = keyOf(old);
  return stored === undefined || !digestsEqual(storedDigest(stored), storedDigest(key));
}

const HASHED_NEEDS_KEY =
  "vgate stores keys hashed (--key-storage=hashed), so the client must supply the key, " +
  "as kubectl accesskey create does; it cannot be given back";
const NOT_HASHED =
  "must be stored as sha256:<hex> with --key-storage=hashed; is the mutating webhook installed?";
const DUPLICATE = "another access key already has this key";
const WEAK = `must be at least ${MIN_KEY_LENGTH} characters (kubectl accesskey makes 43 from 256 random bits)`;
/** What a bearer token can be: it travels in an HTTP Authorization header (token-review.ts). */
export const MAX_KEY_LENGTH = 8192;
const USABLE_KEY = /^[\x21-\x7e]+$/;
const UNUSABLE = `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters without spaces, as it is sent in an HTTP Authorization header`;

/** Whether a plain key could ever be presented as a bearer token. */
function usable(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && USABLE_KEY.test(key);
}

/**
 * The storage rules for CREATE and UPDATE: a new key is usable and at least MIN_KEY_LENGTH long
 * (a key that already exists keeps working, whatever its length), hashed storage holds only
 * hashes (in spec.key and in last-applied-configuration) and the key nowhere else, and keys are
 * unique.
 */
export function keyStorageErrors(req: KeyRequest): FieldError[] {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return [];
  const key = keyOf(req.object);
  if (key !== undefined && !usable(key)) return [invalid("spec.key", OMIT_VALUE, UNUSABLE)];
  const fresh = key !== undefined && isNewKey(key, req.oldObject);
  if (fresh && !isStoredHash(key) && key.length < MIN_KEY_LENGTH) {
    return [invalid("spec.key", OMIT_VALUE, WEAK)];
  }
  if (req.keyStorage === "hashed") {
    if (key === undefined) return [required("spec.key", HASHED_NEEDS_KEY)];
    if (!isStoredHash(key)) return [invalid("spec.key", OMIT_VALUE, NOT_HASHED)];
    const applied = lastAppliedErrors(req.object);
    if (applied.length) return applied;
    // The mutating webhook refused a key shown elsewhere already; this is the object that will be
    // stored, after every mutating webhook, so it is checked again where the write is decided.
    const exposed = req.object ? exposureErrors(req.object, []) : [];
    if (exposed.length) return exposed;
  }
  if (!fresh || !req.keyIndex) return [];
  const self = req.object?.metadata?.name;
  const others = req.keyIndex.namesWithSameKey(key).filter((n) => n !== self);
  return others.length > 0 ? [invalid("spec.key", OMIT_VALUE, DUPLICATE)] : [];
}

/**
 * A write that sets a new key cannot be checked for a duplicate until the key index has synced:
 * it fails closed with 503 ServiceUnavailable, as other checks that need the API server do.
 */
export function duplicateCheckUnavailable(req: KeyRequest): KubeError | null {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return null;
  const key = keyOf(req.object);
  if (key === undefined || !req.keyIndex || req.keyIndex.synced()) return null;
  if (!isNewKey(key, req.oldObject)) return null;
  return newServiceUnavailable(
    "the access keys are not loaded yet, so vgate cannot check that no other key has this key; try again",
  );
}
