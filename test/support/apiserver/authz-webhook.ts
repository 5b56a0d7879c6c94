// kube's webhook authorizer (--authorization-webhook-config-file): each check is POSTed as an
// authorization.k8s.io/v1 SubjectAccessReview. status.allowed is Allow, status.denied is Deny, and
// neither is no opinion, so the next authorizer (RBAC) decides. A failing webhook is no opinion
// with an error. Answers are cached: allowed ones for 5 minutes, the others for 30 seconds.

import type { AuthorizationAttributes, AuthorizerDecision } from "./authorizer.js";
import type { RulesReview } from "./rbac.js";
import { loadWebhookConfig, postReview, type WebhookClientConfig } from "./webhook-client.js";

export interface AuthzWebhookOptions {
  /** --authorization-webhook-cache-authorized-ttl: 5 minutes unless set; 0 disables. */
  authorizedTtlMs?: number;
  /** --authorization-webhook-cache-unauthorized-ttl: 30 seconds unless set; 0 disables. */
  unauthorizedTtlMs?: number;
  timeoutMs?: number;
}

export type WebhookAuthorizer = (attrs: AuthorizationAttributes) => Promise<AuthorizerDecision>;

export function webhookAuthorizerFromFile(
  configFile: string,
  opts: AuthzWebhookOptions = {},
): WebhookAuthorizer {
  return webhookAuthorizer(loadWebhookConfig(configFile), opts);
}

export function webhookAuthorizer(
  config: WebhookClientConfig,
  opts: AuthzWebhookOptions = {},
): WebhookAuthorizer {
  const allowedTtl = opts.authorizedTtlMs ?? 300_000;
  const deniedTtl = opts.unauthorizedTtlMs ?? 30_000;
  const cache = new Map<string, { expires: number; decision: AuthorizerDecision }>();
  return async (attrs) => {
    const review = subjectAccessReview(attrs);
    const key = JSON.stringify(review.spec);
    const hit = cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.decision;
    let decision: AuthorizerDecision;
    try {
      const answer = await postReview(config, review, opts.timeoutMs);
      if (answer.status < 200 || answer.status >= 300) {
        throw new Error(`the server responded with ${answer.status}`);
      }
      decision = decisionOf(answer.body);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { allowed: false, reason: "", evaluationError: message };
    }
    const ttl = decision.allowed ? allowedTtl : deniedTtl;
    if (ttl > 0) cache.set(key, { expires: Date.now() + ttl, decision });
    return decision;
  };
}

/** The SubjectAccessReview kube sends for a check. */
export function subjectAccessReview(attrs: AuthorizationAttributes): {
  apiVersion: string;
  kind: string;
  metadata: { creationTimestamp: null };
  spec: Record<string, unknown>;
  status: { allowed: false };
} {
  const spec: Record<string, unknown> = { user: attrs.user };
  if (attrs.uid) spec["uid"] = attrs.uid;
  if (attrs.groups.length > 0) spec["groups"] = attrs.groups;
  if (attrs.extra && Object.keys(attrs.extra).length > 0) spec["extra"] = attrs.extra;
  if (attrs.path !== undefined && !attrs.resource) {
    spec["nonResourceAttributes"] = { path: attrs.path, verb: attrs.verb };
  } else {
    spec["resourceAttributes"] = omitEmpty({
      namespace: attrs.namespace,
      verb: attrs.verb,
      group: attrs.group,
      version: attrs.version ?? "",
      resource: attrs.resource,
      subresource: attrs.subresource,
      name: attrs.name,
    });
  }
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: false },
  };
}

function decisionOf(body: unknown): AuthorizerDecision {
  const status = dict(dict(body)["status"]);
  const reason = typeof status["reason"] === "string" ? status["reason"] : "";
  const allowed = status["allowed"] === true;
  const denied = status["denied"] === true;
  if (allowed && denied) {
    return {
      allowed: false,
      denied: true,
      reason,
      evaluationError: "webhook subject access review returned both allow and deny response",
    };
  }
  if (denied) return { allowed: false, denied: true, reason };
  return { allowed, reason };
}

function omitEmpty(obj: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== ""));
}

function dict(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The webhook cannot list rules: SelfSubjectRulesReview is then incomplete, with this error. */
export function webhookRuleResolver(): RulesReview {
  return {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    evaluationError: "webhook authorizer does not support user rule resolution",
  };
}
