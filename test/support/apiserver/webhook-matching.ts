// Which admission webhooks a request goes to, as kube-apiserver's generic webhook plugin decides
// (apiserver/pkg/admission/plugin/webhook/generic/webhook.go ShouldCallHook): the namespaceSelector
// and objectSelector first, then the rules, exactly or (matchPolicy Equivalent) through another
// version of the same resource. Selector errors only count when the rules match.
//
// Not emulated: matchConditions (CEL). A webhook that has them is treated as if every condition
// were true. Equivalent is approximated: the equivalents of group/version/resource are the other
// registered versions of the same group and resource (kube also knows cross-group equivalents,
// e.g. apps and extensions deployments).

import type { StatusCause } from "../../../webhook/src/api/field-errors.js";
import { KubeError, newNotFound } from "../../../webhook/src/api/status.js";
import type { AdmissionAttributes, AdmissionOperation } from "./admission-types.js";
import {
  compileLabelSelector,
  labelsOf,
  type LabelSelector,
  type Labels,
} from "./label-selector.js";
import type { ResourceType } from "./resources.js";
import type { KubeObject } from "./store.js";

/** admissionregistration/v1 RuleWithOperations. */
export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** "Cluster", "Namespaced" or "*" (the default). */
  scope?: string;
}

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** admissionregistration/v1 WebhookClientConfig. */
export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** Base64 of the PEM CA bundle that signs the webhook's serving certificate. */
  caBundle?: string;
}

