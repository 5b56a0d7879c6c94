// --side virtual, any kind: the fields vCluster's syncer carries host → virtual, per sync.toHost
// kind (vCluster v0.34, pkg/controllers/resources/<kind>/: translate.AnnotationsBidirectionalUpdate,
// LabelsBidirectionalUpdate, patcher.CopyBidirectional, MergeBidirectional, and status copies).
// Only a change to one of them in a virtual UPDATE can be vCluster bringing a host change back, so
// only those are reverse-patched; any other change is a user's or a controller's
// (docs/decisions.md KND-14, as EPS-29 for Endpoints). A kind not listed gets its annotations and
// labels, which every toHost syncer updates both ways. Pure.

import type { Json, JsonObject } from "../patches/types.js";
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
  const out: JsonObject = { ...patched };
  for (const key of Object.keys(incoming)) {
    if (!Object.hasOwn(patched, key)) continue;
    const sub = (value: Json | undefined): Json | undefined =>
      isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    setOwn(out, key, cancelLeafEchoes(incoming[key]!, patched[key]!, sub(forwardOld), sub(old)));
  }
  return out;
}
