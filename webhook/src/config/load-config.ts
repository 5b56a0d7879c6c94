// Loads vcluster.yaml (YAML or JSON) once, at the edge, into a validated, typed config with
// vCluster's defaults merged in (docs/reference.md#patch-config), reading it as vCluster does
// (docs/decisions.md EPS-34: YAML 1.1 as go-yaml v2 reads it, null as helm coalesces it). Every command that reads a
// vcluster.yaml (check-config, patch, translate, serve --config) goes through readVClusterConfig:
// the file is read once, parsed once and validated once.
import type { Json, JsonObject, PatchSpec } from "../patches/types.js";
import { readTextSource, ReadError, sourceName } from "./read-file.js";
import { validateVClusterConfig, type ValidateOptions } from "./validate-config.js";
import { parseYamlDocument } from "./yaml-document.js";
import {
  customResourceKind,
  PATCH_KINDS,
  type PatchKind,
  type SyncSection,
} from "./patch-kinds.js";
import { isObject } from "../shared/json.js";

/** vcluster.yaml files are a few kilobytes; this bound only stops a wrong file from filling memory. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface VClusterConfig {
  /** The whole vcluster.yaml merged with defaults, for context.vcluster.config. */
  raw: Json;
  endpoints: { enabled: boolean; patches: PatchSpec[] };
  namespaces: { enabled: boolean; mappings: Record<string, string> };
  /** Every kind with patches, in PATCH_KINDS order, then each side's custom resources. */
  patchSets: {
    kind: PatchKind;
    enabled: boolean;
    patches: PatchSpec[];
    mappings?: Record<string, string>;
  }[];
}

/**
 * The kinds vCluster's chart (chart/values.yaml of v0.34) enables by default; "auto" (sync
 * what the host has) counts as enabled. Every other kind is off unless the config turns it on.
 */
const ENABLED_BY_DEFAULT = new Set([
  "toHost.services",
  "toHost.endpoints",
  "toHost.endpointSlices",
  "toHost.persistentVolumeClaims",
  "toHost.configMaps",
  "toHost.secrets",
  "toHost.pods",
  "fromHost.events",
  "fromHost.csiDrivers",
  "fromHost.csiNodes",
  "fromHost.csiStorageCapacities",
  "fromHost.storageClasses",
]);

/** A config that cannot be used; `problems` lists every reason. */
export class VClusterConfigError extends Error {
  override readonly name = "VClusterConfigError";
  constructor(
    readonly fileName: string,
    readonly problems: string[],
  ) {
    super(`invalid vCluster config ${fileName}:\n  ${problems.join("\n  ")}`);
  }
}

/**
 * The object at `key` of `parent` for a key the chart gives a default, as helm coalesces it: an
 * absent key is created (to take the defaults), and a null one is removed with its defaults, so
 * that Go reads its zero value (docs/decisions.md EPS-34); null is returned then.
 */
