// What every OwnedAccessKey rule gets: the admission request reduced to plain, already type-checked
// data. Rules are pure functions of this.

import type { Operation } from "../admission/review.js";
import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import type { UserInfo } from "../api/user-info.js";

/** How spec.key is stored (--key-storage; docs/decisions.md OAK-14). */
export type KeyStorage = "plain" | "hashed";

export interface KeyRequest {
  operation: Operation;
  /** The new object: set on CREATE and UPDATE, null on DELETE. */
  object: OwnedAccessKey | null;
  /** The stored object: set on UPDATE and DELETE, null on CREATE. */
  oldObject: OwnedAccessKey | null;
  /** `request.name`; empty on CREATE with generateName in the mutating phase. */
  name: string;
  userInfo: UserInfo;
  /** Whether userInfo.groups meets the configured admin groups (default system:masters). */
  isAdmin: boolean;
  /** The admin groups in force, for messages. */
  adminGroups: readonly string[];
  identity: ResourceIdentity;
  dryRun: boolean;
  /** How spec.key is stored (--key-storage); plain when absent. */
  keyStorage?: KeyStorage;
  /** The clock (ms), for spec.previousKey's deadline; Date.now() when absent. */
  now?: number;
  /** vgate serve --max-rotation-grace; 24 h when absent. */
  maxRotationGraceMs?: number;
  /**
   * A DELETE by vgate's own identity of a key whose --expired-key-retention is over (the key
   * lifecycle's cleanup): allowed without being the key's owner or an admin (OAK-40).
   */
  expiredCleanup?: boolean;
  /** The key index, for the duplicate-key check; absent when nothing is stored (no API server). */
  keyIndex?: { synced(): boolean; namesWithSameKey(stored: string): string[] };
}
