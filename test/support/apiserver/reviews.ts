// The review APIs: create-only resources that answer a question about identity or access instead
// of storing anything. Each answer is 201 Created with the request echoed and status filled in:
// - authentication.k8s.io/v1 TokenReview: who is this bearer token? (the authenticator chain);
// - authentication.k8s.io/v1 SelfSubjectReview: who am I? (`kubectl auth whoami`);
// - authorization.k8s.io/v1 (Self|Local)SubjectAccessReview: may they? (`kubectl auth can-i`);
// - authorization.k8s.io/v1 SelfSubjectRulesReview: what may I do here? (`kubectl auth can-i --list`).
// Creating one needs the `create` permission on it, which the server checks first.

import { newBadRequest } from "../../../webhook/src/api/status.js";
import {
  aggregate,
  type AsyncAuthorizer,
  type RequestAttributes,
  type UserIdentity,
} from "./authorizer.js";
import type { TokenAuthenticator } from "./authn.js";
import type { Reply } from "./objects.js";
import type { RbacUser, RulesReview } from "./rbac.js";
import {
  bodyOf,
  handleLocalSubjectAccessReview,
  handleSelfSubjectAccessReview,
  handleSubjectAccessReview,
} from "./subject-access-review.js";

export type ReviewHandler = (
  identity: UserIdentity,
  body: unknown,
  namespace?: string,
) => Promise<Reply>;

/** Lists what a user may do in a namespace; RBAC's `rulesFor`, or a webhook's "can't say". */
export type RuleResolver = (user: RbacUser, namespace: string) => RulesReview;

export interface ReviewDeps {
  /** The server's authorizer now (the hook is replaceable, so it is read per request). */
  authorizer: () => AsyncAuthorizer;
  /** The bearer-token chain (createAuthenticator(...).token); without it TokenReviews say no. */
  authenticateToken?: TokenAuthenticator;
  /** In authorizer order, e.g. [webhookRuleResolver, rbac.rulesFor]. */
  ruleResolvers?: RuleResolver[];
}

export interface ReviewRoute {
  method: "POST";
  /** A Router pattern; `:namespace` is the only parameter. */
  pattern: string;
  /** What the caller must be allowed to `create` first (namespace filled from the URL). */
  attributes: RequestAttributes;
  handle: ReviewHandler;
}

const AUTHN = "authentication.k8s.io";
const AUTHZ = "authorization.k8s.io";

export function reviewHandlers(deps: ReviewDeps): Record<string, ReviewHandler> {
  return {
    tokenreviews: (_identity, body) => tokenReview(deps.authenticateToken, body),
    selfsubjectreviews: (identity, body) => Promise.resolve(selfSubjectReview(identity, body)),
    subjectaccessreviews: (_identity, body) => handleSubjectAccessReview(deps.authorizer(), body),
    selfsubjectaccessreviews: (identity, body) =>
      handleSelfSubjectAccessReview(deps.authorizer(), identity, body),
    localsubjectaccessreviews: (_identity, body, namespace = "") =>
      handleLocalSubjectAccessReview(deps.authorizer(), body, namespace),
    selfsubjectrulesreviews: (identity, body) =>
      Promise.resolve(selfSubjectRulesReview(deps.ruleResolvers ?? [], identity, body)),
  };
}

/** The routes to register before the generic object routes, with their create checks. */
export function reviewRoutes(deps: ReviewDeps): ReviewRoute[] {
  const handlers = reviewHandlers(deps);
  const route = (group: string, resource: string, namespaced = false): ReviewRoute => ({
    method: "POST",
    pattern: `/apis/${group}/v1/${namespaced ? "namespaces/:namespace/" : ""}${resource}`,
    attributes: {
      verb: "create",
      group,
      version: "v1",
      resource,
      subresource: "",
      name: "",
      namespace: "",
    },
    handle: handlers[resource]!,
  });
  return [
    route(AUTHN, "tokenreviews"),
    route(AUTHN, "selfsubjectreviews"),
    route(AUTHZ, "subjectaccessreviews"),
    route(AUTHZ, "selfsubjectaccessreviews"),
    route(AUTHZ, "localsubjectaccessreviews", true),
    route(AUTHZ, "selfsubjectrulesreviews"),
  ];
}

/** TokenReview's REST: the token goes through the bearer-token chain as a lone request would. */
export async function tokenReview(
  authenticate: TokenAuthenticator | undefined,
  body: unknown,
): Promise<Reply> {
  const review = bodyOf(body);
  const spec = dict(review["spec"]);
  const token = typeof spec["token"] === "string" ? spec["token"] : "";
  if (!token) throw newBadRequest("token is required for TokenReview in authentication");
  const result = authenticate ? await authenticate(token) : { authenticated: false };
  // Go's omitempty: `authenticated` only when true, `user` always (an empty struct at worst).
  const status: Record<string, unknown> = {};
  if (result.authenticated) status["authenticated"] = true;
  status["user"] = "user" in result && result.user ? userInfo(result.user) : {};
  if ("audiences" in result && result.audiences) status["audiences"] = result.audiences;
  if ("error" in result && result.error) status["error"] = result.error;
  return created(echo("TokenReview", AUTHN, review, spec, status));
}

/** SelfSubjectReview's REST: a fresh object whose status is the caller's user info. */
export function selfSubjectReview(identity: UserIdentity, body: unknown): Reply {
  bodyOf(body);
  return created({
    kind: "SelfSubjectReview",
    apiVersion: `${AUTHN}/v1`,
    metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z") },
    status: { userInfo: userInfo(identity) },
  });
}

/** SelfSubjectRulesReview's REST: the union of every resolver's rules for spec.namespace. */
export function selfSubjectRulesReview(
  resolvers: readonly RuleResolver[],
  identity: UserIdentity,
  body: unknown,
): Reply {
  const spec = dict(bodyOf(body)["spec"]);
  const namespace = typeof spec["namespace"] === "string" ? spec["namespace"] : "";
  if (!namespace) throw newBadRequest("no namespace on request");
  const status: RulesReview = { resourceRules: [], nonResourceRules: [], incomplete: false };
  const errors: string[] = [];
  for (const resolve of resolvers) {
    const part = resolve(identity, namespace);
    status.resourceRules.push(...part.resourceRules);
    status.nonResourceRules.push(...part.nonResourceRules);
    status.incomplete ||= part.incomplete;
    if (part.evaluationError) errors.push(part.evaluationError);
  }
  if (errors.length > 0) status.evaluationError = aggregate(errors);
  return created({
    kind: "SelfSubjectRulesReview",
    apiVersion: `${AUTHZ}/v1`,
    metadata: { creationTimestamp: null },
    spec: {},
    status,
  });
}

function userInfo(identity: UserIdentity): Record<string, unknown> {
  const info: Record<string, unknown> = { username: identity.user };
  if (identity.uid) info["uid"] = identity.uid;
  if (identity.groups.length > 0) info["groups"] = identity.groups;
  if (identity.extra && Object.keys(identity.extra).length > 0) info["extra"] = identity.extra;
  return info;
}

function echo(
  kind: string,
  group: string,
  review: Record<string, unknown>,
  spec: Record<string, unknown>,
  status: Record<string, unknown>,
): Record<string, unknown> {
  return {
    kind,
    apiVersion: `${group}/v1`,
    metadata: { ...dict(review["metadata"]), creationTimestamp: null },
    spec,
    status,
  };
}

const created = (body: unknown): Reply => ({ status: 201, body });

function dict(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
