// RBAC decisions as kube's RBAC authorizer makes them, and the union/forbidden wiring around it.

import assert from "node:assert/strict";
import { asKubeError } from "../../../webhook/src/api/status.js";
import {
  authorizeRequest,
  union,
  type AuthorizationAttributes,
  type AuthorizerDecision,
} from "./authorizer.js";
import { RBAC_V1, rbacAuthorizer, storeSource, type PolicyRule, type Subject } from "./rbac.js";
import { bootstrapRbac } from "./rbac-bootstrap.js";
import { ResourceRegistry, resourceType } from "./resources.js";
import { ObjectStore, type KubeObject } from "./store.js";

const RBAC_GROUP = "rbac.authorization.k8s.io";

function rbacWorld() {
  const registry = new ResourceRegistry();
  registry.add(resourceType(RBAC_V1, "ClusterRole", "clusterroles", false));
  registry.add(resourceType(RBAC_V1, "ClusterRoleBinding", "clusterrolebindings", false));
  registry.add(resourceType(RBAC_V1, "Role", "roles", true));
  registry.add(resourceType(RBAC_V1, "RoleBinding", "rolebindings", true));
  const store = new ObjectStore();
  const put = (obj: KubeObject) => store.put(registry.lookup(RBAC_V1, obj.kind!)!, obj);
  const authorize = rbacAuthorizer(storeSource(store, registry));
  return { registry, store, put, authorize };
}

const role = (name: string, rules: PolicyRule[], namespace?: string): KubeObject => ({
  apiVersion: RBAC_V1,
  kind: namespace ? "Role" : "ClusterRole",
  metadata: namespace ? { name, namespace } : { name },
  rules,
});

function binding(
  name: string,
  ref: { kind: "Role" | "ClusterRole"; name: string },
  subjects: Subject[],
  namespace?: string,
): KubeObject {
  return {
    apiVersion: RBAC_V1,
    kind: namespace ? "RoleBinding" : "ClusterRoleBinding",
    metadata: namespace ? { name, namespace } : { name },
    roleRef: { apiGroup: RBAC_GROUP, ...ref },
    subjects,
  };
}

const user = (name: string): Subject => ({ kind: "User", apiGroup: RBAC_GROUP, name });

function attrs(over: Partial<AuthorizationAttributes>): AuthorizationAttributes {
  return {
    user: "alice",
    groups: ["system:authenticated"],
    verb: "get",
    group: "",
    resource: "pods",
    subresource: "",
    name: "",
    namespace: "default",
    ...over,
  };
}

