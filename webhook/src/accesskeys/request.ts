// What every OwnedAccessKey rule gets: the admission request reduced to plain, already type-checked
// data. Rules are pure functions of this.

import type { OwnedAccessKey, ResourceIdentity } from "../api/ownedaccesskey.js";

export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** authentication/v1 UserInfo, as kube-apiserver sends it in AdmissionReview.request.userInfo. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

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
}
