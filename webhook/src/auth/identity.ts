// The user an access key logs in as (TokenReview status.user).
//
// - username: spec.user when set; else `team:<spec.team>`; else spec.subject as it is. A key with
//   none of them has no owner and does not authenticate.
// - uid: the key's metadata.uid (each key is its own login).
// - groups: spec.groups (strings only, duplicates removed, order kept).
// - extra: accessKeyExtra(groupDomain) -> [metadata.name], so authorization can find the key,
//   accessKeyIdExtra(groupDomain) -> [key-id] of the value that logged in, so it can tell a
//   rotated key's old value (refused, or accepted within a grace window: spec.previousKey), and
//   kube's authentication.kubernetes.io/credential-id -> [ACCESSKEYID=<key-id>], so audit events
//   name the credential.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { storedDigest } from "../shared/key-hash.js";
import {
  accessKeyExtra,
  accessKeyIdExtra,
  credentialId,
  CREDENTIAL_ID_EXTRA,
  keyId,
} from "./contracts.js";

/** authentication.k8s.io UserInfo */
export interface KeyUser {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The prefix of a team's username, e.g. `team:platform`. */
export const TEAM_PREFIX = "team:";

const field = (obj: object | undefined, key: string): unknown =>
  obj && Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

/** The username of the key's owner, or undefined when it has none. */
export function keyUsername(key: OwnedAccessKey): string | undefined {
  const spec = key.spec;
  const user = field(spec, "user");
  if (nonEmpty(user)) return user;
  const team = field(spec, "team");
  if (nonEmpty(team)) return `${TEAM_PREFIX}${team}`;
  const subject = field(spec, "subject");
  return nonEmpty(subject) ? subject : undefined;
}

function keyGroups(key: OwnedAccessKey): string[] {
  const groups = field(key.spec, "groups");
  if (!Array.isArray(groups)) return [];
  return [...new Set((groups as unknown[]).filter((g): g is string => typeof g === "string"))];
}

/**
 * The user the key logs in as, or undefined when it has no owner. `loginDigest`: the digest of the
 * value that logged in, when it is not spec.key (a previous key in its grace window), so the
 * key-id names the value actually used.
 */
export function keyUser(
  key: OwnedAccessKey,
  groupDomain: string,
  loginDigest?: Buffer,
): KeyUser | undefined {
  const username = keyUsername(key);
  if (username === undefined) return undefined;
  const uid = field(key.metadata, "uid");
  const name = field(key.metadata, "name");
  const stored = field(key.spec, "key");
  const extra: Record<string, string[]> = {
    [accessKeyExtra(groupDomain)]: [typeof name === "string" ? name : ""],
  };
  const digest =
    loginDigest ?? (typeof stored === "string" && stored !== "" ? storedDigest(stored) : undefined);
  if (digest) {
    const id = keyId(digest.toString("hex"));
    extra[accessKeyIdExtra(groupDomain)] = [id];
    extra[CREDENTIAL_ID_EXTRA] = [credentialId(id)];
  }
  return { username, uid: typeof uid === "string" ? uid : "", groups: keyGroups(key), extra };
}