function defaulted(parent: JsonObject, key: string): JsonObject | null {
  const existing = Object.hasOwn(parent, key) ? parent[key] : undefined;
  if (isObject(existing)) return existing;
  if (existing === null) {
    Reflect.deleteProperty(parent, key);
    return null;
  }
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** A default value, as helm coalesces it: set when absent; a null removes the key instead. */
function setDefault(obj: JsonObject, key: string, value: Json): void {
  const existing = Object.hasOwn(obj, key) ? obj[key] : undefined;
  if (existing === null) Reflect.deleteProperty(obj, key);
  else if (existing === undefined) obj[key] = value;
}

/**
 * A deep copy of a validated config with vCluster's defaults (chart values.yaml) filled in, the
 * way helm merges them: a key set to null loses its default.
 */
function withDefaults(parsed: unknown): JsonObject {
  const raw: JsonObject = isObject(parsed)
    ? (JSON.parse(JSON.stringify(parsed)) as JsonObject)
    : {};
  const sync = defaulted(raw, "sync");
  const toHost = sync && defaulted(sync, "toHost");
  if (toHost === null) return raw;
  const endpoints = defaulted(toHost, "endpoints");
  if (endpoints !== null) {
    setDefault(endpoints, "enabled", true);
    setDefault(endpoints, "patches", []);
  }
  const namespaces = defaulted(toHost, "namespaces");
  if (namespaces !== null) {
    setDefault(namespaces, "enabled", false);
    const mappings = defaulted(namespaces, "mappings");
    if (mappings !== null) defaulted(mappings, "byName");
  }
  return raw;
}

/** The object at `key` of `parent`, or an empty one; never changes `parent`. */
function read(parent: JsonObject, key: string): JsonObject {
  const value = Object.hasOwn(parent, key) ? parent[key] : undefined;
  return isObject(value) ? value : {};
}

/** A patch entry as PatchSpec: "" strings are absent (Go `omitempty`). */
function toPatchSpec(entry: JsonObject): PatchSpec {
  const spec: PatchSpec = { path: entry["path"] as string };
  const expression = entry["expression"];
  const reverse = entry["reverseExpression"];
  if (typeof expression === "string" && expression !== "") spec.expression = expression;
  if (typeof reverse === "string" && reverse !== "") spec.reverseExpression = reverse;
  if (isObject(entry["reference"])) spec.reference = referenceSpec(entry["reference"]);
  if (isObject(entry["labels"])) spec.labels = {};
  return spec;
}

function referenceSpec(ref: JsonObject): NonNullable<PatchSpec["reference"]> {
  const out: NonNullable<PatchSpec["reference"]> = {
    apiVersion: ref["apiVersion"] as string,
    kind: ref["kind"] as string,
  };
  for (const key of ["apiVersionPath", "kindPath", "namePath", "namespacePath"] as const) {
    const value = Object.hasOwn(ref, key) ? ref[key] : undefined;
    if (typeof value === "string" && value !== "") out[key] = value;
  }
  return out;
}

/**
 * `enabled` as helm and the syncer read it: absent takes the chart's default; null removes it
 * (Go's false, EPS-34); "auto" is on when the host has the kind, which vgate takes as on.
 */
function enabledOf(section: JsonObject, byDefault: boolean): boolean {
  if (!Object.hasOwn(section, "enabled")) return byDefault;
  const value = section["enabled"];
  return value === true || value === "auto";
}

/**
 * Whether vCluster syncs from the host only the objects `mappings.byName` names: ConfigMaps,
 * Secrets (KND-51) and namespaced custom resources (KND-90), all through its fromHostTranslate.
 */
function syncsByMappings(kind: PatchKind): boolean {
  if (kind.section !== "fromHost") return false;
  if (kind.key.startsWith("customResources.")) return kind.namespaced;
  return kind.key === "configMaps" || kind.key === "secrets";
}

function patchSetOf(kind: PatchKind, section: JsonObject, byDefault: boolean) {
  const list = section["patches"];
  const patches = Array.isArray(list) ? list.filter(isObject).map(toPatchSpec) : [];
  const set = { kind, enabled: enabledOf(section, byDefault), patches };
  if (!syncsByMappings(kind)) return set;
  const byName = read(read(section, "mappings"), "byName");
  const mappings = Object.fromEntries(
    Object.entries(byName).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  return { ...set, mappings };
}

/** The object at `path` (keys joined by dots) under `parent`, or an empty one. */
function readPath(parent: JsonObject, path: string): JsonObject {
  return path.split(".").reduce(read, parent);
}

/**
 * `enabled` of a Gateway API kind as vCluster v0.36 reads it (pkg/util/gatewayapi/enabled.go):
 * `sync.toHost.gatewayApi.enabled` turns on Gateways and HTTPRoutes, and the import of host
 * GatewayClasses, which `sync.fromHost.gateways` needs too; ReferenceGrants' `auto` (the chart's
 * default) follows route sync when namespaces are synced. undefined for any other kind.
 */
function gatewayApiEnabled(sync: JsonObject, at: string, own: boolean): boolean | undefined {
  const on = (path: string) => enabledOf(readPath(sync, path), false);
  switch (at) {
    case "toHost.gatewayApi.httpRoutes":
    case "toHost.gatewayApi.gateways":
      return own || on("toHost.gatewayApi");
    case "fromHost.gatewayClasses":
      return own || on("fromHost.gateways") || on("toHost.gatewayApi");
    case "toHost.gatewayApi.referenceGrants": {
      const value = readPath(sync, at)["enabled"];
      if (value === true || value === "true") return true;
      if (value !== undefined && value !== "auto") return false;
      const routes = ["httpRoutes", "tlsRoutes", "backendTLSPolicies"].some((k) =>
        gatewayApiEnabledOrOwn(sync, `toHost.gatewayApi.${k}`),
      );
      return routes && on("toHost.namespaces");
    }
    default:
      return undefined;
  }
}

function gatewayApiEnabledOrOwn(sync: JsonObject, at: string): boolean {
  const own = enabledOf(readPath(sync, at), false);
  return gatewayApiEnabled(sync, at, own) ?? own;
}

/** Every kind that has patches; the custom resources' entries after each side's built-in kinds. */
function patchSetsOf(sync: JsonObject): VClusterConfig["patchSets"] {
  const sets: VClusterConfig["patchSets"] = [];
  for (const side of ["toHost", "fromHost"] as SyncSection[]) {
    const sideValue = read(sync, side);
    for (const kind of PATCH_KINDS) {
      if (kind.section !== side) continue;
      // withDefaults filled these in already: an `enabled` missing there was a null (off).
      const filled = side === "toHost" && (kind.key === "endpoints" || kind.key === "namespaces");
      const byDefault = !filled && ENABLED_BY_DEFAULT.has(`${side}.${kind.key}`);
      const set = patchSetOf(kind, readPath(sideValue, kind.key), byDefault);
      const enabled = gatewayApiEnabled(sync, `${side}.${kind.key}`, set.enabled);
      sets.push(enabled === undefined ? set : { ...set, enabled });
    }
    for (const [name, entry] of Object.entries(read(sideValue, "customResources"))) {
      if (!isObject(entry)) continue;
      const kind = customResourceKind(side, name, entry["scope"] !== "Cluster");
      sets.push(patchSetOf(kind, entry, false));
    }
  }
  return sets.filter((set) => set.patches.length > 0);
}

function typed(raw: JsonObject): VClusterConfig {
  const toHost = read(read(raw, "sync"), "toHost");
  const endpoints = read(toHost, "endpoints");
  const namespaces = read(toHost, "namespaces");
  const patches = endpoints["patches"];
  const byName = read(read(namespaces, "mappings"), "byName");
  return {
    raw,
    endpoints: {
      enabled: endpoints["enabled"] === true,
      patches: Array.isArray(patches) ? patches.filter(isObject).map(toPatchSpec) : [],
    },
    namespaces: {
      enabled: namespaces["enabled"] === true,
      mappings: Object.fromEntries(
        Object.entries(byName).filter((e): e is [string, string] => typeof e[1] === "string"),
      ),
    },
    patchSets: patchSetsOf(read(raw, "sync")),
  };
}

/**
 * Parses, validates and types vcluster.yaml text. Throws a VClusterConfigError listing every
 * problem (syntax errors with file:line:column, then validation problems). An empty file is a
 * problem: it is almost always the wrong file, and it has no patches to check.
 */
export function loadVClusterConfig(
  text: string,
  fileName: string,
  options: ValidateOptions = {},
): VClusterConfig {
  const parsed = parseYamlDocument(text, fileName, "go-yaml-v2");
  if (!parsed.ok) throw new VClusterConfigError(fileName, parsed.problems);
  if (parsed.value === null || parsed.value === undefined) {
    throw new VClusterConfigError(fileName, [
      `${fileName} is empty: a vCluster config is a YAML map such as "sync: {toHost: {endpoints: {patches: [...]}}}"`,
    ]);
  }
  const problems = validateVClusterConfig(parsed.value, options);
  if (problems.length > 0) throw new VClusterConfigError(fileName, problems);
  return typed(withDefaults(parsed.value));
}

/**
 * loadVClusterConfig for a file, or standard input when `path` is `-`; a read error is a
 * VClusterConfigError too.
 */
export async function readVClusterConfig(
  path: string,
  options: ValidateOptions = {},
): Promise<VClusterConfig> {
  let text: string;
  try {
    text = await readTextSource(path, MAX_CONFIG_BYTES);
  } catch (err) {
    if (!(err instanceof ReadError)) throw err;
    throw new VClusterConfigError(sourceName(path), [err.message]);
  }
  return loadVClusterConfig(text, sourceName(path), options);
}