describe("apiserver RBAC authorizer", () => {
  it("grants through a ClusterRoleBinding everywhere, with kube's reason", () => {
    const w = rbacWorld();
    w.put(role("pod-reader", [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]));
    w.put(binding("read-pods", { kind: "ClusterRole", name: "pod-reader" }, [user("alice")]));
    assert.deepEqual(w.authorize(attrs({ namespace: "x" })), {
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "read-pods" of ClusterRole "pod-reader" to User "alice"',
    });
    assert.equal(w.authorize(attrs({ namespace: "", verb: "list" })).allowed, true);
    assert.deepEqual(w.authorize(attrs({ verb: "delete" })), { allowed: false, reason: "" });
    assert.equal(w.authorize(attrs({ user: "bob" })).allowed, false);
  });

  it("grants through a RoleBinding only in its namespace, to a Role or a ClusterRole", () => {
    const w = rbacWorld();
    w.put(role("cm-edit", [{ apiGroups: [""], resources: ["configmaps"], verbs: ["*"] }], "team"));
    w.put(role("secret-read", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]));
    w.put(binding("rb1", { kind: "Role", name: "cm-edit" }, [user("alice")], "team"));
    w.put(binding("rb2", { kind: "ClusterRole", name: "secret-read" }, [user("alice")], "team"));
    const cm = attrs({ resource: "configmaps", verb: "update", namespace: "team" });
    assert.deepEqual(w.authorize(cm), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb1/team" of Role "cm-edit" to User "alice"',
    });
    assert.equal(w.authorize({ ...cm, namespace: "other" }).allowed, false);
    assert.equal(w.authorize({ ...cm, namespace: "" }).allowed, false, "not cluster-wide");
    const secret = attrs({ resource: "secrets", namespace: "team" });
    assert.match(w.authorize(secret).reason ?? "", /of ClusterRole "secret-read"/);
    assert.equal(w.authorize({ ...secret, namespace: "default" }).allowed, false);
  });

  it("matches Group subjects and ServiceAccounts (namespace defaulted to the binding's)", () => {
    const w = rbacWorld();
    w.put(role("any-pods", [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]));
    w.put(
      binding("g", { kind: "ClusterRole", name: "any-pods" }, [
        { kind: "Group", apiGroup: RBAC_GROUP, name: "devs" },
      ]),
    );
    w.put(
      binding(
        "sa",
        { kind: "ClusterRole", name: "any-pods" },
        [{ kind: "ServiceAccount", name: "bot" }],
        "ci",
      ),
    );
    w.put(
      binding("sa2", { kind: "ClusterRole", name: "any-pods" }, [
        { kind: "ServiceAccount", name: "robot", namespace: "ops" },
      ]),
    );
    assert.equal(w.authorize(attrs({ user: "x", groups: ["devs"] })).allowed, true);
    const bot = attrs({ user: "system:serviceaccount:ci:bot", namespace: "ci" });
    assert.deepEqual(w.authorize(bot), {
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "sa/ci" of ClusterRole "any-pods" to ServiceAccount "bot/ci"',
    });
    assert.equal(
      w.authorize(attrs({ user: "system:serviceaccount:other:bot", namespace: "ci" })).allowed,
      false,
    );
    const robot = attrs({ user: "system:serviceaccount:ops:robot" });
    assert.match(w.authorize(robot).reason ?? "", /to ServiceAccount "robot\/ops"$/);
    // A ClusterRoleBinding ServiceAccount subject without a namespace matches nobody.
    w.put(
      binding("sa3", { kind: "ClusterRole", name: "any-pods" }, [
        { kind: "ServiceAccount", name: "lost" },
      ]),
    );
    assert.equal(w.authorize(attrs({ user: "system:serviceaccount:default:lost" })).allowed, false);
  });

  it("matches verbs, groups, resources, subresources and resource names as kube does", () => {
    const w = rbacWorld();
    w.put(
      role("mixed", [
        { apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["update"] },
        { apiGroups: ["*"], resources: ["*/status"], verbs: ["get"] },
        { apiGroups: [""], resources: ["secrets"], resourceNames: ["one"], verbs: ["get", "list"] },
        { apiGroups: ["management.loft.sh"], resources: ["*"], verbs: ["*"] },
      ]),
    );
    w.put(binding("b", { kind: "ClusterRole", name: "mixed" }, [user("alice")]));
    const ok = (a: Partial<AuthorizationAttributes>) => w.authorize(attrs(a)).allowed;
    assert.equal(
      ok({ group: "apps", resource: "deployments", subresource: "scale", verb: "update" }),
      true,
    );
    assert.equal(ok({ group: "apps", resource: "deployments", verb: "update" }), false);
    assert.equal(
      ok({ group: "apps", resource: "replicasets", subresource: "scale", verb: "update" }),
      false,
    );
    assert.equal(ok({ group: "batch", resource: "jobs", subresource: "status" }), true);
    assert.equal(ok({ group: "batch", resource: "jobs" }), false, "*/status is not the object");
    assert.equal(ok({ resource: "secrets", name: "one" }), true);
    assert.equal(ok({ resource: "secrets", name: "two" }), false);
    assert.equal(ok({ resource: "secrets", verb: "list" }), false, "a list names nothing");
    assert.equal(
      ok({
        group: "management.loft.sh",
        resource: "ownedaccesskeys",
        verb: "create",
        namespace: "",
      }),
      true,
    );
    assert.equal(
      ok({
        group: "management.loft.sh",
        resource: "ownedaccesskeys",
        subresource: "status",
        verb: "patch",
      }),
      true,
    );
  });

  it("matches non-resource URLs exactly, by trailing * prefix, or *", () => {
    const w = rbacWorld();
    w.put(role("urls", [{ nonResourceURLs: ["/healthz", "/logs/*"], verbs: ["get"] }]));
    w.put(binding("b", { kind: "ClusterRole", name: "urls" }, [user("alice")]));
    const path = (p: string, verb = "get") =>
      w.authorize(attrs({ path: p, verb, resource: "", namespace: "" })).allowed;
    assert.equal(path("/healthz"), true);
    assert.equal(path("/healthz/ping"), false);
    assert.equal(path("/logs/kube.log"), true);
    assert.equal(path("/logs"), false);
    assert.equal(path("/healthz", "post"), false);
    // A resource request never matches a URL rule, nor a URL request a resource rule.
    assert.equal(w.authorize(attrs({ resource: "pods" })).allowed, false);
  });

  it("gives the missing roles behind matching bindings as the reason", () => {
    const w = rbacWorld();
    w.put(binding("b1", { kind: "ClusterRole", name: "gone" }, [user("alice")]));
    assert.deepEqual(w.authorize(attrs({})), {
      allowed: false,
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    });
    w.put(binding("b2", { kind: "Role", name: "also-gone" }, [user("alice")], "default"));
    assert.equal(
      w.authorize(attrs({})).reason,
      'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "also-gone" not found]',
    );
    assert.equal(w.authorize(attrs({ user: "bob" })).reason, "", "bindings to others are not read");
  });

  it("aggregates ClusterRoles by label selector", () => {
    const w = rbacWorld();
    w.put({
      ...role("monitoring", []),
      aggregationRule: {
        clusterRoleSelectors: [
          { matchLabels: { "rbac.example.com/aggregate-to-monitoring": "true" } },
        ],
      },
    });
    w.put({
      ...role("monitoring-endpoints", [
        { apiGroups: [""], resources: ["endpoints"], verbs: ["get"] },
      ]),
      metadata: {
        name: "monitoring-endpoints",
        labels: { "rbac.example.com/aggregate-to-monitoring": "true" },
      },
    });
    w.put(role("unlabelled", [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]));
    w.put(binding("m", { kind: "ClusterRole", name: "monitoring" }, [user("alice")]));
    assert.equal(w.authorize(attrs({ resource: "endpoints" })).allowed, true);
    assert.equal(w.authorize(attrs({ resource: "pods" })).allowed, false);
  });

  it("lists the rules of a user in a namespace (SelfSubjectRulesReview)", () => {
    const w = rbacWorld();
    for (const obj of bootstrapRbac()) w.put(obj);
    w.put(
      role(
        "r",
        [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["c"], verbs: ["get"] }],
        "team",
      ),
    );
    w.put(binding("rb", { kind: "Role", name: "r" }, [user("alice")], "team"));
    w.put(binding("broken", { kind: "Role", name: "nope" }, [user("alice")], "team"));
    const review = w.authorize.rulesFor(
      { user: "alice", groups: ["system:authenticated"] },
      "team",
    );
    assert.deepEqual(review.resourceRules, [
      {
        verbs: ["create"],
        apiGroups: ["authorization.k8s.io"],
        resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
      },
      {
        verbs: ["create"],
        apiGroups: ["authentication.k8s.io"],
        resources: ["selfsubjectreviews"],
      },
      { verbs: ["get"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["c"] },
    ]);
    assert.ok(review.nonResourceRules.some((r) => r.nonResourceURLs?.includes("/version")));
    assert.equal(review.incomplete, false);
    assert.equal(review.evaluationError, 'role.rbac.authorization.k8s.io "nope" not found');
    const other = w.authorize.rulesFor(
      { user: "alice", groups: ["system:authenticated"] },
      "default",
    );
    assert.equal(other.resourceRules.length, 2);
  });

  it("has no opinion while the RBAC types are not registered", () => {
    const registry = new ResourceRegistry();
    const authorize = rbacAuthorizer(storeSource(new ObjectStore(), registry));
    assert.deepEqual(authorize(attrs({})), { allowed: false, reason: "" });
  });
});

