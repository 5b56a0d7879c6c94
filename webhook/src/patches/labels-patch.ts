// Labels patches (docs/decisions.md EPS-3, docs/reference.md#labels-patch-translator): a string map
// goes through the map translator (HostLabelsMap / VirtualLabelsMap, which add vCluster's scoping
// labels on the host); a `matchLabels` / `matchExpressions` selector goes through the key-only
// selector translator. Any other shape is left alone with a warning.

import {
  hostLabelSelector,
  hostLabelsMap,
  virtualLabelSelector,
  virtualLabelsMap,
} from "./labels.js";
import { ownValue } from "./traverse.js";
import type { Direction, Json, JsonObject, Outcome, VClusterInfo } from "./types.js";
import { isObject } from "../shared/json.js";

export interface LabelsInput {
  value: Json;
  direction: Direction;
  vcluster: VClusterInfo;
  /** Its metadata.namespace scopes the labels on the host (HostLabelsMap's vNamespace). */
  virtualObject: Json;
}

export type LabelsOutcome = Outcome & { warning?: string };

const SELECTOR_KEYS = ["matchLabels", "matchExpressions"];

export function applyLabelsPatch(input: LabelsInput): LabelsOutcome {
  const { value, direction } = input;
  const scope = { name: input.vcluster.name, namespace: input.vcluster.namespace };
  if (isStringMap(value)) {
    const translated =
      direction === "toHost"
        ? hostLabelsMap(value, null, virtualNamespace(input.virtualObject), false, scope)
        : virtualLabelsMap(value, null, scope);
    return { kind: "set", value: translated, note: "label map" };
  }
  if (isSelector(value)) {
    const translated =
      direction === "toHost" ? hostLabelSelector(value, scope) : virtualLabelSelector(value, scope);
    return { kind: "set", value: translated, note: "label selector" };
  }
  return {
    kind: "keep",
    warning: "the value is neither a string map nor a label selector, labels were not translated",
  };
}

export function isStringMap(value: Json): value is Record<string, string> {
  return isObject(value) && Object.values(value).every((v) => typeof v === "string");
}

/** metav1.LabelSelector: only matchLabels (a string map) and matchExpressions (a list). */
export function isSelector(value: Json): value is JsonObject {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => SELECTOR_KEYS.includes(k))) return false;
  const matchLabels = ownValue(value, "matchLabels");
  const expressions = ownValue(value, "matchExpressions");
  return (
    (matchLabels === undefined || matchLabels === null || isStringMap(matchLabels)) &&
    (expressions === undefined || expressions === null || Array.isArray(expressions))
  );
}

function virtualNamespace(object: Json): string {
  const metadata = isObject(object) ? ownValue(object, "metadata") : undefined;
  const namespace = isObject(metadata) ? ownValue(metadata, "namespace") : undefined;
  return typeof namespace === "string" ? namespace : "";
}
