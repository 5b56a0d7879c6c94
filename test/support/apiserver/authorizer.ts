// Who is asking and whether they may: bearer tokens map to users, and one hook decides both the
// server's own requests and SubjectAccessReviews, so tests can model any RBAC outcome. Hooks may be
// synchronous (a boolean or a decision) or asynchronous (an authorization webhook); `union` chains
// them the way kube's union authorizer does.

import { KubeError } from "../../../webhook/src/api/status.js";
import { forbidden } from "./errors.js";

export interface UserIdentity {
  user: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** authorizer.Attributes, as a SubjectAccessReview or a request carries them: who, and what. */
export interface AuthorizationAttributes extends RequestAttributes {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export interface AuthorizerDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export type Authorizer = (attrs: AuthorizationAttributes) => boolean | AuthorizerDecision;

/** An Authorizer that may also answer later, as a webhook does. Every Authorizer is one. */
export type AsyncAuthorizer = (
  attrs: AuthorizationAttributes,
) => boolean | AuthorizerDecision | Promise<boolean | AuthorizerDecision>;

export const MASTERS = "system:masters";

/** The default: members of system:masters may do anything, nobody else anything. */
export const mastersOnly: Authorizer = (attrs) => attrs.groups.includes(MASTERS);

export function decide(authorize: Authorizer, attrs: AuthorizationAttributes): AuthorizerDecision {
  const answer = authorize(attrs);
  if (typeof answer !== "boolean") return answer;
  return answer
    ? { allowed: true, reason: `allowed by the test authorizer for user "${attrs.user}"` }
    : { allowed: false, reason: "" };
}

/** Bearer token from the Authorization header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1]! : null;
}

export async function decideAsync(
  authorize: AsyncAuthorizer,
  attrs: AuthorizationAttributes,
): Promise<AuthorizerDecision> {
  const answer = await authorize(attrs);
  return decide(() => answer, attrs);
}

/** kube's privileged-group authorizer, first in its chain: system:masters may do anything. */
export const privilegedGroups: Authorizer = (attrs) =>
  attrs.groups.includes(MASTERS) ? { allowed: true, reason: "" } : { allowed: false };

/**
 * kube's union authorizer: ask each in turn; the first Allow or Deny wins. When all have no
 * opinion, the reasons are joined with newlines and the errors aggregated (`[a, b]` for several).
 * An authorizer that throws counts as no opinion with that error, as a failing webhook does.
 */
export function union(
  ...authorizers: AsyncAuthorizer[]
): (attrs: AuthorizationAttributes) => Promise<AuthorizerDecision> {
  return async (attrs) => {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const authorize of authorizers) {
      let decision: AuthorizerDecision;
      try {
        decision = await decideAsync(authorize, attrs);
      } catch (err) {
        decision = {
          allowed: false,
          evaluationError: err instanceof Error ? err.message : String(err),
        };
      }
      if (decision.allowed || decision.denied) return decision;
      if (decision.reason) reasons.push(decision.reason);
      if (decision.evaluationError) errors.push(decision.evaluationError);
    }
    const out: AuthorizerDecision = { allowed: false, reason: reasons.join("\n") };
    const evaluationError = aggregate(errors);
    if (evaluationError) out.evaluationError = evaluationError;
    return out;
  };
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several as `[a, b]`, duplicates once. */
export function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  if (unique.length <= 1) return unique[0] ?? "";
  return `[${unique.join(", ")}]`;
}

/** The request a check is about: RequestInfo for resources, or a path for non-resource URLs. */
export interface RequestAttributes {
  verb: string;
  group: string;
  version?: string;
  resource: string;
  subresource: string;
  name: string;
  namespace: string;
  /** Set for non-resource requests (`/healthz`); resource fields are then empty. */
  path?: string;
}

/**
 * kube's WithAuthorization filter: anything but Allow is 403 Forbidden, with the authorizer's reason
 * after the standard text (`...in the namespace "default": RBAC: clusterrole... not found`).
 */
export async function authorizeRequest(
  authorize: AsyncAuthorizer,
  identity: UserIdentity,
  request: RequestAttributes,
): Promise<void> {
  const attrs: AuthorizationAttributes = {
    ...request,
    user: identity.user,
    groups: identity.groups,
  };
  if (identity.uid) attrs.uid = identity.uid;
  if (identity.extra) attrs.extra = identity.extra;
  const decision = await decideAsync(union(privilegedGroups, authorize), attrs);
  if (decision.allowed) return;
  throw forbiddenFor(attrs, decision.reason ?? "");
}

/** responsewriters.Forbidden: NewForbidden(group resource, name, "<why>[: <reason>]"). */
export function forbiddenFor(attrs: AuthorizationAttributes, reason: string): KubeError {
  const suffix = reason ? `: ${reason}` : "";
  if (attrs.path !== undefined && !attrs.resource) {
    const why = `User ${JSON.stringify(attrs.user)} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
    return new KubeError(403, "Forbidden", `forbidden: ${why}${suffix}`, { group: "", kind: "" });
  }
  const base = forbidden({ ...attrs, user: attrs.user });
  return new KubeError(403, "Forbidden", `${base.message}${suffix}`, base.details);
}
