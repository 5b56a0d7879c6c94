// vCluster's label translation (docs/reference.md#label-keys and docs/reference.md#label-maps;
// loft-sh/vcluster pkg/util/translate). Only four keys are rewritten since v0.21; every other key
// keeps its name on the host.
import { convertLabelKeyWithPrefix, safeConcatName } from "./host-names.js";
import type { Json, JsonObject } from "./types.js";
import { isObject } from "../shared/json.js";

export const LabelPrefix = "vcluster.loft.sh/label";
export const NamespaceLabelPrefix = "vcluster.loft.sh/ns-label";
export const MarkerLabel = "vcluster.loft.sh/managed-by";
export const NamespaceLabel = "vcluster.loft.sh/namespace";
export const ControllerLabel = "vcluster.loft.sh/controlled-by";

/** Single-namespace LabelsToTranslate: these virtual keys are hashed on the host. */
export const LABELS_TO_TRANSLATE: readonly string[] = Object.freeze([
  "release",
  NamespaceLabel,
  MarkerLabel,
  ControllerLabel,
]);

/** The vCluster a label belongs to: its name and its target (host) namespace. */
export interface LabelScope {
  name: string;
  namespace: string;
}

type LabelMap = Record<string, string>;

function isToTranslate(key: string): boolean {
  return LABELS_TO_TRANSLATE.includes(key);
}

/** HostLabel: a LabelsToTranslate key becomes its hashed host key; others are unchanged. */
export function hostLabel(key: string, vc: LabelScope): string {
  return isToTranslate(key) ? convertLabelKeyWithPrefix(LabelPrefix, key, vc.name) : key;
}

/** IsTranslatedLabel: the original key when `key` is a hashed host key, otherwise null. */
export function isTranslatedLabel(key: string, vc: LabelScope): string | null {
  for (const original of LABELS_TO_TRANSLATE) {
    if (convertLabelKeyWithPrefix(LabelPrefix, original, vc.name) === key) return original;
  }
  return null;
}

/**
 * VirtualLabel: host key → virtual key. Null for the LabelsToTranslate keys themselves: on the
 * host they are vCluster's own scoping labels and are never synced back.
 */
export function virtualLabel(key: string, vc: LabelScope): string | null {
  if (isToTranslate(key)) return null;
  return isTranslatedLabel(key, vc) ?? key;
}

/**
 * HostLabelsMap (docs/reference.md#label-maps): translate `v`'s keys (dropping keys that already
 * look translated, which would let a tenant spoof vCluster's labels), add the scoping labels when
 * this is object metadata, `p` is null or `p` carries the marker, and keep `p`'s controlled-by
 * label.
 */
export function hostLabelsMap(
  v: LabelMap | null,
  p: LabelMap | null,
  vNamespace: string,
  isMetadata: boolean,
  vc: LabelScope,
): LabelMap | null {
  if (v === null) return null;
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(v)) {
    if (isTranslatedLabel(key, vc) !== null) continue;
    out.set(hostLabel(key, vc), value);
  }
  if (isMetadata || p === null || ownString(p, MarkerLabel) !== "") {
    addScopingLabels(out, vNamespace, vc);
  }
  const controller = p === null ? "" : ownString(p, ControllerLabel);
  if (controller !== "") out.set(ControllerLabel, controller);
  return Object.fromEntries(out);
}

function addScopingLabels(out: Map<string, string>, vNamespace: string, vc: LabelScope): void {
  if (vNamespace === "") {
    // Cluster-scoped objects: the marker names the vCluster instance, not a namespace.
    out.set(MarkerLabel, safeConcatName(vc.namespace, "x", vc.name));
    return;
  }
  out.set(MarkerLabel, vc.name);
  out.set(NamespaceLabel, vNamespace);
}

/** A string value of an own key, or "" (Go's zero value for a missing map key). */
function ownString(map: LabelMap, key: string): string {
  if (!Object.hasOwn(map, key)) return "";
  const value = map[key];
  return typeof value === "string" ? value : "";
}

function isExcludedFromVirtual(key: string): boolean {
  return (
    key === MarkerLabel ||
    key === NamespaceLabel ||
    key === ControllerLabel ||
    key.startsWith(NamespaceLabelPrefix)
  );
}

/**
 * VirtualLabelsMap (docs/reference.md#label-maps): host labels `p` back to virtual labels.
 * vCluster's scoping keys are taken from `v` rather than `p`; then every key goes through
 * VirtualLabel, so host values win for ordinary keys, hashed keys get their names back and
 * host-only keys disappear.
 */
export function virtualLabelsMap(
  p: LabelMap | null,
  v: LabelMap | null,
  vc: LabelScope,
): LabelMap | null {
  if (p === null) return null;
  const carried = new Map<string, string>();
  for (const [key, value] of Object.entries(p)) {
    if (!isExcludedFromVirtual(key)) carried.set(key, value);
  }
  for (const [key, value] of Object.entries(v ?? {})) {
    if (isExcludedFromVirtual(key)) carried.set(key, value);
  }
  // Go ranges over the map while rewriting it; we walk a snapshot, which gives the intended result
  // (docs/reference.md#label-maps).
  const out = new Map<string, string>();
  for (const [key, value] of carried) {
    const virtualKey = virtualLabel(key, vc);
    if (virtualKey !== null) out.set(virtualKey, value);
  }
  return Object.fromEntries(out);
}

/** Renames the keys of `matchLabels` and `matchExpressions[].key`; everything else is kept. */
function translateSelectorKeys(selector: JsonObject, rename: (key: string) => string): JsonObject {
  const out = new Map<string, Json>(Object.entries(selector));
  const matchLabels = selector["matchLabels"];
  if (Object.hasOwn(selector, "matchLabels") && isObject(matchLabels)) {
    const renamed = Object.entries(matchLabels).map(([k, v]): [string, Json] => [rename(k), v]);
    out.set("matchLabels", Object.fromEntries(renamed));
  }
  const expressions = selector["matchExpressions"];
  if (Object.hasOwn(selector, "matchExpressions") && Array.isArray(expressions)) {
    out.set(
      "matchExpressions",
      expressions.map((e) => renameExpressionKey(e, rename)),
    );
  }
  return Object.fromEntries(out);
}

function renameExpressionKey(expression: Json, rename: (key: string) => string): Json {
  if (!isObject(expression)) return expression;
  const key = expression["key"];
  if (!Object.hasOwn(expression, "key") || typeof key !== "string") return expression;
  const out = new Map<string, Json>(Object.entries(expression));
  out.set("key", rename(key));
  return Object.fromEntries(out);
}

/** HostLabelSelector: keys only, no scoping labels added (docs/reference.md#label-maps). */
export function hostLabelSelector(sel: JsonObject, vc: LabelScope): JsonObject {
  return translateSelectorKeys(sel, (key) => hostLabel(key, vc));
}

/**
 * VirtualLabelSelector: keys only. A host-only key (VirtualLabel gives none) is kept as it is
 * rather than dropped: dropping a selector term would widen what the selector matches.
 */
export function virtualLabelSelector(sel: JsonObject, vc: LabelScope): JsonObject {
  return translateSelectorKeys(sel, (key) => virtualLabel(key, vc) ?? key);
}
