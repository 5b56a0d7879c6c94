// Who is asking and whether they may: bearer tokens map to users, and one hook decides both the
// server's own requests and SubjectAccessReviews, so tests can model any RBAC outcome.

export interface UserIdentity {
  user: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** authorizer.Attributes, as a SubjectAccessReview or a request carries them. */
export interface AuthorizationAttributes {
  user: string;
  groups: string[];
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

export interface AuthorizerDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export type Authorizer = (attrs: AuthorizationAttributes) => boolean | AuthorizerDecision;

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
