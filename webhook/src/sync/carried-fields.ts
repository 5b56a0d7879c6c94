// --side virtual, any kind: the fields vCluster's syncer carries host → virtual, per sync.toHost
// kind (vCluster v0.34, pkg/controllers/resources/<kind>/: translate.AnnotationsBidirectionalUpdate,
// LabelsBidirectionalUpdate, patcher.CopyBidirectional, MergeBidirectional, and status copies).
// Only a change to one of them in a virtual UPDATE can be vCluster bringing a host change back, so
// only those are reverse-patched; any other change is a user's or a controller's
// (docs/decisions.md KND-14, as EPS-29 for Endpoints). A kind not listed gets its annotations and
// labels, which every toHost syncer updates both ways. Pure.

import { indexKey, parsePath } from "../patches/path.js";
import type { ExplainEntry, Json, JsonObject } from "../patches/types.js";
import { isObject } from "../shared/json.js";
import { setOwn } from "../patches/traverse.js";

const METADATA = ["metadata.annotations", "metadata.labels"];

const CARRIED: Readonly<Record<string, readonly string[]>> = {
  // pods/translate/diff.go: annotations, labels, status.conditions; syncer.go: the whole status.
  pods: [...METADATA, "status"],
  // configmaps/to_host_syncer.go: annotations, labels, data and binaryData merged both ways.
  configMaps: [...METADATA, "data", "binaryData"],
  // secrets/to_host_syncer.go: annotations, labels, data, type.
  secrets: [...METADATA, "data", "type"],
  // services/syncer.go: the CopyBidirectional spec fields, and the status.
  services: [
    ...METADATA,
    "spec.type",
    "spec.externalIPs",
    "spec.externalName",
    "spec.loadBalancerIP",
    "spec.ports",
    "spec.publishNotReadyAddresses",
    "spec.externalTrafficPolicy",
    "spec.sessionAffinity",
    "spec.sessionAffinityConfig",
    "spec.loadBalancerSourceRanges",
    "spec.healthCheckNodePort",
    "status",
  ],
  // ingresses/syncer.go and translate.go: annotations, labels, spec.ingressClassName, status.
  ingresses: [...METADATA, "spec.ingressClassName", "status"],
  // v0.36 gatewayapi/gatewaysync Sync: annotations and labels both ways; the routes' and
  // policies' syncer.go copy the host status too (statusToVirtual).
  "gatewayApi.httpRoutes": [...METADATA, "status"],
  "gatewayApi.tlsRoutes": [...METADATA, "status"],
  "gatewayApi.backendTLSPolicies": [...METADATA, "status"],
};

/** Custom resources: vCluster's generic syncer updates metadata both ways and copies the status. */
const CUSTOM_RESOURCE = [...METADATA, "status"];

export function carriedFields(key: string): readonly string[] {
  if (key.startsWith("customResources.")) return CUSTOM_RESOURCE;
  return CARRIED[key] ?? METADATA;
}

function read(object: JsonObject, path: readonly string[]): Json | undefined {
  let here: Json | undefined = object;
  for (const key of path) {
    if (!isObject(here) || !Object.hasOwn(here, key)) return undefined;
    here = here[key];
  }
  return here;
}

function write(object: JsonObject, path: readonly string[], value: Json): void {
  let here = object;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(here, key) ? here[key] : undefined;
    if (!isObject(next)) setOwn(here, key, {});
    here = here[key] as JsonObject;
  }
  setOwn(here, path[path.length - 1]!, value);
}

/** The parts of `object` at `paths` (absent ones left out), as a sparse object. */
export function pickPaths(object: JsonObject, paths: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const path of paths) {
    const keys = path.split(".");
    const value = read(object, keys);
    if (value !== undefined) write(out, keys, value);
  }
  return out;
}

/**
 * `patched` (the reverse-patched carried change set) with every string leaf whose incoming value
 * is exactly what the forward patches make of the virtual object's own value (`forwardOld`) set
 * back to that own value (`old`): vgate's host-side patch coming back, not a change on the host
 * (virtual-echo.ts says why, for Endpoints' annotations and labels; this is the same rule for every
 * carried field).
 */
export function cancelLeafEchoes(
  incoming: Json,
  patched: Json,
  forwardOld: Json | undefined,
  old: Json | undefined,
): Json {
  if (typeof incoming === "string") {
    if (typeof old === "string" && incoming !== old && forwardOld === incoming) return old;
    return patched;
  }
  if (!isObject(incoming) || !isObject(patched)) return patched;
  const sub = (value: Json | undefined, key: string): Json | undefined =>
    isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
  // A key the virtual object lacks, whose value is exactly what the forward patches add to it (a
  // map patch adding a key): vgate's patch coming back, left out of the change set (KND-61).
  const addedEcho = (key: string): boolean => {
    const value = incoming[key];
    return (
      typeof value === "string" && sub(old, key) === undefined && sub(forwardOld, key) === value
    );
  };
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(patched)) {
    if (Object.hasOwn(incoming, key) && addedEcho(key)) continue;
    const echoed = Object.hasOwn(incoming, key)
      ? cancelLeafEchoes(incoming[key]!, value, sub(forwardOld, key), sub(old, key))
      : value;
    setOwn(out, key, echoed);
  }
  return out;
}

/** The value at a canonical matched path (`vgate patch --explain`'s), or undefined. */
function readMatched(object: Json, path: string): Json | undefined {
  let here: Json | undefined = object;
  for (const segment of parsePath(path)) {
    if (Array.isArray(here) && segment.kind === "index") here = here[segment.index];
    else if (isObject(here) && segment.kind !== "wildcard") {
      const key = segment.kind === "index" ? indexKey(segment) : segment.key;
      here = Object.hasOwn(here, key) ? here[key] : undefined;
    } else return undefined;
    if (here === undefined) return undefined;
  }
  return here;
}

/** `object` with `value` at a canonical matched path, objects made on the way; arrays must exist. */
function writeMatched(object: JsonObject, path: string, value: Json): JsonObject {
  const segments = parsePath(path);
  if (segments.length === 0) return isObject(value) ? structuredClone(value) : object;
  const out = structuredClone(object);
  let here: Json = out;
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (Array.isArray(here) && segment.kind === "index") {
      if (segment.index >= here.length) return object;
      if (last) here[segment.index] = value;
      else here = here[segment.index]!;
    } else if (isObject(here) && segment.kind !== "wildcard") {
      const key = segment.kind === "index" ? indexKey(segment) : segment.key;
      if (last) setOwn(here, key, value);
      else {
        if (!Object.hasOwn(here, key) || here[key] === null || typeof here[key] !== "object")
          setOwn(here, key, {});
        here = here[key]!;
      }
    } else return object;
  }
  return out;
}

/**
 * `patched` (the reverse-patched carried change set) with every field a patch dropped for want of
 * a `reverseExpression` set back to its `incoming` value. On the virtual side the webhook cannot
 * tell the syncer's writes from a tenant's, and a drop there undoes the tenant's own change of a
 * patched field (docs/decisions.md KND-40); vgate's own patch coming back is cancelled by
 * cancelLeafEchoes instead.
 */
export function keepDropped(
  incoming: JsonObject,
  patched: JsonObject,
  explain: readonly ExplainEntry[],
): JsonObject {
  let out = patched;
  for (const entry of explain) {
    if (entry.action !== "drop") continue;
    for (const path of entry.matched) {
      const value = readMatched(incoming, path);
      if (value !== undefined) out = writeMatched(out, path, value);
    }
  }
  return out;
}
