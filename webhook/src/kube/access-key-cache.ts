// The OwnedAccessKey informer: a WatchCache of whole objects. Admission asks it whether a name is
// taken; the token webhook's key index is fed from its changes.

import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import { WatchCache, type AccessKeyCacheOptions, type CacheTransport } from "./watch-cache.js";

export {
  backoff,
  parseEvent,
  parseList,
  type AccessKeyCacheOptions,
  type CacheTransport,
  type ChangeType,
} from "./watch-cache.js";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The object without what no reader of the cache needs and what costs the most memory:
 * metadata.managedFields (about half of a key as the API server sends it) and kubectl's
 * last-applied annotation (a second copy of the object, key included), as client-go's informers
 * drop managedFields with a transform.
 */
export function withoutBookkeeping(object: Record<string, unknown>): OwnedAccessKey {
  const meta = object["metadata"];
  if (typeof meta !== "object" || meta === null) return object as OwnedAccessKey;
  const { managedFields, annotations, ...rest } = meta as Record<string, unknown>;
  const lean: Record<string, unknown> = rest;
  if (typeof annotations === "object" && annotations !== null) {
    const { [LAST_APPLIED]: lastApplied, ...others } = annotations as Record<string, unknown>;
    lean["annotations"] = lastApplied === undefined ? annotations : others;
  } else if (annotations !== undefined) {
    lean["annotations"] = annotations;
  }
  if (managedFields === undefined && lean["annotations"] === annotations) {
    return object as OwnedAccessKey;
  }
  return { ...object, metadata: lean } as OwnedAccessKey;
}

export class AccessKeyCache extends WatchCache<OwnedAccessKey> {
  constructor(
    transport: CacheTransport,
    identity: ResourceIdentity,
    options: AccessKeyCacheOptions = {},
  ) {
    const { group, version, resource } = identity;
    super(transport, `/apis/${group}/${version}/${resource}`, withoutBookkeeping, options);
  }
}
