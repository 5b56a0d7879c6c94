// Strategic merge patch (application/strategic-merge-patch+json) for the built-in types the
// emulator serves, after apimachinery's strategicpatch: maps merge key by key (null deletes), lists
// declared `patchStrategy:"merge"` merge by their `patchMergeKey` (containers by name, ports by
// containerPort or port, env by name, ...) or as sets of primitives, all other lists are replaced.
// Directives: `$patch: replace|delete|merge` in maps and list items, `$retainKeys`,
// `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.

import { KubeError, newBadRequest } from "../../../webhook/src/api/status.js";

/** A list field's strategy: merge by `key`, or (no key) merge as a set of primitives. */
interface ListStrategy {
  key?: string;
}

type Json = unknown;
type JsonMap = Record<string, Json>;

const POD_SPEC: Record<string, ListStrategy> = {
  containers: { key: "name" },
  initContainers: { key: "name" },
  ephemeralContainers: { key: "name" },
  "containers.ports": { key: "containerPort" },
  "initContainers.ports": { key: "containerPort" },
  "containers.env": { key: "name" },
  "initContainers.env": { key: "name" },
  "ephemeralContainers.env": { key: "name" },
  "containers.volumeMounts": { key: "mountPath" },
  "initContainers.volumeMounts": { key: "mountPath" },
  "containers.volumeDevices": { key: "devicePath" },
  "containers.resizePolicy": { key: "resourceName" },
  volumes: { key: "name" },
  imagePullSecrets: { key: "name" },
  hostAliases: { key: "ip" },
  topologySpreadConstraints: { key: "topologyKey" },
  resourceClaims: { key: "name" },
  schedulingGates: { key: "name" },
};

const CONDITIONS: Record<string, ListStrategy> = { "status.conditions": { key: "type" } };

const METADATA: Record<string, ListStrategy> = {
  "metadata.ownerReferences": { key: "uid" },
  "metadata.finalizers": {},
};

function prefixed(
  prefix: string,
  table: Record<string, ListStrategy>,
): Record<string, ListStrategy> {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [`${prefix}${k}`, v]));
}

const WORKLOAD = { ...prefixed("spec.template.spec.", POD_SPEC), ...CONDITIONS };

/** Merge strategies by `group/Kind`, keyed by the dotted field path (list items add no step). */
const STRATEGIES: Record<string, Record<string, ListStrategy>> = {
  "/Pod": {
    ...prefixed("spec.", POD_SPEC),
    ...CONDITIONS,
    "status.podIPs": { key: "ip" },
    "status.hostIPs": { key: "ip" },
  },
  "/Service": { "spec.ports": { key: "port" }, ...CONDITIONS },
  "/Namespace": CONDITIONS,
  "/Node": { ...CONDITIONS, "status.addresses": { key: "type" } },
  "apps/Deployment": WORKLOAD,
  "apps/ReplicaSet": WORKLOAD,
  "apps/StatefulSet": WORKLOAD,
  "apps/DaemonSet": WORKLOAD,
};

/** Whether kube accepts strategic merge for this type (built-in types only). */
export function strategyTable(group: string, kind: string): Record<string, ListStrategy> {
  return { ...METADATA, ...(STRATEGIES[`${group}/${kind}`] ?? {}) };
}

const isMap = (v: Json): v is JsonMap => typeof v === "object" && v !== null && !Array.isArray(v);

const DELETE_PRIMITIVE = "$deleteFromPrimitiveList/";
const SET_ORDER = "$setElementOrder/";

