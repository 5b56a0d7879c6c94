// POST /apis/authorization.k8s.io/v1/subjectaccessreviews: validated like kube's
// ValidateSubjectAccessReview, answered by the authorizer hook.

import { invalid, type FieldError } from "../../../webhook/src/api/field-errors.js";
import { newBadRequest, newInvalid } from "../../../webhook/src/api/status.js";
import { decide, type AuthorizationAttributes, type Authorizer } from "./authorizer.js";
import type { Reply } from "./objects.js";

const GK = { group: "authorization.k8s.io", kind: "SubjectAccessReview" };

export function handleSubjectAccessReview(authorize: Authorizer, body: unknown): Reply {
  const review = asObject(body);
  if (!review) throw newBadRequest("the body of the request was not a JSON object");
  const spec = asObject(review["spec"]) ?? {};
  const errors = validateSpec(spec);
  if (errors.length > 0) throw newInvalid(GK, "", errors);
  const attrs = attributesOf(spec);
  const decision = decide(authorize, attrs);
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.denied) status["denied"] = true;
  if (decision.reason) status["reason"] = decision.reason;
  if (decision.evaluationError) status["evaluationError"] = decision.evaluationError;
  return {
    status: 201,
    body: {
      kind: "SubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec,
      status,
    },
  };
}

function validateSpec(spec: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const hasResource = asObject(spec["resourceAttributes"]) !== null;
  const hasNonResource = asObject(spec["nonResourceAttributes"]) !== null;
  if (hasResource === hasNonResource) {
    errors.push(
      invalid(
        "spec.resourceAttributes",
        spec["resourceAttributes"] ?? null,
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      ),
    );
  }
  const groups = spec["groups"];
  if (!spec["user"] && !(Array.isArray(groups) && groups.length > 0)) {
    errors.push(
      invalid("spec.user", spec["user"] ?? "", "at least one of user or group must be specified"),
    );
  }
  return errors;
}

function attributesOf(spec: Record<string, unknown>): AuthorizationAttributes {
  const res = asObject(spec["resourceAttributes"]) ?? {};
  const nonRes = asObject(spec["nonResourceAttributes"]);
  const attrs: AuthorizationAttributes = {
    user: str(spec["user"]),
    groups: Array.isArray(spec["groups"])
      ? spec["groups"].filter((g) => typeof g === "string")
      : [],
    verb: str((nonRes ?? res)["verb"]),
    group: str(res["group"]),
    version: str(res["version"]),
    resource: str(res["resource"]),
    subresource: str(res["subresource"]),
    name: str(res["name"]),
    namespace: str(res["namespace"]),
  };
  if (nonRes) attrs.path = str(nonRes["path"]);
  return attrs;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");
