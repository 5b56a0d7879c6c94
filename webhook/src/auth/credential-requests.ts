// Requests that mint, borrow or widen credentials (docs/decisions.md OAK-22). A key's scope says
// where its owner may act; a request that yields another identity's credential (impersonation, a
// service account token, a signed certificate, an RBAC binding past one's own rights, another
// access key) would carry the holder out of that scope for good. A scoped key is denied them
// unless one of its roles names the request explicitly: the exact verb, API group and resource
// (with its subresource), never through a `*`.

import type { PolicyRule, RequestAttributes } from "./policy-rule-match.js";

/** Why a request counts as a credential request, for the denial's reason. */
export type CredentialClass =
  "impersonation" | "service account tokens" | "certificates" | "RBAC escalation" | "access keys";

const WRITES = new Set(["create", "update", "patch"]);
const CERTIFICATE_RESOURCES = new Set([
  "certificatesigningrequests",
  "certificatesigningrequests/approval",
  "certificatesigningrequests/status",
  "signers",
  "podcertificaterequests",
  "clustertrustbundles",
]);
const CERTIFICATE_VERBS = new Set([...WRITES, "approve", "sign", "attest"]);
const RBAC_ROLES = new Set(["roles", "clusterroles"]);

/**
 * The class of credential `request` asks for, or undefined. `managementGroup` is
 * management.<group-domain>; `ownKey` the name of the key making the request, which may update
 * itself (a rotation) but no other key.
 */
export function credentialClass(
  request: RequestAttributes,
  managementGroup: string,
  ownKey: string,
): CredentialClass | undefined {
  const a = request.resourceAttributes;
  if (!a) return undefined;
  // Every impersonation verb, present and future: `impersonate` and the constrained
  // impersonation verbs (`impersonate:<mode>`, `impersonate-on:<mode>:<verb>`).
  if (a.verb.startsWith("impersonate")) return "impersonation";
  const resource = a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`;
  if (a.group === "" && resource === "serviceaccounts/token" && a.verb === "create") {
    return "service account tokens";
  }
  if (
    a.group === "certificates.k8s.io" &&
    CERTIFICATE_RESOURCES.has(resource) &&
    CERTIFICATE_VERBS.has(a.verb)
  ) {
    return "certificates";
  }
  if (
    a.group === "rbac.authorization.k8s.io" &&
    RBAC_ROLES.has(a.resource) &&
    (a.verb === "bind" || a.verb === "escalate")
  ) {
    return "RBAC escalation";
  }
  if (a.group === managementGroup && a.resource === "ownedaccesskeys" && WRITES.has(a.verb)) {
    const self = a.verb !== "create" && a.subresource === "" && a.name !== "" && a.name === ownKey;
    return self ? undefined : "access keys";
  }
  return undefined;
}

/**
 * Whether `rule` names `request` explicitly: the verb, the API group and the resource (with its
 * subresource) each listed as they are, no `*` doing the work, and resourceNames, when set,
 * holding the request's name.
 */
export function explicitlyAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  const a = request.resourceAttributes;
  if (!a) return false;
  const resource = a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`;
  const names = rule.resourceNames ?? [];
  return (
    rule.verbs.includes(a.verb) &&
    (rule.apiGroups ?? []).includes(a.group) &&
    (rule.resources ?? []).includes(resource) &&
    (names.length === 0 || names.includes(a.name))
  );
}