/** Applies `patch` to `original`; both are plain JSON. Throws KubeError for malformed patches. */
export function strategicMerge(
  original: JsonMap,
  patch: Json,
  table: Record<string, ListStrategy>,
): JsonMap {
  if (!isMap(patch)) throw newBadRequest("invalid JSON document");
  const out = mergeMap(structuredClone(original), patch, "", table);
  return out ?? {};
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Merges a patch map into an original map; undefined when the patch deletes the whole map. */
function mergeMap(
  original: JsonMap,
  patch: JsonMap,
  path: string,
  table: Record<string, ListStrategy>,
): JsonMap | undefined {
  const directive = patch["$patch"];
  if (directive === "delete") return undefined;
  if (directive === "replace") return stripDirectives(patch);
  if (directive !== undefined && directive !== "merge") {
    throw newBadRequest(
      `unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`,
    );
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys" || k.startsWith(SET_ORDER)) continue;
    if (k.startsWith(DELETE_PRIMITIVE)) {
      deleteFromPrimitiveList(original, k.slice(DELETE_PRIMITIVE.length), v);
      continue;
    }
    if (v === null) {
      Reflect.deleteProperty(original, k);
      continue;
    }
    const merged = mergeValue(original[k], v, join(path, k), table);
    if (merged === undefined) Reflect.deleteProperty(original, k);
    else original[k] = merged;
  }
  applyOrders(original, patch, path, table);
  retainKeys(original, patch["$retainKeys"]);
  return original;
}

function mergeValue(
  orig: Json,
  patchValue: Json,
  path: string,
  table: Record<string, ListStrategy>,
): Json {
  if (isMap(patchValue)) {
    return mergeMap(isMap(orig) ? orig : {}, patchValue, path, table);
  }
  if (Array.isArray(patchValue)) {
    const strategy = table[path];
    if (!strategy) return patchValue.map(stripDeep);
    return mergeList(Array.isArray(orig) ? orig : [], patchValue, path, strategy, table);
  }
  return patchValue;
}

function mergeList(
  original: Json[],
  patch: Json[],
  path: string,
  strategy: ListStrategy,
  table: Record<string, ListStrategy>,
): Json[] {
  if (patch.some((item) => isMap(item) && item["$patch"] === "replace")) {
    return patch.filter((item) => !(isMap(item) && item["$patch"] === "replace")).map(stripDeep);
  }
  const key = strategy.key;
  if (key === undefined) {
    // A set of primitives: the patch's new values go after the original ones.
    const out = [...original];
    for (const v of patch) if (!out.some((o) => o === v)) out.push(v);
    return out;
  }
  const out = [...original];
  for (const item of patch) {
    if (!isMap(item))
      throw newBadRequest(`cannot merge a primitive into a list of maps at ${path}`);
    if (!(key in item)) {
      throw new KubeError(
        500,
        "InternalError",
        `Internal error occurred: map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`,
      );
    }
    const i = out.findIndex((o) => isMap(o) && o[key] === item[key]);
    if (item["$patch"] === "delete") {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = mergeMap(out[i] as JsonMap, item, path, table) ?? {};
    else out.push(mergeMap({}, item, path, table) ?? {});
  }
  return out;
}

function deleteFromPrimitiveList(original: JsonMap, field: string, values: Json): void {
  if (!Array.isArray(values)) throw newBadRequest("invalid patch format for primitive list");
  const list = original[field];
  if (!Array.isArray(list)) return;
  original[field] = list.filter((v) => !values.includes(v));
}

/** `$setElementOrder/<field>`: the listed elements come first, in that order. */
function applyOrders(
  original: JsonMap,
  patch: JsonMap,
  path: string,
  table: Record<string, ListStrategy>,
): void {
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith(SET_ORDER) || !Array.isArray(order)) continue;
    const field = k.slice(SET_ORDER.length);
    const list = original[field];
    if (!Array.isArray(list)) continue;
    const key = table[join(path, field)]?.key;
    const id = (v: Json): Json => (key !== undefined && isMap(v) ? v[key] : v);
    const ids = order.map(id);
    const rank = (v: Json): number => {
      const r = ids.findIndex((x) => x === id(v));
      return r < 0 ? ids.length : r;
    };
    original[field] = list
      .map((v, i) => ({ v, i }))
      .sort((a, b) => rank(a.v) - rank(b.v) || a.i - b.i)
      .map((e) => e.v);
  }
}

function retainKeys(original: JsonMap, keys: Json): void {
  if (keys === undefined) return;
  if (!Array.isArray(keys)) throw newBadRequest("invalid patch format for retainKeys");
  for (const k of Object.keys(original)) if (!keys.includes(k)) Reflect.deleteProperty(original, k);
}

/** A value taken whole from the patch: directives dropped, nulls removed (IgnoreUnmatchedNulls). */
function stripDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDeep);
  if (isMap(v)) return stripDirectives(v);
  return v;
}

function stripDirectives(m: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(m)) {
    if (k.startsWith("$") || v === null) continue;
    out[k] = stripDeep(v);
  }
  return out;
}