describe("apiserver authorizer chain", () => {
  const allow: AuthorizerDecision = { allowed: true, reason: "yes" };
  const deny: AuthorizerDecision = { allowed: false, denied: true, reason: "no way" };
  const none = (reason: string, evaluationError?: string) => (): AuthorizerDecision =>
    evaluationError ? { allowed: false, reason, evaluationError } : { allowed: false, reason };

  it("stops at the first Allow or Deny; otherwise joins reasons and aggregates errors", async () => {
    let asked = false;
    const later = () => {
      asked = true;
      return true;
    };
    assert.deepEqual(await union(() => deny, later)(attrs({})), deny);
    assert.deepEqual(await union(none("a"), () => allow, later)(attrs({})), allow);
    assert.equal(asked, false);
    assert.deepEqual(await union(none("a", "e1"), none("b", "e2"))(attrs({})), {
      allowed: false,
      reason: "a\nb",
      evaluationError: "[e1, e2]",
    });
    const throwing = () => Promise.reject(new Error("webhook down"));
    assert.deepEqual(await union(throwing, none("rbac"))(attrs({})), {
      allowed: false,
      reason: "rbac",
      evaluationError: "webhook down",
    });
  });

  it("answers a denied request 403 with kube's text and the authorizer's reason", async () => {
    const w = rbacWorld();
    w.put(binding("b", { kind: "ClusterRole", name: "gone" }, [user("alice")]));
    const alice = { user: "alice", groups: ["system:authenticated"] };
    const request = {
      verb: "list",
      group: "",
      resource: "pods",
      subresource: "",
      name: "",
      namespace: "default",
    };
    await assert.rejects(authorizeRequest(w.authorize, alice, request), (err: unknown) => {
      const status = asKubeError(err).toStatus();
      assert.equal(status.code, 403);
      assert.equal(status.reason, "Forbidden");
      assert.equal(
        status.message,
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
      );
      return true;
    });
    await assert.rejects(
      authorizeRequest(() => false, alice, {
        ...request,
        verb: "get",
        resource: "",
        path: "/healthz",
      }),
      (err: unknown) => {
        assert.equal(
          asKubeError(err).message,
          'forbidden: User "alice" cannot get path "/healthz"',
        );
        return true;
      },
    );
  });

  it("lets system:masters through whatever the authorizers say", async () => {
    const admin = { user: "root", groups: ["system:masters"] };
    const request = {
      verb: "delete",
      group: "",
      resource: "nodes",
      subresource: "",
      name: "n",
      namespace: "",
    };
    await authorizeRequest(() => ({ allowed: false, denied: true }), admin, request);
  });
});