/** One webhook of a Mutating/ValidatingWebhookConfiguration, with the v1 defaults applied. */
export interface Webhook {
  /** `<configuration>/<webhook>/<index>`, as kube's webhook accessor names it. */
  uid: string;
  configurationName: string;
  name: string;
  clientConfig: WebhookClientConfig;
  rules: RuleWithOperations[];
  failurePolicy: string;
  matchPolicy: string;
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  /** Required in v1; undefined only when a stored object lacks it. */
  sideEffects?: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  /** Mutating webhooks only: "Never" (default) or "IfNeeded". */
  reinvocationPolicy: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** Whom to call and how the request looks to them (resource/kind differ under Equivalent). */
export interface WebhookInvocation {
  webhook: Webhook;
  resource: GroupVersionResource;
  subresource: string;
  kind: GroupVersionKind;
}

/** What matching needs from the server: namespaces and the other versions of a resource. */
export interface MatchEnvironment {
  namespace(name: string): KubeObject | undefined;
  /** Every registered version of `group`/`resource`, in registration order. */
  versionsOf(group: string, resource: string): ResourceType[];
}

/** The request as a rule sees it; `resource` may be an equivalent of the requested one. */
interface RuleTarget {
  resource: GroupVersionResource;
  subresource: string;
  namespace: string;
  operation: AdmissionOperation;
}

const isNamespaces = (r: GroupVersionResource): boolean =>
  r.group === "" && r.version === "v1" && r.resource === "namespaces";

const exactOrWildcard = (items: readonly string[] | undefined, requested: string): boolean =>
  (items ?? []).some((item) => item === "*" || item === requested);

/** rules.Matcher.scope: Namespace objects count as cluster-scoped. */
function scopeMatches(scope: string | undefined, t: RuleTarget): boolean {
  switch (scope ?? "*") {
    case "*":
      return true;
    case "Namespaced":
      return !isNamespaces(t.resource) && t.namespace !== "";
    case "Cluster":
      return isNamespaces(t.resource) || t.namespace === "";
    default:
      return false;
  }
}

/**
 * rules.Matcher.resource: `pods` is the main resource only, `pods/status` one subresource,
 * `pods/*` the resource and all its subresources, `*` every main resource, `*\/*` everything.
 */
function resourceMatches(resources: readonly string[] | undefined, t: RuleTarget): boolean {
  return (resources ?? []).some((entry) => {
    const slash = entry.indexOf("/");
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? "" : entry.slice(slash + 1);
    return (res === "*" || res === t.resource.resource) && (sub === "*" || sub === t.subresource);
  });
}

export function ruleMatches(rule: RuleWithOperations, t: RuleTarget): boolean {
  return (
    scopeMatches(rule.scope, t) &&
    exactOrWildcard(rule.operations, t.operation) &&
    exactOrWildcard(rule.apiGroups, t.resource.group) &&
    exactOrWildcard(rule.apiVersions, t.resource.version) &&
    resourceMatches(rule.resources, t)
  );
}

/** The GroupVersionKind of a type's subresource (its own kind, e.g. Scale, or the parent's). */
export function kindOf(type: ResourceType, subresource: string): GroupVersionKind | undefined {
  if (!subresource) return { group: type.group, version: type.version, kind: type.kind };
  const sub = type.subresources?.find((s) => s.name === subresource);
  return sub && { group: type.group, version: type.version, kind: sub.kind };
}

const gvrOf = (t: ResourceType): GroupVersionResource => ({
  group: t.group,
  version: t.version,
  resource: t.resource,
});

/** The namespace a request is about; for Namespace objects, the namespace itself. */
export function requestNamespace(attrs: AdmissionAttributes): string {
  return isNamespaces(gvrOf(attrs.type)) ? attrs.namespace || attrs.name : attrs.namespace;
}

/**
 * namespace.Matcher.MatchNamespaceSelector: cluster-scoped objects (except Namespaces) always
 * match; a Namespace being created or updated is judged by its own labels; anything else by the
 * stored Namespace, and a missing one is a 404 `namespaces "x" not found`.
 */
export function matchNamespaceSelector(
  webhook: Webhook,
  attrs: AdmissionAttributes,
  env: MatchEnvironment,
): boolean | KubeError {
  const namespaces = isNamespaces(gvrOf(attrs.type));
  const name = requestNamespace(attrs);
  if (!name && !namespaces) return true;
  const selector = compileLabelSelector(webhook.namespaceSelector);
  if ("error" in selector) return internalError(selector.error);
  if (selector.empty) return true;
  let labels: Labels | undefined;
  if (
    namespaces &&
    attrs.subresource === "" &&
    (attrs.operation === "CREATE" || attrs.operation === "UPDATE")
  ) {
    labels = labelsOf(attrs.object);
  } else {
    const ns = env.namespace(name);
    if (!ns) return newNotFound({ group: "", resource: "namespaces" }, name);
    labels = labelsOf(ns);
  }
  return selector.matches(labels);
}

/** object.Matcher.MatchObjectSelector: the new or the old object must match. */
export function matchObjectSelector(
  webhook: Webhook,
  attrs: Pick<AdmissionAttributes, "object" | "oldObject">,
): boolean | KubeError {
  const selector = compileLabelSelector(webhook.objectSelector);
  if ("error" in selector) return internalError(selector.error);
  if (selector.empty) return true;
  const matchObject = (obj: KubeObject | null): boolean => !!obj && selector.matches(labelsOf(obj));
  return matchObject(attrs.object) || matchObject(attrs.oldObject);
}

/** Go's schema.GroupVersionResource String(). */
const gvrText = (r: GroupVersionResource): string =>
  `${r.group}/${r.version}, Resource=${r.resource}`;

function matchRules(
  webhook: Webhook,
  attrs: AdmissionAttributes,
  env: MatchEnvironment,
): WebhookInvocation | KubeError | null {
  const requested = gvrOf(attrs.type);
  const target: RuleTarget = {
    resource: requested,
    subresource: attrs.subresource,
    namespace: requestNamespace(attrs),
    operation: attrs.operation,
  };
  if (webhook.rules.some((r) => ruleMatches(r, target))) {
    const kind = kindOf(attrs.type, attrs.subresource) ?? kindOf(attrs.type, "")!;
    return { webhook, resource: requested, subresource: attrs.subresource, kind };
  }
  if (webhook.matchPolicy !== "Equivalent") return null;
  const equivalents = env
    .versionsOf(requested.group, requested.resource)
    .filter((t) => t.version !== requested.version);
  // "honor earlier rules first": the first rule that matches any equivalent wins.
  for (const rule of webhook.rules) {
    for (const eq of equivalents) {
      if (!ruleMatches(rule, { ...target, resource: gvrOf(eq) })) continue;
      const kind = kindOf(eq, attrs.subresource);
      if (!kind) return internalError(`unable to convert to ${gvrText(gvrOf(eq))}: unknown kind`);
      return { webhook, resource: gvrOf(eq), subresource: attrs.subresource, kind };
    }
  }
  return null;
}

/**
 * ShouldCallHook: the invocation when `webhook` applies to the request, null when it does not,
 * or the error that rejects the request (a selector error or missing namespace, only for webhooks
 * whose rules match).
 */
export function shouldCallHook(
  webhook: Webhook,
  attrs: AdmissionAttributes,
  env: MatchEnvironment,
): WebhookInvocation | KubeError | null {
  const nsMatch = matchNamespaceSelector(webhook, attrs, env);
  if (nsMatch === false) return null;
  const objMatch = matchObjectSelector(webhook, attrs);
  if (objMatch === false) return null;
  const invocation = matchRules(webhook, attrs, env);
  if (invocation === null || invocation instanceof KubeError) return invocation;
  if (nsMatch instanceof KubeError) return nsMatch;
  if (objMatch instanceof KubeError) return objMatch;
  return invocation;
}

/**
 * rules.IsExemptAdmissionConfigurationResource: writes of webhook configurations and admission
 * policies never go to webhooks, so a broken webhook cannot lock itself in.
 */
export function isExemptFromWebhooks(type: ResourceType): boolean {
  return (
    type.group === "admissionregistration.k8s.io" &&
    [
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "MutatingAdmissionPolicy",
      "MutatingAdmissionPolicyBinding",
    ].includes(type.kind)
  );
}

/**
 * apierrors.NewInternalError: 500 with the message as the one cause. kube's cause has only a
 * message (reason and field are omitempty), so the cause object carries nothing else.
 */
export function internalError(message: string): KubeError {
  const cause = { message } as unknown as StatusCause;
  return new KubeError(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [cause],
  });
}
