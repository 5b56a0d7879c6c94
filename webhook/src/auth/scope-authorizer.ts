// Whether an access key's scope (and deprecated rules) lets a request through. Scope only narrows
// what the key's owner may do: the answer is "denied" or "no opinion" (RBAC then decides), never
// "allowed".
//
// How scope maps onto a plain cluster (entries of all lists are OR-ed):
// - projects [{project: p}]: requests in a namespace labelled <projectLabel>=p, and requests on
//   the core `namespaces` resource naming such a namespace. `*`: any value of the label.
// - spaces [{project: p, space: s}]: the namespace s when it is labelled <projectLabel>=p;
//   s = `*`: every namespace of project p; p = `*`: any value of the project label.
// - virtualClusters [{project: p, virtualCluster: v}]: namespaces labelled
//   <virtualClusterLabel>=v (the namespaces that host the virtual cluster) and <projectLabel>=p.
// - clusters [{cluster: c}]: every request, when c is `*` or --cluster-name.
// - roles [{role, projects?, virtualClusters?}] and allowLoftCli (= role loft-cli): the role's
//   PolicyRules must allow the request; with projects or virtualClusters, the request must also act
//   in a namespace of one of those projects or hosting one of those virtual clusters.
// - rules (deprecated): policy-rule-match.ts.
// `*` only ever means "any value" of a label that must be present: a namespace without the project
// label is in no project. Requests that act in no namespace (cluster-scoped, or lists across all
// namespaces) are only matched by clusters, roles without projects/virtualClusters and rules.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { goQuote } from "../shared/go-quote.js";
import { resourceIdentity } from "../shared/ownedaccesskey.js";
import { isObject, own, type JsonObject } from "../accesskeys/json-fields.js";
import type { NamespaceLabels } from "./contracts.js";
import {
  anyVerdict,
  NOT_LOADED,
  policyRulesAllow,
  requestNamespace,
  scopeRuleMatches,
  type Labels,
  type RequestAttributes,
  type TargetContext,
  type Verdict,
} from "./policy-rule-match.js";
import { LOFT_CLI_ROLE, type RoleSet } from "./roles.js";
import { credentialClass, explicitlyAllows, type CredentialClass } from "./credential-requests.js";

export const DEFAULT_PROJECT_LABEL = "loft.sh/project";
export const DEFAULT_VIRTUAL_CLUSTER_LABEL = "loft.sh/vcluster-instance-name";
/** The reason when the answer depends on a cache that has not synced: we fail closed. */
export const NOT_LOADED_REASON = "access keys are not loaded yet";

export interface ScopeDeps {
  groupDomain: string;
  /** --cluster-name; "" when none. */
  clusterName: string;
  projectLabel: string;
  virtualClusterLabel: string;
  roles: RoleSet;
  namespaces: NamespaceLabels;
}

export type ScopeDecision = { denied: false } | { denied: true; reason: string };

const ALL = "*";
const LISTS = ["roles", "projects", "spaces", "virtualClusters", "clusters", "rules"] as const;
type ListName = (typeof LISTS)[number];

/** The key's scope entries, gathered from spec.scope and the deprecated spec fields. */
interface KeyScope {
  lists: Record<ListName, unknown[]>;
  allowLoftCli: boolean;
  /** A scope field of the wrong type: the key is restricted, and that field allows nothing. */
  malformed: boolean;
}

/** Entries of a list field; [] when absent; undefined when not a list. */
function listOf(obj: JsonObject, key: string): unknown[] | undefined {
  const value = own(obj, key);
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? (value as unknown[]) : undefined;
}

function keyScope(key: OwnedAccessKey): KeyScope {
  const spec: JsonObject = isObject(key.spec) ? key.spec : {};
  const rawScope = own(spec, "scope");
  const scope: JsonObject = isObject(rawScope) ? rawScope : {};
  let malformed = rawScope !== undefined && rawScope !== null && !isObject(rawScope);
  const lists = {} as Record<ListName, unknown[]>;
  for (const name of LISTS) {
    const found = listOf(scope, name);
    if (found === undefined) malformed = true;
    lists[name] = found ?? [];
  }
  const specRules = listOf(spec, "rules");
  if (specRules === undefined) malformed = true;
  lists.rules = [...lists.rules, ...(specRules ?? [])];
  const allowLoftCli = own(spec, "allowLoftCli") === true || own(scope, "allowLoftCli") === true;
  return { lists, allowLoftCli, malformed };
}

/** Whether the key restricts anything: a scope entry, allowLoftCli, a deprecated rule. */
export function isRestricted(key: OwnedAccessKey): boolean {
  return restricts(keyScope(key));
}

function restricts(scope: KeyScope): boolean {
  return scope.malformed || scope.allowLoftCli || LISTS.some((l) => scope.lists[l].length > 0);
}

// ---------------------------------------------------------------- always allowed

