// The OwnedAccessKey informer: a WatchCache of what its readers need of each key, packed outside
// the V8 heap (controller/packed-store.ts). Admission asks it whether a name is taken (and whether
// that key is being deleted); the token webhook's key index is fed from its changes, and the token
// and authorization webhooks and the activity recorder read keys from it by name.

import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import {
  WatchCache,
  type WatchCacheOptions as AccessKeyCacheOptions,
  type CacheTransport,
} from "./controller/watch-cache.js";
import { PackedStore, type Codec } from "./controller/packed-store.js";

export {
  backoff,
  parseEvent,
  parseList,
  type WatchCacheOptions as AccessKeyCacheOptions,
  type CacheTransport,
  type ChangeType,
} from "./controller/watch-cache.js";

/**
 * The fields of a key that its readers use, and nothing else: the token review (owner, groups,
 * key, previous key, disabled, TTL, deletion, uid), the authorization webhook (the same, and the scope), the
 * activity recorder (status, resourceVersion) and admission (name, deletionTimestamp). So
 * metadata.managedFields (about half of a key as the API server sends it), annotations (kubectl's
 * last-applied copy holds the key again), labels, displayName, description and the OIDC fields
 * (tokens among them) are not held. A reader that needs another field must add it here.
 */
export const KEPT_FIELDS = {
  metadata: ["name", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"],
  spec: [
    "user",
    "team",
    "subject",
    "groups",
    "key",
    "previousKey",
    "disabled",
    "ttl",
    "ttlAfterLastActivity",
    "scope",
    "rules",
    "allowLoftCli",
  ],
  status: ["lastActivity", "weakKey", "previousKey"],
} as const;

function pick(value: unknown, fields: readonly string[]): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const from = value as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const field of fields) {
    if (Object.hasOwn(from, field) && from[field] !== undefined) kept[field] = from[field];
  }
  return kept;
}

/** What the cache keeps of an OwnedAccessKey (KEPT_FIELDS). */
export function keptFields(object: Record<string, unknown>): OwnedAccessKey {
  const kept: Record<string, unknown> = {};
  for (const [part, fields] of Object.entries(KEPT_FIELDS)) {
    const value = Object.hasOwn(object, part) ? pick(object[part], fields) : undefined;
    if (value !== undefined) kept[part] = value;
  }
  return kept as OwnedAccessKey;
}

/**
 * A kept key as a short JSON array, without field names, name or resourceVersion (the store's
 * key and version): about 140 bytes a key instead of 240. An absent field is null (no kept field
 * of kube's is null where its readers would tell null from absent).
 */
export const packedKey: Codec<OwnedAccessKey> = {
  pack: ({ metadata: m, spec, status }) => [
    m?.uid ?? null,
    m?.creationTimestamp ?? null,
    m?.deletionTimestamp ?? null,
    spec ?? null,
    status ?? null,
  ],
  unpack: (packed, name, version) => {
    const [uid, created, deleted, spec, status] = packed as unknown[];
    const metadata: Record<string, unknown> = { name };
    if (uid !== null) metadata["uid"] = uid;
    if (version !== "") metadata["resourceVersion"] = version;
    if (created !== null) metadata["creationTimestamp"] = created;
    if (deleted !== null) metadata["deletionTimestamp"] = deleted;
    const key: Record<string, unknown> = { metadata };
    if (spec !== null) key["spec"] = spec;
    if (status !== null) key["status"] = status;
    return key as OwnedAccessKey;
  },
};

export class AccessKeyCache extends WatchCache<OwnedAccessKey> {
  constructor(
    transport: CacheTransport,
    identity: ResourceIdentity,
    options: AccessKeyCacheOptions = {},
  ) {
    const { group, version, resource } = identity;
    const path = `/apis/${group}/${version}/${resource}`;
    super(transport, path, keptFields, options, () => new PackedStore(packedKey));
  }
}
