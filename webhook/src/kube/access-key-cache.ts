// The OwnedAccessKey informer: a WatchCache of whole objects. Admission asks it whether a name is
// taken; the token webhook's key index is fed from its changes.

import type { OwnedAccessKey, ResourceIdentity } from "../api/ownedaccesskey.js";
import { WatchCache, type AccessKeyCacheOptions, type CacheTransport } from "./watch-cache.js";

export {
  backoff,
  parseEvent,
  parseList,
  type AccessKeyCacheOptions,
  type CacheTransport,
  type ChangeType,
} from "./watch-cache.js";

export class AccessKeyCache extends WatchCache<OwnedAccessKey> {
  constructor(
    transport: CacheTransport,
    identity: ResourceIdentity,
    options: AccessKeyCacheOptions = {},
  ) {
    const { group, version, resource } = identity;
    super(transport, `/apis/${group}/${version}/${resource}`, (o) => o as OwnedAccessKey, options);
  }
}
