// kube's RBAC authorizer over the emulator's store: ClusterRoleBindings grant everywhere,
// RoleBindings grant in their namespace (to a Role there or to a ClusterRole), and a request is
// allowed when any rule reached through a binding to the user, one of its groups or its service
// account matches it. RBAC never denies: without a match it has no opinion, with the errors met on
// the way (a binding to a missing role) as the reason.

import { aggregate, type AuthorizationAttributes, type AuthorizerDecision } from "./authorizer.js";
import type { ResourceRegistry, ResourceType } from "./resources.js";
import type { KubeObject, ObjectStore } from "./store.js";

export const RBAC_V1 = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP = "rbac.authorization.k8s.io";

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/** Who asks: a user and its groups. */
export interface RbacUser {
  user: string;
  groups: readonly string[];
}

/** Where rules come from; `storeSource` reads the emulator's store. */
export interface RbacSource {
  clusterRoleBindings(): KubeObject[];
  roleBindings(namespace: string): KubeObject[];
  clusterRoles(): KubeObject[];
  clusterRole(name: string): KubeObject | undefined;
  role(namespace: string, name: string): KubeObject | undefined;
}

/** Called with each rule that applies (and its binding's description), or with an error. */
export type RuleVisitor = (
  source: string,
  rule: PolicyRule | null,
  error: string | null,
) => boolean;

export interface RulesReview {
  resourceRules: {
    verbs: string[];
    apiGroups?: string[];
    resources?: string[];
    resourceNames?: string[];
  }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

export interface RbacAuthorizer {
  (attrs: AuthorizationAttributes): AuthorizerDecision;
  /** The rules `user` has in `namespace` (plus the cluster-wide ones): SelfSubjectRulesReview. */
  rulesFor(user: RbacUser, namespace: string): RulesReview;
}

export function rbacAuthorizer(source: RbacSource): RbacAuthorizer {
  const authorize = (attrs: AuthorizationAttributes): AuthorizerDecision => {
    const errors: string[] = [];
    let allowedBy = "";
    visitRulesFor(source, attrs, attrs.namespace, (from, rule, error) => {
      if (rule && ruleAllows(attrs, rule)) {
        allowedBy = from;
        return false;
      }
      if (error) errors.push(error);
      return true;
    });
    if (allowedBy) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
    return { allowed: false, reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : "" };
  };
  return Object.assign(authorize, {
    rulesFor: (u: RbacUser, ns: string) => rulesFor(source, u, ns),
  });
}

/** DefaultRuleResolver.VisitRulesFor: cluster role bindings, then role bindings of `namespace`. */
export function visitRulesFor(
  source: RbacSource,
  user: RbacUser,
  namespace: string,
  visit: RuleVisitor,
): void {
  for (const binding of source.clusterRoleBindings()) {
    if (!visitBinding(source, user, binding, "", visit)) return;
  }
  if (!namespace) return;
  for (const binding of source.roleBindings(namespace)) {
    if (!visitBinding(source, user, binding, namespace, visit)) return;
  }
}

function visitBinding(
  source: RbacSource,
  user: RbacUser,
  binding: KubeObject,
  namespace: string,
  visit: RuleVisitor,
): boolean {
  const subjects = list(binding["subjects"]) as unknown as Subject[];
  const subject = subjects.find((s) => appliesTo(user, s, namespace));
  if (!subject) return true;
  const ref = dict(binding["roleRef"]);
  const rules = roleRefRules(source, str(ref["kind"]), str(ref["name"]), namespace);
  if (typeof rules === "string") return visit("", null, rules);
  const from = describe(binding, str(ref["kind"]), str(ref["name"]), subject, namespace);
  return rules.every((rule) => visit(from, rule, null));
}

/** GetRoleReferenceRules, with the lister's NotFound texts. */
function roleRefRules(
  source: RbacSource,
  kind: string,
  name: string,
  namespace: string,
): PolicyRule[] | string {
  if (kind === "Role") {
    const role = source.role(namespace, name);
    return role ? rulesOf(role) : `role.${RBAC_GROUP} ${JSON.stringify(name)} not found`;
  }
  if (kind === "ClusterRole") {
    const role = source.clusterRole(name);
    return role
      ? clusterRoleRules(source, role)
      : `clusterrole.${RBAC_GROUP} ${JSON.stringify(name)} not found`;
  }
  return `unsupported role reference kind: ${JSON.stringify(kind)}`;
}

/**
 * An aggregated ClusterRole has the rules of every ClusterRole its selectors match (in name order,
 * each rule once). kube's clusterrole-aggregation controller writes them into the object; the
 * emulator has no controllers, so it aggregates when it reads.
 */
function clusterRoleRules(source: RbacSource, role: KubeObject): PolicyRule[] {
  const selectors = list(dict(role["aggregationRule"])["clusterRoleSelectors"]);
  if (selectors.length === 0) return rulesOf(role);
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const other of source.clusterRoles()) {
    if (other.metadata.name === role.metadata.name) continue;
    const labels = dict(other.metadata["labels"]) as Record<string, string>;
    if (!selectors.some((s) => selectorMatches(s, labels))) continue;
    for (const rule of rulesOf(other)) {
      const key = JSON.stringify(rule);
      if (!seen.has(key)) rules.push(rule);
      seen.add(key);
    }
  }
  return rules;
}

