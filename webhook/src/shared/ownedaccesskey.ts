// The OwnedAccessKey resource (management.<group-domain>/v1), shared by the webhook and the plugin.
// Field list: docs/reference.md#ownedaccesskey-fields; enum values:
// docs/reference.md#access-key-types.

export const DEFAULT_GROUP_DOMAIN = "loft.sh";
export const KIND = "OwnedAccessKey";
export const PLURAL = "ownedaccesskeys";
export const VERSION = "v1";

/** Everything that depends on the configurable group domain, computed once. */
export interface ResourceIdentity {
  /** `management.loft.sh` */
  group: string;
  /** `management.loft.sh/v1` */
  apiVersion: string;
  kind: typeof KIND;
  resource: typeof PLURAL;
  version: typeof VERSION;
}

export function resourceIdentity(groupDomain = DEFAULT_GROUP_DOMAIN): ResourceIdentity {
  const group = `management.${groupDomain}`;
  return {
    group,
    apiVersion: `${group}/${VERSION}`,
    kind: KIND,
    resource: PLURAL,
    version: VERSION,
  };
}

export const ACCESS_KEY_TYPES = [
  "",
  "Login",
  "User",
  "Other",
  "Reset",
  "OIDCRefreshToken",
  "NetworkPeer",
  "Workspace",
] as const;
export type AccessKeyType = (typeof ACCESS_KEY_TYPES)[number];

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

export interface AccessKeyScopeRole {
  role?: string;
  projects?: string[];
  virtualClusters?: string[];
}

export interface AccessKeyScopeRule {
  verbs?: string[];
  resources?: { group?: string; resources?: string[]; resourceNames?: string[] }[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  requestTargets?: string[];
  cluster?: string;
  virtualClusters?: { name?: string; namespace?: string }[];
}

export interface AccessKeyScope {
  roles?: AccessKeyScopeRole[];
  projects?: { project?: string }[];
  spaces?: { project?: string; space?: string }[];
  virtualClusters?: { project?: string; virtualCluster?: string }[];
  clusters?: { cluster?: string }[];
  /** Deprecated: also accepted directly under spec. */
  rules?: AccessKeyScopeRule[];
  /** Deprecated: also accepted directly under spec. */
  allowLoftCli?: boolean;
}

export interface AccessKeyIdentity {
  userId?: string;
  username?: string;
  preferredUsername?: string;
  email?: string;
  emailVerified?: boolean;
  groups?: string[];
  connector?: string;
  /** Secret: never logged, never printed. */
  connectorData?: string;
  extraClaims?: Record<string, string>;
}

export interface OwnedAccessKeySpec {
  displayName?: string;
  description?: string;
  user?: string;
  team?: string;
  subject?: string;
  groups?: string[];
  /** The bearer token. Secret: never logged, never printed in tables. */
  key?: string;
  disabled?: boolean;
  ttl?: number;
  ttlAfterLastActivity?: boolean;
  scope?: AccessKeyScope;
  /** Deprecated: use scope. */
  rules?: AccessKeyScopeRule[];
  /** Deprecated: use scope.roles with the loft-cli role. */
  allowLoftCli?: boolean;
  type?: AccessKeyType;
  identity?: AccessKeyIdentity;
  identityRefresh?: string | null;
  oidcProvider?: { clientId?: string; nonce?: string; redirectUri?: string; scopes?: string };
  /** Deprecated. */
  parent?: string;
  /**
   * vgate's: the key before the last rotation, valid until `until` (docs/decisions.md OAK-38).
   * Only its digest (`sha256:<hex>`), in either storage mode; written by vgate's mutating webhook.
   */
  previousKey?: { key?: string; until?: string };
  /** Deprecated: use identity. Tokens are secrets. */
  oidcLogin?: {
    idToken?: string;
    accessToken?: string;
    refreshToken?: string;
    lastRefresh?: string | null;
  };
}

export interface OwnedAccessKeyStatus {
  lastActivity?: string | null;
  /**
   * vgate's: the key is shorter than 32 characters (docs/decisions.md OAK-20). Recorded at a login,
   * since a hashed key's length is known only then; false again once a longer key logs in.
   */
  weakKey?: boolean;
  /**
   * vgate's: the last login with the previous key of a rotation, and the deadline of the window it
   * was in (docs/decisions.md OAK-38). Never the key or its digest.
   */
  previousKey?: { until?: string; lastActivity?: string };
}

export interface OwnedAccessKey {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: OwnedAccessKeySpec;
  status?: OwnedAccessKeyStatus;
}

/** Names of fields whose values are secrets wherever they appear in an object or a log record. */
export const SECRET_FIELD_NAMES: readonly string[] = [
  "key",
  "connectorData",
  "idToken",
  "accessToken",
  "refreshToken",
  "token",
  "authorization",
  "Authorization",
];
