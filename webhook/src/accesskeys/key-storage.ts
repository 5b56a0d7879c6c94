// How spec.key is stored (docs/decisions.md OAK-14). In plain storage spec.key is the bearer token.
// In hashed storage (--key-storage=hashed) the mutating webhook replaces a client's key with
// `sha256:<hex>` before it is stored, so etcd and every reader of the CRD see only hashes; the
// client keeps the key it made (kubectl accesskey create and rotate make their own). Either way no
// two keys may share a key: the token webhook could not tell their owners apart.

import { OMIT_VALUE, required, invalid, type FieldError } from "../api/field-errors.js";
import type { OwnedAccessKey } from "../api/ownedaccesskey.js";
import { digestsEqual, hashKey, isStoredHash, storedDigest } from "./key-hash.js";
import { isObject, own } from "./json-fields.js";
import type { KeyRequest } from "./request.js";

function keyOf(obj: OwnedAccessKey | null): string | undefined {
  const spec = isObject(obj) ? own(obj, "spec") : undefined;
  const key = isObject(spec) ? own(spec, "key") : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/** `obj` with a plain spec.key replaced by its hash; `obj` itself when there is nothing to hash. */
export function hashStoredKey(obj: OwnedAccessKey): OwnedAccessKey {
  const key = keyOf(obj);
  // An unusable key is left as it is, for the validating webhook to refuse with the reason.
  if (key === undefined || isStoredHash(key) || !usable(key)) return obj;
  return { ...obj, spec: { ...obj.spec, key: hashKey(key) } };
}

const HASHED_NEEDS_KEY =
  "vgate stores keys hashed (--key-storage=hashed), so the client must supply the key, " +
  "as kubectl accesskey create does; it cannot be given back";
const NOT_HASHED =
  "must be stored as sha256:<hex> with --key-storage=hashed; is the mutating webhook installed?";
const DUPLICATE = "another access key already has this key";
/** What a bearer token can be: it travels in an HTTP Authorization header (token-review.ts). */
export const MAX_KEY_LENGTH = 8192;
const USABLE_KEY = /^[\x21-\x7e]+$/;
const UNUSABLE = `must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters without spaces, as it is sent in an HTTP Authorization header`;

/** Whether a plain key could ever be presented as a bearer token. */
function usable(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && USABLE_KEY.test(key);
}

/** The storage rules for CREATE and UPDATE: hashed storage holds only hashes, keys are unique. */
export function keyStorageErrors(req: KeyRequest): FieldError[] {
  if (req.operation !== "CREATE" && req.operation !== "UPDATE") return [];
  const key = keyOf(req.object);
  if (key !== undefined && !usable(key)) return [invalid("spec.key", OMIT_VALUE, UNUSABLE)];
  if (req.keyStorage === "hashed") {
    if (key === undefined) return [required("spec.key", HASHED_NEEDS_KEY)];
    if (!isStoredHash(key)) return [invalid("spec.key", OMIT_VALUE, NOT_HASHED)];
  }
  if (key === undefined || !req.namesWithSameKey) return [];
  const old = keyOf(req.oldObject);
  if (old !== undefined && digestsEqual(storedDigest(old), storedDigest(key))) return [];
  const self = req.object?.metadata?.name;
  const others = req.namesWithSameKey(key).filter((n) => n !== self);
  return others.length > 0 ? [invalid("spec.key", OMIT_VALUE, DUPLICATE)] : [];
}