/** appliesToUser: User by name, Group by membership, ServiceAccount by its user name. */
export function appliesTo(user: RbacUser, subject: Subject, namespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return user.user === subject.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      // A RoleBinding's subject may leave the namespace out: it means the binding's namespace.
      const ns = subject.namespace || namespace;
      return ns !== "" && user.user === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

/** RuleAllows: verbs, API groups, resources (`*`, `res/sub`, `*\/sub`), names; or URLs. */
export function ruleAllows(attrs: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!matchesAny(rule.verbs, attrs.verb)) return false;
  if (attrs.path !== undefined && !attrs.resource)
    return urlMatches(rule.nonResourceURLs, attrs.path);
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return (
    matchesAny(rule.apiGroups, attrs.group) &&
    resourceMatches(rule.resources, combined, attrs.subresource) &&
    nameMatches(rule.resourceNames, attrs.name)
  );
}

function matchesAny(values: readonly string[] | undefined, wanted: string): boolean {
  return (values ?? []).some((v) => v === "*" || v === wanted);
}

function resourceMatches(
  resources: readonly string[] | undefined,
  combined: string,
  subresource: string,
): boolean {
  return (resources ?? []).some(
    (r) => r === "*" || r === combined || (subresource !== "" && r === `*/${subresource}`),
  );
}

/** No resourceNames means any name; otherwise the request must name one of them. */
function nameMatches(names: readonly string[] | undefined, name: string): boolean {
  return !names || names.length === 0 || names.includes(name);
}

/** `*` matches any path, and a trailing `*` any path with that prefix. */
function urlMatches(urls: readonly string[] | undefined, path: string): boolean {
  return (urls ?? []).some(
    (u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.replace(/\*+$/, ""))),
  );
}

/** RBACAuthorizer.RulesFor: every rule that applies, split into resource and URL rules. */
export function rulesFor(source: RbacSource, user: RbacUser, namespace: string): RulesReview {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  visitRulesFor(source, user, namespace, (_from, rule, error) => {
    if (rule) rules.push(rule);
    if (error) errors.push(error);
    return true;
  });
  const review: RulesReview = { resourceRules: [], nonResourceRules: [], incomplete: false };
  for (const rule of rules) {
    if ((rule.resources ?? []).length > 0) {
      review.resourceRules.push({
        verbs: rule.verbs,
        ...omitEmpty({
          apiGroups: rule.apiGroups,
          resources: rule.resources,
          resourceNames: rule.resourceNames,
        }),
      });
    }
    if ((rule.nonResourceURLs ?? []).length > 0) {
      review.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs! });
    }
  }
  if (errors.length > 0) review.evaluationError = aggregate(errors);
  return review;
}

function describe(
  binding: KubeObject,
  kind: string,
  name: string,
  subject: Subject,
  namespace: string,
): string {
  const role = `${kind} ${JSON.stringify(name)}`;
  const who =
    subject.kind === "ServiceAccount"
      ? `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace || namespace}`)}`
      : `${subject.kind} ${JSON.stringify(subject.name)}`;
  return namespace
    ? `RoleBinding ${JSON.stringify(`${binding.metadata.name}/${namespace}`)} of ${role} to ${who}`
    : `ClusterRoleBinding ${JSON.stringify(binding.metadata.name)} of ${role} to ${who}`;
}

/** metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist). */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  const sel = dict(selector);
  const matchLabels = Object.entries(dict(sel["matchLabels"]));
  if (!matchLabels.every(([k, v]) => labels[k] === v)) return false;
  return list(sel["matchExpressions"]).every((e) => {
    const key = str(e["key"]);
    const values = list(e["values"]) as unknown as string[];
    const has = Object.hasOwn(labels, key);
    switch (e["operator"]) {
      case "In":
        return has && values.includes(labels[key]!);
      case "NotIn":
        return !has || !values.includes(labels[key]!);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
}

/** The RBAC objects in the emulator's store (none while the RBAC types are not registered). */
export function storeSource(store: ObjectStore, registry: ResourceRegistry): RbacSource {
  const type = (kind: string): ResourceType | undefined => registry.lookup(RBAC_V1, kind);
  const all = (kind: string, namespace: string): KubeObject[] => {
    const t = type(kind);
    return t ? store.list(t, namespace) : [];
  };
  const one = (kind: string, namespace: string, name: string): KubeObject | undefined => {
    const t = type(kind);
    return t ? store.get(t, namespace, name) : undefined;
  };
  return {
    clusterRoleBindings: () => all("ClusterRoleBinding", ""),
    roleBindings: (namespace) => all("RoleBinding", namespace),
    clusterRoles: () => all("ClusterRole", ""),
    clusterRole: (name) => one("ClusterRole", "", name),
    role: (namespace, name) => one("Role", namespace, name),
  };
}

function rulesOf(role: KubeObject): PolicyRule[] {
  return list(role["rules"]).map((r) => ({
    verbs: strs(r["verbs"]),
    ...optional("apiGroups", r["apiGroups"]),
    ...optional("resources", r["resources"]),
    ...optional("resourceNames", r["resourceNames"]),
    ...optional("nonResourceURLs", r["nonResourceURLs"]),
  }));
}

function optional(field: string, value: unknown): Record<string, string[]> {
  return Array.isArray(value) ? { [field]: strs(value) } : {};
}

function omitEmpty<T extends object>(obj: T): T {
  return Object.fromEntries(
    Object.entries(obj).filter(([, v]) => Array.isArray(v) && v.length > 0),
  ) as T;
}

function dict(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

const list = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value) ? value.map(dict) : [];

const strs = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

const str = (value: unknown): string => (typeof value === "string" ? value : "");
