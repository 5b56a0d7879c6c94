// vCluster's verdict on a vcluster.yaml, from vCluster's own module (the version test/kube pins):
// the oracle that test/webhook/config/vcluster-schema-oracle.test.ts holds `vgate check-config` to.
//
// vCluster accepts a values file when every one of its readers does (docs/decisions.md EPS-34):
// 1. helm coalesces the file with the chart's defaults (chart/values.yaml) and validates the result
//    against chart/values.schema.json. Coalescing (helm pkg/chart/common/util/coalesce.go,
//    coalesceValues and coalesceTablesFullKey): maps merge, lists and scalars replace, and a null
//    removes the key when the chart has a non-null default for it; any other null stays, and the
//    schema judges it. Implemented below as `helmCoalesce`.
// 2. `vcluster create` (pkg/cli/create_helm.go:253) and the syncer at start (pkg/config/parse.go:91,
//    ValidateConfigAndSetDefaults) check each custom resource entry's scope, a sync.fromHost one's
//    mappings too (validation.go:100-111), then run ValidateAllSyncPatches (validation.go:114)
//    (pkg/config/validation.go:238) over every patch list, and the custom resources' lists
//    (validation.go:104, validation.go:569), with validatePatches (validation.go:275-303):
//    - validation.go:283-291: a patch uses an expression when `expression` or `reverseExpression`
//      is not "", labels when `labels` is set (a pointer), reference when `reference` is set;
//      more than one: "<base>.patches[i] can only use one of: expression, labels or reference"
//      (validation.go:292); none: "<base>.patches[i] need to use one of: expression, labels or
//      reference" (validation.go:294);
//    - validation.go:296-300: the same `path` text as an earlier patch j: "<base>.patches[j] and
//      <base>.patches[i] have the same path %q" (an exact comparison of the text);
//    - the first problem is the only one reported.
//    Nothing else is checked on a patch: not the path's syntax, not the expression, not
//    metadata.name or metadata.namespace as paths, not the reference's fields.
// The Go decoding itself (sigs.k8s.io/yaml UnmarshalStrict into config.Config) refuses unknown
// and mistyped fields, which the schema refuses already; it reads case-insensitive names the
// schema refuses too. The rest of ValidateConfigAndSetDefaults checks sections vgate never reads.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { parse as parseYaml } from "yaml";

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A config.TranslatePatch as Go holds it once decoded ("" for an absent string). */
export interface GoPatch {
  path: string;
  expression: string;
  reverseExpression: string;
  reference: Record<string, string> | null;
  labels: boolean;
}

/** config.EnableSwitchWithPatches for sync.toHost.endpoints, as the syncer reads it. */
export interface GoEndpoints {
  enabled: boolean;
  patches: GoPatch[];
}

export interface Verdict {
  accepted: boolean;
  /** The schema's errors on the coalesced values. */
  schemaErrors: ErrorObject[];
  /** The first error of vCluster's patch validation (Go), when the schema passed. */
  goError: string | null;
  /** What the syncer reads for sync.toHost.endpoints, when the schema passed. */
  endpoints: GoEndpoints | null;
}

/** The lists ValidateAllSyncPatches checks (pkg/config/validation.go:239-271), by base path. */
const PATCH_LISTS: readonly (readonly string[])[] = [
  ...[
    "configMaps",
    "secrets",
    "endpoints",
    "services",
    "pods",
    "serviceAccounts",
    "ingresses",
    "namespaces",
    "networkPolicies",
    "persistentVolumeClaims",
    "persistentVolumes",
    "podDisruptionBudgets",
    "priorityClasses",
    "resourceClaims",
    "resourceClaimTemplates",
    "storageClasses",
    "volumeSnapshots",
    "volumeSnapshotContents",
  ].map((k) => ["toHost", k]),
  ...[
    "nodes",
    "storageClasses",
    "priorityClasses",
    "ingressClasses",
    "csiDrivers",
    "runtimeClasses",
    "csiNodes",
    "csiStorageCapacities",
    "events",
    "volumeSnapshotClasses",
    "configMaps",
    "deviceClasses",
  ].map((k) => ["fromHost", k]),
];