const DISCOVERY_PATHS = new Set(["/api", "/apis", "/version"]);
const DISCOVERY_PREFIXES = ["/api/", "/apis/", "/openapi/"];
const SELF_REVIEWS: Readonly<Record<string, readonly string[]>> = {
  "authentication.k8s.io": ["selfsubjectreviews"],
  "authorization.k8s.io": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
};

/**
 * Requests no restricted key is denied, because kubectl cannot work without them and they reveal
 * nothing the key cannot learn anyway: discovery (GET /api, /api/*, /apis, /apis/*, /version,
 * /openapi/*) and creating the self reviews behind `kubectl auth whoami` and `kubectl auth can-i`.
 */
export function isAlwaysAllowed(request: RequestAttributes): boolean {
  const nonResource = request.nonResourceAttributes;
  if (nonResource) {
    const { verb, path } = nonResource;
    return (
      verb === "get" &&
      (DISCOVERY_PATHS.has(path) || DISCOVERY_PREFIXES.some((p) => path.startsWith(p)))
    );
  }
  const attrs = request.resourceAttributes;
  const resources = Object.hasOwn(SELF_REVIEWS, attrs.group) ? SELF_REVIEWS[attrs.group] : [];
  return (
    attrs.verb === "create" && attrs.subresource === "" && !!resources?.includes(attrs.resource)
  );
}

// ---------------------------------------------------------------- entries

/** What every entry check needs: the request, its namespace's labels (looked up once), config. */
interface Context {
  request: RequestAttributes;
  namespace: string;
  deps: ScopeDeps;
  target: TargetContext;
  labels(): Labels | undefined | typeof NOT_LOADED;
  unknownRoles: string[];
}

function makeContext(request: RequestAttributes, deps: ScopeDeps): Context {
  const namespace = requestNamespace(request);
  let cached: { value: Labels | undefined | typeof NOT_LOADED } | undefined;
  const labels = (): Labels | undefined | typeof NOT_LOADED => {
    if (cached) return cached.value;
    let value: Labels | undefined | typeof NOT_LOADED = undefined;
    if (namespace !== "")
      value = deps.namespaces.synced() ? deps.namespaces.labels(namespace) : NOT_LOADED;
    cached = { value };
    return value;
  };
  const target: TargetContext = {
    managementGroup: resourceIdentity(deps.groupDomain).group,
    clusterName: deps.clusterName,
    projectLabel: deps.projectLabel,
    virtualClusterLabel: deps.virtualClusterLabel,
    namespaceLabels: labels,
  };
  return { request, namespace, deps, target, labels, unknownRoles: [] };
}

const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v !== "";

/** Whether the request's namespace has `label` = want (`*`: any value). */
function namespaceHas(ctx: Context, label: string, want: unknown): Verdict {
  if (ctx.namespace === "" || !nonEmptyString(want)) return false;
  const labels = ctx.labels();
  if (labels === NOT_LOADED) return "unknown";
  if (labels === undefined || !Object.hasOwn(labels, label)) return false;
  return want === ALL || labels[label] === want;
}

/** Both verdicts true (false wins over "unknown"). */
function both(a: Verdict, b: () => Verdict): Verdict {
  if (a === false) return false;
  const second = b();
  if (second === false) return false;
  return a === true && second === true ? true : "unknown";
}

function projectMatches(entry: JsonObject, ctx: Context): Verdict {
  return namespaceHas(ctx, ctx.deps.projectLabel, own(entry, "project"));
}

function spaceMatches(entry: JsonObject, ctx: Context): Verdict {
  const space = own(entry, "space");
  if (!nonEmptyString(space) || (space !== ALL && space !== ctx.namespace)) return false;
  return namespaceHas(ctx, ctx.deps.projectLabel, own(entry, "project"));
}

function virtualClusterMatches(entry: JsonObject, ctx: Context): Verdict {
  const label = ctx.deps.virtualClusterLabel;
  return both(namespaceHas(ctx, label, own(entry, "virtualCluster")), () =>
    namespaceHas(ctx, ctx.deps.projectLabel, own(entry, "project")),
  );
}

function clusterMatches(entry: JsonObject, ctx: Context): Verdict {
  const cluster = own(entry, "cluster");
  if (cluster === ALL) return true;
  return ctx.deps.clusterName !== "" && cluster === ctx.deps.clusterName;
}

/** A role entry's projects / virtualClusters: where in the cluster its rules apply. */
function roleTargetsMatch(entry: JsonObject, ctx: Context): Verdict {
  const projects = listOf(entry, "projects");
  const virtualClusters = listOf(entry, "virtualClusters");
  if (projects === undefined || virtualClusters === undefined) return false;
  if (projects.length === 0 && virtualClusters.length === 0) return true;
  const { projectLabel, virtualClusterLabel } = ctx.deps;
  return anyVerdict(
    (function* () {
      for (const p of projects) yield namespaceHas(ctx, projectLabel, p);
      for (const v of virtualClusters) yield namespaceHas(ctx, virtualClusterLabel, v);
    })(),
  );
}

