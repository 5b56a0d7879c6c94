// Matching a request against rules, in two forms:
//
// - rbac.authorization.k8s.io/v1 PolicyRule (the roles file), exactly as kube's RBAC authorizer
//   matches: `*` is a whole-value wildcard for verbs, apiGroups, resources and nonResourceURLs;
//   a resource rule `*/scale` matches the scale subresource of any resource; `pods/*` is NOT a
//   wildcard in RBAC (it only matches a literal "pods/*"); resourceNames, when set, must contain
//   the request's name, so a list or create (which has no name) never matches them; a
//   nonResourceURL ending in `*` matches every path with that prefix.
// - The deprecated AccessKeyScopeRule (spec.rules, spec.scope.rules). Its resource part is shaped
//   like an audit PolicyRule and matches as audit policy does: a group of `*` is any group, an
//   entry without resources is the whole group, and `pods/*` is every subresource of pods (but not
//   pods itself, as accesskeys/policy-rules.ts reads it). Verbs may be `*`. Then the access-key
//   filters: namespaces, requestTargets, cluster and virtualClusters.
//
// Stored keys passed our validating webhook, but a key written while it was down may hold wrong
// types. A malformed rule matches nothing: scope only narrows, so failing closed is safe.

import { isObject, own, type JsonObject } from "../accesskeys/json-fields.js";

/** authorization.k8s.io ResourceAttributes (fieldSelector and labelSelector left out). */
export interface ResourceAttributes {
  namespace: string;
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  name: string;
}

/** authorization.k8s.io NonResourceAttributes */
export interface NonResourceAttributes {
  path: string;
  verb: string;
}

/** What is asked: exactly one of the two, as in a SubjectAccessReview. */
export type RequestAttributes =
  | { resourceAttributes: ResourceAttributes; nonResourceAttributes?: undefined }
  | { resourceAttributes?: undefined; nonResourceAttributes: NonResourceAttributes };

/** rbac.authorization.k8s.io/v1 PolicyRule */
export interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
}

export type Labels = Readonly<Record<string, string>>;

/** The namespace labels are not known yet (the namespace cache has not synced). */
export const NOT_LOADED: unique symbol = Symbol("not-loaded");

/** A match that may be undecidable until the namespace cache has synced. */
export type Verdict = boolean | "unknown";

/** What the deprecated rules' filters need to know about the request and this cluster. */
export interface TargetContext {
  /** `management.<group-domain>` */
  managementGroup: string;
  /** --cluster-name; "" when none. */
  clusterName: string;
  projectLabel: string;
  virtualClusterLabel: string;
  /** Labels of requestNamespace(request); undefined for no namespace or an unknown one. */
  namespaceLabels(): Labels | undefined | typeof NOT_LOADED;
}

const ALL = "*";

const has = (list: readonly string[] | undefined, value: string): boolean =>
  list !== undefined && list.some((item) => item === ALL || item === value);

/**
 * The namespace a request acts in. For the core `namespaces` resource, a named request acts on the
 * namespace it names (kube-apiserver also reports that name as the namespace; a SubjectAccessReview
 * written by hand may not). Inconsistent attributes act in no namespace. "" = none.
 */
export function requestNamespace(request: RequestAttributes): string {
  const attrs = request.resourceAttributes;
  if (!attrs) return "";
  if (attrs.group !== "" || attrs.resource !== "namespaces" || attrs.name === "") {
    return attrs.namespace;
  }
  return attrs.namespace === "" || attrs.namespace === attrs.name ? attrs.name : "";
}

// ---------------------------------------------------------------- RBAC PolicyRule

// RBAC's ResourceMatches: `*`, an exact `resource[/subresource]`, or `*/<subresource>`.
function rbacResourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === "" ? resource : `${resource}/${subresource}`;
  return (rule.resources ?? []).some(
    (r) => r === ALL || r === combined || (subresource !== "" && r === `${ALL}/${subresource}`),
  );
}

const rbacNameMatches = (rule: PolicyRule, name: string): boolean =>
  !rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(name);