function get(obj: unknown, ...keys: string[]): unknown {
  let at = obj;
  for (const key of keys) at = isObj(at) && Object.hasOwn(at, key) ? at[key] : undefined;
  return at;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A decoded TranslatePatch; only called on values the schema accepted. */
export function goPatch(entry: unknown): GoPatch {
  const ref = get(entry, "reference");
  return {
    path: str(get(entry, "path")),
    expression: str(get(entry, "expression")),
    reverseExpression: str(get(entry, "reverseExpression")),
    reference: isObj(ref)
      ? Object.fromEntries(Object.entries(ref).map(([k, v]) => [k, str(v)]))
      : null,
    labels: isObj(get(entry, "labels")),
  };
}

/** validatePatches (pkg/config/validation.go:275-303) for one list: its first error, or null. */
export function goValidatePatches(base: string, patches: readonly GoPatch[]): string | null {
  const used = new Map<string, number>();
  for (const [i, patch] of patches.entries()) {
    let modes = 0;
    if (patch.expression !== "" || patch.reverseExpression !== "") modes++;
    if (patch.labels) modes++;
    if (patch.reference !== null) modes++;
    if (modes > 1)
      return `${base}.patches[${i}] can only use one of: expression, labels or reference`;
    if (modes === 0)
      return `${base}.patches[${i}] need to use one of: expression, labels or reference`;
    const j = used.get(patch.path);
    if (j !== undefined) {
      return `${base}.patches[${j}] and ${base}.patches[${i}] have the same path ${goQuote(patch.path)}`;
    }
    used.set(patch.path, i);
  }
  return null;
}

/** Go's %q for the printable ASCII text the corpus uses. */
function goQuote(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error("goQuote: only printable ASCII is modelled");
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

function patchList(values: unknown, ...keys: string[]): GoPatch[] {
  const list = get(values, ...keys);
  return Array.isArray(list) ? list.map(goPatch) : [];
}

/**
 * The scope and mappings rules of a custom resource entry (validation.go:100-103 for
 * sync.toHost, validateFromHostSyncCustomResources, validation.go:558-568, for sync.fromHost):
 * the error, or null.
 */
export function goCustomResourceScope(side: string, name: string, entry: unknown): string | null {
  const scope = str(get(entry, "scope"));
  if (side === "toHost") {
    if (scope === "" || scope === "Namespaced") return null;
    return `unsupported scope ${scope} for sync.toHost.customResources['${name}'].scope. Only 'Namespaced' is allowed`;
  }
  if (scope !== "" && scope !== "Cluster" && scope !== "Namespaced") {
    return `unsupported scope ${scope} for sync.fromHost.customResources['${name}'].scope. Only 'Cluster' and 'Namespaced' are allowed`;
  }
  const byName = get(entry, "mappings", "byName");
  const mapped = isObj(byName) && Object.keys(byName).length > 0;
  if (mapped && scope !== "Namespaced") {
    return `.selector.mappings are only supported for sync.fromHost.customResources['${name}'] with scope 'Namespaced'`;
  }
  if (scope === "Namespaced" && !mapped) {
    return `.selector.mappings is required for Namespaced scope sync.fromHost.customResources['${name}']`;
  }
  return null;
}

/**
 * vCluster's first error, in its order: each custom resource entry's scope (and mappings) and
 * patches, sync.toHost's then sync.fromHost's (validation.go:100-111), then every other patch list
 * (ValidateAllSyncPatches, validation.go:114). Go ranges over a map in random order; the corpus
 * has at most one failing entry per map.
 */
function firstGoError(values: unknown): string | null {
  for (const side of ["toHost", "fromHost"]) {
    const crs = get(values, "sync", side, "customResources");
    if (!isObj(crs)) continue;
    for (const name of Object.keys(crs)) {
      const error =
        goCustomResourceScope(side, name, crs[name]) ??
        goValidatePatches(`sync.${side}.customResources.${name}`, patchList(crs, name, "patches"));
      if (error !== null) return error;
    }
  }
  for (const [side, key] of PATCH_LISTS) {
    const error = goValidatePatches(
      `sync.${side}.${key}`,
      patchList(values, "sync", side!, key!, "patches"),
    );
    if (error !== null) return error;
  }
  return null;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** coalesceTablesFullKey(dst = user, src = chart defaults) with merge = false. */
function coalesceTables(dst: Obj, src: Obj): void {
  const srcNonNil = new Set(Object.keys(src).filter((k) => src[k] !== null));
  for (const [key, value] of Object.entries(dst)) if (value === null) src[key] = null;
  for (const [key, val] of Object.entries(src)) {
    const has = Object.hasOwn(dst, key);
    const dv = dst[key];
    if (has && dv === null && srcNonNil.has(key)) Reflect.deleteProperty(dst, key);
    else if (!has) dst[key] = clone(val);
    else if (isObj(val) && isObj(dv)) coalesceTables(dv, val);
    // Otherwise the user's value stays (helm only logs a warning on a table/non-table clash).
  }
}

/** helm's CoalesceValues for a chart without dependencies: the values helm validates and renders. */
export function helmCoalesce(user: Obj, defaults: Obj): Obj {
  const out = clone(user);
  for (const [key, val] of Object.entries(clone(defaults))) {
    if (!Object.hasOwn(out, key)) {
      out[key] = val;
      continue;
    }
    const value = out[key];
    if (value === null) Reflect.deleteProperty(out, key);
    else if (isObj(value) && isObj(val)) coalesceTables(value, val);
  }
  return out;
}

export class VClusterOracle {
  readonly defaults: Obj;
  readonly schema: Obj;
  private readonly validate: ValidateFunction;

  constructor(readonly moduleDir: string) {
    this.schema = JSON.parse(
      readFileSync(join(moduleDir, "chart/values.schema.json"), "utf8"),
    ) as Obj;
    const defaults: unknown = parseYaml(
      readFileSync(join(moduleDir, "chart/values.yaml"), "utf8"),
      {
        version: "1.1",
      },
    );
    if (!isObj(defaults)) throw new Error("chart/values.yaml is not a map");
    this.defaults = defaults;
    // Helm's validator (santhosh-tekuri/jsonschema) does not assert formats by default.
    const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    this.validate = ajv.compile(this.schema);
  }

  /** vCluster's verdict on a values file as go-yaml v2 reads it (null for an empty file). */
  judge(values: unknown): Verdict {
    // helm reads a values file into a map: an empty file is no values, anything else is refused.
    if (values === null) values = {};
    if (!isObj(values)) {
      const error = { instancePath: "", keyword: "type", message: "values are not a map" };
      return {
        accepted: false,
        schemaErrors: [error as ErrorObject],
        goError: null,
        endpoints: null,
      };
    }
    const coalesced = helmCoalesce(values, this.defaults);
    if (!this.validate(coalesced)) {
      const schemaErrors = [...(this.validate.errors ?? [])];
      return { accepted: false, schemaErrors, goError: null, endpoints: null };
    }
    const goError = firstGoError(coalesced);
    const endpoints: GoEndpoints = {
      enabled: get(coalesced, "sync", "toHost", "endpoints", "enabled") === true,
      patches: patchList(coalesced, "sync", "toHost", "endpoints", "patches"),
    };
    return { accepted: goError === null, schemaErrors: [], goError, endpoints };
  }
}
