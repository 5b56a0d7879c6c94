// Which requests mint, borrow or widen credentials, and when a scoped key's role names one
// explicitly enough to allow it (docs/decisions.md OAK-22).

import assert from "node:assert/strict";
import fc from "fast-check";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  credentialClass,
  explicitlyAllows,
} from "../../../webhook/src/auth/credential-requests.js";
import type { RequestAttributes } from "../../../webhook/src/auth/policy-rule-match.js";
import { parseRolesFile } from "../../../webhook/src/auth/roles.js";
import { authorizeScope, type ScopeDeps } from "../../../webhook/src/auth/scope-authorizer.js";

const MGMT = "management.loft.sh";

function req(
  verb: string,
  group: string,
  resource: string,
  more: Partial<{ subresource: string; name: string; namespace: string }> = {},
): RequestAttributes {
  return {
    resourceAttributes: {
      verb,
      group,
      version: "v1",
      resource,
      subresource: more.subresource ?? "",
      name: more.name ?? "",
      namespace: more.namespace ?? "",
    },
  };
}

describe("credential requests", () => {
  it("classifies every way to another credential, and nothing else", () => {
    const cases: [RequestAttributes, string | undefined][] = [
      [req("impersonate", "", "users", { name: "alice" }), "impersonation"],
      [
        req("impersonate", "", "serviceaccounts", { namespace: "web", name: "sa" }),
        "impersonation",
      ],
      [
        req("impersonate", "authentication.k8s.io", "userextras", { subresource: "scopes" }),
        "impersonation",
      ],
      [req("impersonate", "authentication.k8s.io", "uids"), "impersonation"],
      [req("impersonate:user-info", "", "users"), "impersonation"],
      [req("impersonate-on:serviceaccount:list", "", "pods"), "impersonation"],
      [
        req("create", "", "serviceaccounts", { subresource: "token", namespace: "web" }),
        "service account tokens",
      ],
      [req("create", "certificates.k8s.io", "certificatesigningrequests"), "certificates"],
      [
        req("update", "certificates.k8s.io", "certificatesigningrequests", {
          subresource: "approval",
        }),
        "certificates",
      ],
      [
        req("approve", "certificates.k8s.io", "signers", {
          name: "kubernetes.io/kube-apiserver-client",
        }),
        "certificates",
      ],
      [req("sign", "certificates.k8s.io", "signers"), "certificates"],
      [
        req("bind", "rbac.authorization.k8s.io", "clusterroles", { name: "cluster-admin" }),
        "RBAC escalation",
      ],
      [
        req("escalate", "rbac.authorization.k8s.io", "roles", { namespace: "web" }),
        "RBAC escalation",
      ],
      [req("create", MGMT, "ownedaccesskeys"), "access keys"],
      [req("update", MGMT, "ownedaccesskeys", { name: "other" }), "access keys"],
      [
        req("patch", MGMT, "ownedaccesskeys", { name: "self", subresource: "status" }),
        "access keys",
      ],
      // Not credentials: reads, the key's own updates, ordinary writes.
      [req("update", MGMT, "ownedaccesskeys", { name: "self" }), undefined],
      [req("get", MGMT, "ownedaccesskeys", { name: "other" }), undefined],
      [req("delete", MGMT, "ownedaccesskeys", { name: "other" }), undefined],
      [req("get", "", "serviceaccounts", { subresource: "token" }), undefined],
      [req("list", "certificates.k8s.io", "certificatesigningrequests"), undefined],
      [req("create", "rbac.authorization.k8s.io", "rolebindings"), undefined],
      [req("get", "", "secrets", { namespace: "web" }), undefined],
      [{ nonResourceAttributes: { verb: "get", path: "/healthz" } }, undefined],
    ];
    for (const [r, want] of cases) {
      assert.equal(credentialClass(r, MGMT, "self"), want, JSON.stringify(r));
    }
  });

  it("a rule names a request explicitly only with its verb, group and resource as they are", () => {
    const token = req("create", "", "serviceaccounts", { subresource: "token", name: "sa" });
    const rule = { verbs: ["create"], apiGroups: [""], resources: ["serviceaccounts/token"] };
    assert.ok(explicitlyAllows(rule, token));
    assert.ok(explicitlyAllows({ ...rule, resourceNames: ["sa"] }, token));
    assert.ok(!explicitlyAllows({ ...rule, resourceNames: ["other"] }, token));
    for (const wild of [
      { ...rule, verbs: ["*"] },
      { ...rule, apiGroups: ["*"] },
      { ...rule, resources: ["*"] },
      { ...rule, resources: ["*/token"] },
      { ...rule, resources: ["serviceaccounts"] },
    ]) {
      assert.ok(!explicitlyAllows(wild, token), JSON.stringify(wild));
    }
  });

  it("property: a scoped key whose roles use wildcards never gets past a credential request", () => {
    const roles = parseRolesFile(
      `roles:
  - name: all
    rules:
      - apiGroups: ["*"]
        resources: ["*", "*/token", "*/approval"]
        verbs: ["*"]
`,
      "loft.sh",
    );
    const deps: ScopeDeps = {
      groupDomain: "loft.sh",
      clusterName: "east",
      projectLabel: "loft.sh/project",
      virtualClusterLabel: "loft.sh/vcluster-instance-name",
      roles,
      namespaces: { synced: () => true, labels: () => ({ "loft.sh/project": "web" }) },
    };
    const scopes = fc.constantFrom<Record<string, unknown>>(
      { roles: [{ role: "all" }] },
      { clusters: [{ cluster: "*" }] },
      { projects: [{ project: "*" }], clusters: [{ cluster: "east" }] },
      { rules: [{ verbs: ["*"], resources: [{ group: "*" }] }] },
    );
    const requests = fc.record({
      verb: fc.constantFrom(
        "impersonate",
        "impersonate:user-info",
        "create",
        "update",
        "patch",
        "approve",
        "sign",
        "bind",
        "escalate",
        "get",
      ),
      group: fc.constantFrom(
        "",
        "authentication.k8s.io",
        "certificates.k8s.io",
        "rbac.authorization.k8s.io",
        MGMT,
        "apps",
      ),
      resource: fc.constantFrom(
        "users",
        "serviceaccounts",
        "certificatesigningrequests",
        "signers",
        "roles",
        "clusterroles",
        "ownedaccesskeys",
        "pods",
      ),
      subresource: fc.constantFrom("", "token", "approval", "status"),
      name: fc.constantFrom("", "k", "other"),
      namespace: fc.constantFrom("", "web"),
    });
    fc.assert(
      fc.property(scopes, requests, (scope, r) => {
        const key: OwnedAccessKey = { metadata: { name: "k" }, spec: { user: "u", scope } };
        const request = req(r.verb, r.group, r.resource, r);
        const decision = authorizeScope(key, request, deps);
        if (credentialClass(request, MGMT, "k") !== undefined) {
          assert.equal(decision.denied, true, JSON.stringify(r));
          assert.match((decision as { reason: string }).reason, /mints or borrows credentials/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