/** RBAC's NonResourceURLMatches: `*`, exact, or a trailing `*` as a prefix match. */
export function nonResourceURLMatches(ruleURL: string, path: string): boolean {
  if (ruleURL === ALL || ruleURL === path) return true;
  if (!ruleURL.endsWith(ALL)) return false;
  let end = ruleURL.length;
  while (end > 0 && ruleURL[end - 1] === ALL) end--;
  return path.startsWith(ruleURL.slice(0, end));
}

/** Whether `rule` allows the request, as kube's RBAC RuleAllows decides. */
export function policyRuleMatches(rule: PolicyRule, request: RequestAttributes): boolean {
  const attrs = request.resourceAttributes;
  if (attrs) {
    return (
      has(rule.verbs, attrs.verb) &&
      has(rule.apiGroups, attrs.group) &&
      rbacResourceMatches(rule, attrs.resource, attrs.subresource) &&
      rbacNameMatches(rule, attrs.name)
    );
  }
  const { verb, path } = request.nonResourceAttributes;
  return (
    has(rule.verbs, verb) &&
    (rule.nonResourceURLs ?? []).some((u) => nonResourceURLMatches(u, path))
  );
}

/** Whether any of `rules` allows the request (RBAC rules are OR-ed). */
export function policyRulesAllow(
  rules: readonly PolicyRule[],
  request: RequestAttributes,
): boolean {
  return rules.some((rule) => policyRuleMatches(rule, request));
}

// ---------------------------------------------------------------- deprecated AccessKeyScopeRule

/** A list of strings; [] when absent; undefined when malformed. */
function stringList(obj: JsonObject, key: string): string[] | undefined {
  const value = own(obj, key);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const items = value as unknown[];
  return items.every((v) => typeof v === "string") ? (items as string[]) : undefined;
}

/** A list of objects; [] when absent; undefined when malformed. */
function objectList(obj: JsonObject, key: string): JsonObject[] | undefined {
  const value = own(obj, key);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const items = value as unknown[];
  return items.every(isObject) ? items : undefined;
}

/** An optional string; "" when absent; undefined when malformed. */
function optionalString(obj: JsonObject, key: string): string | undefined {
  const value = own(obj, key);
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : undefined;
}

/** One audit-style GroupResources entry: group (or `*`), resources (empty = all), resourceNames. */
function groupResourcesMatch(entry: JsonObject, attrs: ResourceAttributes): boolean {
  const group = optionalString(entry, "group");
  const resources = stringList(entry, "resources");
  const names = stringList(entry, "resourceNames");
  if (group === undefined || resources === undefined || names === undefined) return false;
  if (group !== attrs.group && group !== ALL) return false;
  if (resources.length === 0) return names.length === 0 || names.includes(attrs.name);
  if (names.length > 0 && !names.includes(attrs.name)) return false;
  return resources.some((r) => auditResourceMatches(r, attrs.resource, attrs.subresource));
}

// Audit policy's resource match: `*`, exact, `*/<subresource>` and `<resource>/*`.
function auditResourceMatches(rule: string, resource: string, subresource: string): boolean {
  const combined = subresource === "" ? resource : `${resource}/${subresource}`;
  if (rule === ALL || rule === combined) return true;
  if (subresource !== "" && rule === `${ALL}/${subresource}`) return true;
  // `pods/*`: every subresource of pods, not pods itself, as accesskeys/policy-rules.ts reads it
  // when it checks overlaps (audit policy would also match pods; narrower is the safe reading).
  return subresource !== "" && rule === `${resource}/${ALL}`;
}

/** The resource part of a deprecated rule: namespaces (empty = all, "" = cluster-scoped), resources. */
function ruleResourceMatches(rule: JsonObject, request: RequestAttributes): boolean {
  const attrs = request.resourceAttributes;
  if (!attrs) return false;
  const namespaces = stringList(rule, "namespaces");
  const resources = objectList(rule, "resources");
  if (namespaces === undefined || resources === undefined) return false;
  if (namespaces.length > 0 && !namespaces.includes(requestNamespace(request))) return false;
  return resources.length === 0 || resources.some((entry) => groupResourcesMatch(entry, attrs));
}

function ruleNonResourceMatches(rule: JsonObject, request: RequestAttributes): boolean {
  const attrs = request.nonResourceAttributes;
  const urls = stringList(rule, "nonResourceURLs");
  if (!attrs || urls === undefined) return false;
  return urls.some((u) => nonResourceURLMatches(u, attrs.path));
}

