// What the token webhook's tests share: a stand-in for the OwnedAccessKey watch cache, and keys
// shaped as the API server stores them.

import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import type { KeysByName } from "../../../webhook/src/auth/contracts.js";

/** A stand-in for the watch cache. */
export class FakeKeys implements KeysByName {
  readonly objects = new Map<string, OwnedAccessKey>();
  isSynced = true;
  synced(): boolean {
    return this.isSynced;
  }
  get(name: string): OwnedAccessKey | undefined {
    return this.objects.get(name);
  }
}

/** A stored key: uid `uid-<name>`, created 2026-03-01T00:00:00Z. */
export function accessKey(
  name: string,
  spec: Record<string, unknown>,
  more: { metadata?: Record<string, unknown>; status?: Record<string, unknown> } = {},
): OwnedAccessKey {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: "2026-03-01T00:00:00Z",
      ...more.metadata,
    },
    spec,
    status: more.status ?? {},
  } as OwnedAccessKey;
}
