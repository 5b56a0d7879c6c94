// The access reviews of authorization.k8s.io/v1, validated like kube's
// ValidateSubjectAccessReview and friends and answered by the server's authorizer chain:
// - SubjectAccessReview: "may this user do this?" (POST .../subjectaccessreviews);
// - SelfSubjectAccessReview: the same for the caller (what `kubectl auth can-i` asks);
// - LocalSubjectAccessReview: a SubjectAccessReview confined to one namespace.
// The answer echoes the request with status {allowed, denied, reason, evaluationError}.

import { invalid, type FieldError } from "../../../webhook/src/api/field-errors.js";
import { newBadRequest, newInvalid } from "../../../webhook/src/api/status.js";
import {
  decideAsync,
  privilegedGroups,
  union,
  type AsyncAuthorizer,
  type AuthorizationAttributes,
  type UserIdentity,
} from "./authorizer.js";
import type { Reply } from "./objects.js";

type Dict = Record<string, unknown>;

const GROUP = "authorization.k8s.io";
const API_VERSION = `${GROUP}/v1`;

export async function handleSubjectAccessReview(
  authorize: AsyncAuthorizer,
  body: unknown,
): Promise<Reply> {
  const review = bodyOf(body);
  const spec = dict(review["spec"]);
  const errors = [...attributeErrors(spec), ...subjectErrors(spec)];
  if (errors.length > 0)
    throw newInvalid({ group: GROUP, kind: "SubjectAccessReview" }, "", errors);
  return answer(authorize, "SubjectAccessReview", review, spec, subjectOf(spec));
}

export async function handleSelfSubjectAccessReview(
  authorize: AsyncAuthorizer,
  identity: UserIdentity,
  body: unknown,
): Promise<Reply> {
  const review = bodyOf(body);
  const spec = dict(review["spec"]);
  const errors = attributeErrors(spec);
  if (errors.length > 0) {
    throw newInvalid({ group: GROUP, kind: "SelfSubjectAccessReview" }, "", errors);
  }
  return answer(authorize, "SelfSubjectAccessReview", review, spec, identity);
}

/** LocalSubjectAccessReview: metadata.namespace comes from the URL and must match the spec's. */
export async function handleLocalSubjectAccessReview(
  authorize: AsyncAuthorizer,
  body: unknown,
  namespace: string,
): Promise<Reply> {
  const review = bodyOf(body);
  const metadata = dict(review["metadata"]);
  const given = typeof metadata["namespace"] === "string" ? metadata["namespace"] : "";
  // The generic create handler: an object's namespace defaults to, and must equal, the URL's.
  if (given && given !== namespace) {
    throw newBadRequest(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  }
  const spec = dict(review["spec"]);
  const errors = [
    ...attributeErrors(spec),
    ...subjectErrors(spec),
    ...localErrors(spec, namespace),
  ];
  if (errors.length > 0) {
    throw newInvalid({ group: GROUP, kind: "LocalSubjectAccessReview" }, "", errors);
  }
  const echoed = { ...review, metadata: { ...metadata, namespace } };
  return answer(authorize, "LocalSubjectAccessReview", echoed, spec, subjectOf(spec));
}

async function answer(
  authorize: AsyncAuthorizer,
  kind: string,
  review: Dict,
  spec: Dict,
  subject: UserIdentity,
): Promise<Reply> {
  const decision = await decideAsync(
    union(privilegedGroups, authorize),
    attributesOf(spec, subject),
  );
  const status: Dict = { allowed: decision.allowed };
  if (decision.denied) status["denied"] = true;
  if (decision.reason) status["reason"] = decision.reason;
  if (decision.evaluationError) status["evaluationError"] = decision.evaluationError;
  return {
    status: 201,
    body: {
      kind,
      apiVersion: API_VERSION,
      metadata: { ...dict(review["metadata"]), creationTimestamp: null },
      spec,
      status,
    },
  };
}

/** Exactly one of resourceAttributes and nonResourceAttributes. */
function attributeErrors(spec: Dict): FieldError[] {
  const res = asDict(spec["resourceAttributes"]);
  const nonRes = asDict(spec["nonResourceAttributes"]);
  if (res && nonRes) {
    return [
      invalid(
        "spec.nonResourceAttributes",
        nonRes,
        "cannot be specified in combination with resourceAttributes",
      ),
    ];
  }
  if (!res && !nonRes) {
    return [
      invalid(
        "spec.resourceAttributes",
        null,
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      ),
    ];
  }
  return [];
}

function subjectErrors(spec: Dict): FieldError[] {
  const groups = spec["groups"];
  if (spec["user"] || (Array.isArray(groups) && groups.length > 0)) return [];
  return [
    invalid("spec.user", spec["user"] ?? "", "at least one of user or group must be specified"),
  ];
}

/** ValidateLocalSubjectAccessReview: the review stays inside its namespace. */
function localErrors(spec: Dict, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const res = asDict(spec["resourceAttributes"]);
  const ns = res ? str(res["namespace"]) : "";
  if (res && ns !== namespace) {
    errors.push(invalid("spec.resourceAttributes.namespace", ns, "must match metadata.namespace"));
  }
  const nonRes = asDict(spec["nonResourceAttributes"]);
  if (nonRes) {
    errors.push(
      invalid("spec.nonResourceAttributes", nonRes, "disallowed on this kind of request"),
    );
  }
  return errors;
}

function subjectOf(spec: Dict): UserIdentity {
  const identity: UserIdentity = { user: str(spec["user"]), groups: strings(spec["groups"]) };
  if (str(spec["uid"])) identity.uid = str(spec["uid"]);
  const extra = asDict(spec["extra"]);
  if (extra) {
    identity.extra = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, strings(v)]));
  }
  return identity;
}

/** authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom. */
export function attributesOf(spec: Dict, subject: UserIdentity): AuthorizationAttributes {
  const res = dict(spec["resourceAttributes"]);
  const nonRes = asDict(spec["nonResourceAttributes"]);
  const attrs: AuthorizationAttributes = {
    user: subject.user,
    groups: subject.groups,
    verb: str((nonRes ?? res)["verb"]),
    group: str(res["group"]),
    version: str(res["version"]),
    resource: str(res["resource"]),
    subresource: str(res["subresource"]),
    name: str(res["name"]),
    namespace: str(res["namespace"]),
  };
  if (subject.uid) attrs.uid = subject.uid;
  if (subject.extra) attrs.extra = subject.extra;
  if (nonRes) attrs.path = str(nonRes["path"]);
  return attrs;
}

export function bodyOf(body: unknown): Dict {
  const review = asDict(body);
  if (!review) throw newBadRequest("the body of the request was not a JSON object");
  return review;
}

function asDict(value: unknown): Dict | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Dict)
    : null;
}

const dict = (value: unknown): Dict => asDict(value) ?? {};

const str = (value: unknown): string => (typeof value === "string" ? value : "");

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