/**
 * What a deprecated rule selects: a rule naming resources or namespaces selects resource requests,
 * one naming nonResourceURLs selects those paths (a rule naming both selects either), and a rule
 * naming neither selects every request.
 */
function ruleSelects(rule: JsonObject, request: RequestAttributes): boolean {
  const namespaces = stringList(rule, "namespaces");
  const resources = objectList(rule, "resources");
  const urls = stringList(rule, "nonResourceURLs");
  if (namespaces === undefined || resources === undefined || urls === undefined) return false;
  const resourcePart = namespaces.length > 0 || resources.length > 0;
  if (!resourcePart && urls.length === 0) return true;
  return (
    (resourcePart && ruleResourceMatches(rule, request)) ||
    (urls.length > 0 && ruleNonResourceMatches(rule, request))
  );
}

const requestVerb = (request: RequestAttributes): string =>
  request.resourceAttributes?.verb ?? request.nonResourceAttributes?.verb ?? "";

function labelled(ctx: TargetContext, request: RequestAttributes, label: string): Verdict {
  if (requestNamespace(request) === "") return false;
  const labels = ctx.namespaceLabels();
  if (labels === NOT_LOADED) return "unknown";
  return labels !== undefined && Object.hasOwn(labels, label);
}

/** Whether the request is one of the rule's requestTargets (empty = all). */
function targetMatches(target: string, request: RequestAttributes, ctx: TargetContext): Verdict {
  const management = request.resourceAttributes?.group === ctx.managementGroup;
  switch (target) {
    case "Management":
      return management;
    case "Cluster":
      return !management;
    case "ProjectSpace":
      return labelled(ctx, request, ctx.projectLabel);
    case "ProjectVirtualCluster":
      return labelled(ctx, request, ctx.virtualClusterLabel);
    default:
      return false;
  }
}

/** Any of a list of verdicts: true wins, then "unknown". */
export function anyVerdict(verdicts: Iterable<Verdict>): Verdict {
  let unknown = false;
  for (const v of verdicts) {
    if (v === true) return true;
    if (v === "unknown") unknown = true;
  }
  return unknown ? "unknown" : false;
}

function* lazyMap<T>(items: readonly T[], f: (item: T) => Verdict): Generator<Verdict> {
  for (const item of items) yield f(item);
}

function requestTargetsMatch(
  rule: JsonObject,
  request: RequestAttributes,
  ctx: TargetContext,
): Verdict {
  const targets = stringList(rule, "requestTargets");
  if (targets === undefined) return false;
  if (targets.length === 0) return true;
  return anyVerdict(lazyMap(targets, (t) => targetMatches(t, request, ctx)));
}

/** cluster: when set, only this cluster (--cluster-name) or `*`. */
function clusterMatches(rule: JsonObject, ctx: TargetContext): boolean {
  const cluster = optionalString(rule, "cluster");
  if (cluster === undefined) return false;
  return (
    cluster === "" || cluster === ALL || (ctx.clusterName !== "" && cluster === ctx.clusterName)
  );
}

/** virtualClusters: when set, the request must act in the namespace of one of them. */
function virtualClustersMatch(rule: JsonObject, request: RequestAttributes): boolean {
  const list = objectList(rule, "virtualClusters");
  if (list === undefined) return false;
  if (list.length === 0) return true;
  const namespace = requestNamespace(request);
  return namespace !== "" && list.some((vc) => own(vc, "namespace") === namespace);
}

/** Whether a deprecated AccessKeyScopeRule selects the request. */
export function scopeRuleMatches(
  rule: unknown,
  request: RequestAttributes,
  ctx: TargetContext,
): Verdict {
  if (!isObject(rule)) return false;
  const verbs = stringList(rule, "verbs");
  if (verbs === undefined || (verbs.length > 0 && !has(verbs, requestVerb(request)))) return false;
  if (!ruleSelects(rule, request) || !clusterMatches(rule, ctx)) return false;
  if (!virtualClustersMatch(rule, request)) return false;
  return requestTargetsMatch(rule, request, ctx);
}