function roleMatches(entry: JsonObject, ctx: Context): Verdict {
  const role = own(entry, "role");
  if (!nonEmptyString(role)) return false;
  const rules = ctx.deps.roles.get(role);
  if (rules === undefined) {
    ctx.unknownRoles.push(role);
    return false;
  }
  if (!policyRulesAllow(rules, ctx.request)) return false;
  return roleTargetsMatch(entry, ctx);
}

const CHECKS: Record<ListName, (entry: JsonObject, ctx: Context) => Verdict> = {
  roles: roleMatches,
  projects: projectMatches,
  spaces: spaceMatches,
  virtualClusters: virtualClusterMatches,
  clusters: clusterMatches,
  rules: (rule, ctx) => scopeRuleMatches(rule, ctx.request, ctx.target),
};

function* verdicts(scope: KeyScope, ctx: Context): Generator<Verdict> {
  if (scope.allowLoftCli) yield roleMatches({ role: LOFT_CLI_ROLE }, ctx);
  for (const list of LISTS) {
    for (const entry of scope.lists[list]) yield isObject(entry) ? CHECKS[list](entry, ctx) : false;
  }
}

// ---------------------------------------------------------------- reasons

const MAX_TEXT = 100;
/** A user-controlled value in a reason: Go-quoted (no control characters) and bounded. */
export function shortQuote(s: string): string {
  return goQuote(s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}...` : s);
}

/** `list pods in namespace "prod"`, `get deployments.apps "web"`, `get /metrics`. */
export function describeRequest(request: RequestAttributes): string {
  const nonResource = request.nonResourceAttributes;
  if (nonResource) return `${shortQuote(nonResource.verb)} ${shortQuote(nonResource.path)}`;
  const a = request.resourceAttributes;
  let what = a.group === "" ? a.resource : `${a.resource}.${a.group}`;
  if (a.subresource !== "") what += `/${a.subresource}`;
  let text = `${shortQuote(a.verb)} ${shortQuote(what)}`;
  if (a.name !== "") text += ` ${shortQuote(a.name)}`;
  if (a.namespace !== "") text += ` in namespace ${shortQuote(a.namespace)}`;
  return text;
}

function denial(key: OwnedAccessKey, request: RequestAttributes, unknownRoles: string[]): string {
  const name = typeof key.metadata?.name === "string" ? key.metadata.name : "";
  let reason = `access key ${shortQuote(name)} does not allow ${describeRequest(request)}: outside the key's scope`;
  const unknown = unknownRoles[0];
  if (unknown !== undefined) reason += ` (unknown role ${shortQuote(unknown)})`;
  return reason;
}

/**
 * Whether one of the key's role entries names a credential request explicitly
 * (credential-requests.ts), where the entry applies (its projects and virtual clusters).
 */
function explicitRoleGrant(scope: KeyScope, ctx: Context): Verdict {
  return anyVerdict(
    (function* () {
      for (const entry of scope.lists.roles) {
        if (!isObject(entry)) continue;
        const role = own(entry, "role");
        const rules = nonEmptyString(role) ? ctx.deps.roles.get(role) : undefined;
        if (!rules?.some((rule) => explicitlyAllows(rule, ctx.request))) continue;
        yield roleTargetsMatch(entry, ctx);
      }
    })(),
  );
}

function credentialDenial(key: OwnedAccessKey, request: RequestAttributes, what: CredentialClass) {
  const name = typeof key.metadata?.name === "string" ? key.metadata.name : "";
  return (
    `access key ${shortQuote(name)} does not allow ${describeRequest(request)}: it mints or ` +
    `borrows credentials (${what}), which a scoped key may do only where one of its roles names ` +
    "the verb, group and resource explicitly"
  );
}

/**
 * The key's decision on a request: denied (with a reason) when it is outside the key's scope and
 * rules, when it asks for credentials no role of the key names explicitly, or when deciding needs
 * namespace labels that are not loaded yet; otherwise no opinion.
 */
export function authorizeScope(
  key: OwnedAccessKey,
  request: RequestAttributes,
  deps: ScopeDeps,
): ScopeDecision {
  const scope = keyScope(key);
  if (!restricts(scope) || isAlwaysAllowed(request)) return { denied: false };
  const ctx = makeContext(request, deps);
  const ownName = typeof key.metadata?.name === "string" ? key.metadata.name : "";
  const credential = credentialClass(request, ctx.target.managementGroup, ownName);
  if (credential !== undefined) {
    const granted = explicitRoleGrant(scope, ctx);
    if (granted === "unknown") return { denied: true, reason: NOT_LOADED_REASON };
    if (!granted) return { denied: true, reason: credentialDenial(key, request, credential) };
  }
  const verdict = anyVerdict(verdicts(scope, ctx));
  if (verdict === true) return { denied: false };
  if (verdict === "unknown") return { denied: true, reason: NOT_LOADED_REASON };
  return { denied: true, reason: denial(key, request, ctx.unknownRoles) };
}
