// The keys vCluster's config schema allows on the way to sync.toHost.endpoints, and its messages
// for keys it does not allow.
//
// vCluster's chart ships its config schema (chart/values.schema.json, JSON Schema 2020-12) with
// `additionalProperties: false` on every object (docs/reference.md#patch-config), so helm, and
// `vcluster create` through it, reject a misspelt key such as `sync.tohost`. (vCluster's syncer
// decodes the file with sigs.k8s.io/yaml's UnmarshalStrict, whose encoding/json matches field names
// regardless of case, so it would read `tohost` as `toHost`; the schema is the stricter judge.)
// Helm validates with santhosh-tekuri/jsonschema and prints one line per object, for example
//   - at '/sync': additional properties 'tohost' not allowed
// vgate says the same, minus the list dash, so a search for the message finds vCluster's answers.
//
// The key lists are the union over vCluster's releases from v0.20.0 (the first with this config)
// to the v0.37 pre-releases; the last change on this path, `sync.toHost.gatewayApi`, came in
// v0.35.0. A key that some release accepts is never reported, so a config written for an older or
// newer vCluster still checks clean. Only the objects on the way to a kind's patches are checked
// (docs/decisions.md KND-3): vgate reads nothing else of the file.

export const ROOT_KEYS: readonly string[] = [
  "controlPlane",
  "deletion",
  "deploy",
  "experimental",
  "exportKubeConfig",
  "external",
  "global",
  "integrations",
  "logging",
  "networking",
  "platform",
  "plugin",
  "plugins",
  "policies",
  "privateNodes",
  "pro",
  "rbac",
  "serviceCIDR",
  "sleep",
  "sleepMode",
  "snapshots",
  "sync",
  "telemetry",
];

export const SYNC_KEYS: readonly string[] = ["toHost", "fromHost"];

export const TO_HOST_KEYS: readonly string[] = [
  "configMaps",
  "customResourceDefinitions",
  "customResources",
  "endpointSlices",
  "endpoints",
  "gatewayApi",
  "ingresses",
  "namespaces",
  "networkPolicies",
  "persistentVolumeClaims",
  "persistentVolumes",
  "podDisruptionBudgets",
  "pods",
  "priorityClasses",
  "resourceClaimTemplates",
  "resourceClaims",
  "secrets",
  "serviceAccounts",
  "services",
  "storageClasses",
  "volumeSnapshotContents",
  "volumeSnapshots",
];

export const FROM_HOST_KEYS: readonly string[] = [
  "configMaps",
  "csiDrivers",
  "csiNodes",
  "csiStorageCapacities",
  "customResourceDefinitions",
  "customResources",
  "deviceClasses",
  "events",
  "gatewayClasses",
  "gateways",
  "ingressClasses",
  "nodes",
  "priorityClasses",
  "runtimeClasses",
  "secrets",
  "storageClasses",
  "volumeSnapshotClasses",
];

/** EnableSwitchWithPatches */
export const ENDPOINTS_KEYS: readonly string[] = ["enabled", "patches"];

/**
 * The keys of each kind's section with patches that are not EnableSwitchWithPatches, by
 * `<section>.<key>` (union over releases, as above); every other kind's section allows
 * ENDPOINTS_KEYS.
 */
const KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  "toHost.pods": [
    "enabled",
    "enforceTolerations",
    "hybridScheduling",
    "patches",
    "priorityClassName",
    "rewriteHosts",
    "runtimeClassName",
    "translateImage",
    "useSecretsForSATokens",
  ],
  "toHost.secrets": ["all", "enabled", "patches"],
  "toHost.configMaps": ["all", "enabled", "patches"],
  "toHost.namespaces": [
    "enabled",
    "extraLabels",
    "hostNamespaces",
    "mappings",
    "mappingsOnly",
    "patches",
  ],
  "fromHost.nodes": ["clearImageStatus", "enabled", "patches", "selector", "syncBackChanges"],
  "fromHost.configMaps": ["enabled", "mappings", "patches", "selector"],
  "fromHost.secrets": ["enabled", "mappings", "patches", "selector"],
  "fromHost.ingressClasses": ["enabled", "patches", "selector"],
  "fromHost.runtimeClasses": ["enabled", "patches", "selector"],
  "fromHost.priorityClasses": ["enabled", "patches", "selector"],
  "fromHost.storageClasses": ["enabled", "patches", "selector"],
  "fromHost.deviceClasses": ["enabled", "patches", "selector"],
  // v0.36 (GatewayAPIEnableSwitchWithPatches, EnableSwitchWithPatchesAndSelector, FromHostGateways).
  "toHost.gatewayApi": [
    "backendTLSPolicies",
    "enabled",
    "gateways",
    "httpRoutes",
    "patches",
    "referenceGrants",
    "tlsRoutes",
  ],
  "fromHost.gatewayClasses": ["enabled", "patches", "selector"],
  "fromHost.gateways": [
    "allowedRoutes",
    "enabled",
    "mappings",
    "metadata",
    "patches",
    "sanitize",
    "selector",
    "status",
  ],
  // SyncToHostCustomResource and SyncFromHostCustomResource, for every entry.
  "toHost.customResources": ["enabled", "patches", "scope"],
  "fromHost.customResources": ["enabled", "mappings", "patches", "scope", "selector"],
};

/**
 * The keys vCluster's schema allows in the section `sync.<section>.<key>` (a kind with patches, or
 * a section of PATCHES_OF_NO_KIND); `key` may be a path (`gatewayApi.httpRoutes`).
 */
export function kindKeys(section: string, key: string): readonly string[] {
  return KIND_KEYS[`${section}.${key}`] ?? ENDPOINTS_KEYS;
}
/** TranslatePatch */
export const PATCH_KEYS: readonly string[] = [
  "path",
  "expression",
  "reverseExpression",
  "reference",
  "labels",
];
/** TranslatePatchReference */
export const REFERENCE_PATH_KEYS = [
  "apiVersionPath",
  "kindPath",
  "namePath",
  "namespacePath",
] as const;
export const REFERENCE_KEYS: readonly string[] = ["apiVersion", "kind", ...REFERENCE_PATH_KEYS];
/** TranslatePatchLabels has no fields: `labels: {}` is its only value. */
export const LABELS_KEYS: readonly string[] = [];

/** A key is shown whole up to this length; a longer one is cut, so a stray blob is not echoed. */
const MAX_SHOWN_KEY = 64;

/** santhosh-tekuri/jsonschema's quoting: Go's %q inside single quotes, `"` bare, `'` escaped. */
function quote(text: string): string {
  const inner = JSON.stringify(text).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'");
  return `'${inner}'`;
}

function quoteKey(key: string): string {
  return quote(key.length > MAX_SHOWN_KEY ? `${key.slice(0, MAX_SHOWN_KEY)}...` : key);
}

/** A JSON pointer (RFC 6901), as the schema validator names an instance location. */
export function pointer(tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${String(t).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/**
 * The schema validator's message for the keys of `obj` at `at` that `allowed` does not list,
 * in the object's own key order; none when every key is allowed.
 */
export function unknownKeys(
  obj: Record<string, unknown>,
  at: readonly (string | number)[],
  allowed: readonly string[],
): string[] {
  const extra = Object.keys(obj).filter((key) => !allowed.includes(key));
  if (extra.length === 0) return [];
  return [
    `at ${quote(pointer(at))}: additional properties ${extra.map(quoteKey).join(", ")} not allowed`,
  ];
}

/** The schema validator's message for a value of the wrong JSON type. */
export function wrongSchemaType(at: readonly (string | number)[], want: string, got: string) {
  return `at ${quote(pointer(at))}: got ${got}, want ${want}`;
}
