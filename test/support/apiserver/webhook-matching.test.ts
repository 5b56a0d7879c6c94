// Which webhooks a request goes to: rules, scope, selectors and matchPolicy, as ShouldCallHook.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import type { AdmissionAttributes } from "./admission-types.js";
import { webhookFromConfig } from "./admission-webhooks.js";
import { resourceType, type ResourceType } from "./resources.js";
import type { KubeObject } from "./store.js";
import {
  isExemptFromWebhooks,
  ruleMatches,
  shouldCallHook,
  type MatchEnvironment,
  type Webhook,
  type WebhookInvocation,
} from "./webhook-matching.js";

const pods = resourceType("v1", "Pod", "pods", true, ["status", "eviction:Eviction"]);
const namespaces = resourceType("v1", "Namespace", "namespaces", false);
const keysV1 = resourceType("management.loft.sh/v1", "OwnedAccessKey", "ownedaccesskeys", false);
const keysV2 = resourceType("management.loft.sh/v2", "OwnedAccessKey", "ownedaccesskeys", false);

const obj = (name: string, labels?: Record<string, string>, ns?: string): KubeObject => ({
  metadata: { name, ...(ns ? { namespace: ns } : {}), ...(labels ? { labels } : {}) },
});

function attrs(type: ResourceType, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    type,
    subresource: "",
    operation: "CREATE",
    namespace: type.namespaced ? "default" : "",
    name: "x",
    object: obj("x"),
    oldObject: null,
    user: { user: "alice", groups: [] },
    dryRun: false,
    options: null,
    ...over,
  };
}

function hook(extra: Record<string, unknown>): Webhook {
  return webhookFromConfig("cfg", { name: "hook.example.com", ...extra }, 0);
}

const allRules = [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"] }];

function env(nsObjects: KubeObject[] = [], types: ResourceType[] = []): MatchEnvironment {
  return {
    namespace: (name) => nsObjects.find((n) => n.metadata.name === name),
    versionsOf: (group, resource) =>
      types.filter((t) => t.group === group && t.resource === resource),
  };
}

const invocation = (r: ReturnType<typeof shouldCallHook>): WebhookInvocation => {
  assert.ok(r && !(r instanceof KubeError), `expected an invocation, got ${String(r)}`);
  return r;
};

describe("webhook matching", () => {
  describe("rules", () => {
    const target = (resource: string, subresource = "", namespace = "default") => ({
      resource: { group: "", version: "v1", resource },
      subresource,
      namespace,
      operation: "UPDATE" as const,
    });
    const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({
      operations: ["UPDATE"],
      apiGroups: [""],
      apiVersions: ["v1"],
      resources,
      ...extra,
    });

    it("matches operations exactly or by *", () => {
      assert.equal(ruleMatches(rule(["pods"]), target("pods")), true);
      assert.equal(ruleMatches(rule(["pods"], { operations: ["CREATE"] }), target("pods")), false);
      assert.equal(ruleMatches(rule(["pods"], { operations: ["*"] }), target("pods")), true);
    });

    it("matches groups and versions exactly or by *", () => {
      assert.equal(ruleMatches(rule(["pods"], { apiGroups: ["apps"] }), target("pods")), false);
      assert.equal(ruleMatches(rule(["pods"], { apiGroups: ["*"] }), target("pods")), true);
      assert.equal(ruleMatches(rule(["pods"], { apiVersions: ["v2"] }), target("pods")), false);
      assert.equal(ruleMatches(rule(["pods"], { apiVersions: ["*"] }), target("pods")), true);
    });

    it("distinguishes resources from subresources", () => {
      assert.equal(ruleMatches(rule(["pods"]), target("pods", "status")), false);
      assert.equal(ruleMatches(rule(["pods/status"]), target("pods", "status")), true);
      assert.equal(ruleMatches(rule(["pods/status"]), target("pods")), false);
      assert.equal(ruleMatches(rule(["pods/*"]), target("pods", "status")), true);
      assert.equal(ruleMatches(rule(["pods/*"]), target("pods")), true);
      assert.equal(ruleMatches(rule(["*"]), target("pods")), true);
      assert.equal(ruleMatches(rule(["*"]), target("pods", "status")), false);
      assert.equal(ruleMatches(rule(["*/status"]), target("services", "status")), true);
      assert.equal(ruleMatches(rule(["*/*"]), target("pods", "eviction")), true);
      assert.equal(ruleMatches(rule(["services"]), target("pods")), false);
    });

    it("honours scope; Namespace objects are cluster-scoped", () => {
      const namespaced = rule(["*"], { scope: "Namespaced" });
      const cluster = rule(["*"], { scope: "Cluster" });
      assert.equal(ruleMatches(namespaced, target("pods")), true);
      assert.equal(ruleMatches(namespaced, target("nodes", "", "")), false);
      assert.equal(ruleMatches(cluster, target("nodes", "", "")), true);
      assert.equal(ruleMatches(cluster, target("pods")), false);
      // kube sets the namespace of a Namespace request to its own name.
      assert.equal(ruleMatches(cluster, target("namespaces", "", "team-a")), true);
      assert.equal(ruleMatches(namespaced, target("namespaces", "", "team-a")), false);
      assert.equal(ruleMatches(rule(["*"], { scope: "*" }), target("nodes", "", "")), true);
      assert.equal(ruleMatches(rule(["*"], { scope: "Bogus" }), target("pods")), false);
    });
  });

  describe("namespaceSelector", () => {
    const selector = { matchLabels: { webhooks: "on" } };
    const labelled = [obj("on-ns", { webhooks: "on" }), obj("off-ns", { webhooks: "off" })];

    it("is judged by the labels of the stored Namespace", () => {
      const h = hook({ rules: allRules, namespaceSelector: selector });
      const e = env(labelled);
      assert.ok(shouldCallHook(h, attrs(pods, { namespace: "on-ns" }), e));
      assert.equal(shouldCallHook(h, attrs(pods, { namespace: "off-ns" }), e), null);
    });

    it("always matches cluster-scoped objects other than Namespaces", () => {
      const h = hook({ rules: allRules, namespaceSelector: selector });
      assert.ok(shouldCallHook(h, attrs(keysV1), env()));
    });

    it("judges a Namespace being created or updated by its own labels", () => {
      const h = hook({ rules: allRules, namespaceSelector: selector });
      const create = attrs(namespaces, {
        name: "new-ns",
        namespace: "new-ns",
        object: obj("new-ns", { webhooks: "on" }),
      });
      assert.ok(shouldCallHook(h, create, env()));
      const unlabelled = { ...create, object: obj("new-ns") };
      assert.equal(shouldCallHook(h, unlabelled, env()), null);
      // Also when the caller left attrs.namespace empty for the Namespace itself.
      assert.ok(shouldCallHook(h, { ...create, namespace: "" }, env()));
    });

    it("judges a Namespace being deleted by the stored one", () => {
      const h = hook({ rules: allRules, namespaceSelector: selector });
      const del = attrs(namespaces, {
        operation: "DELETE",
        name: "on-ns",
        namespace: "on-ns",
        object: null,
        oldObject: obj("on-ns"),
      });
      assert.ok(shouldCallHook(h, del, env(labelled)));
      assert.equal(
        shouldCallHook(h, { ...del, name: "off-ns", namespace: "off-ns" }, env(labelled)),
        null,
      );
    });

    it("answers 404 for a missing namespace, but only when the rules match", () => {
      const h = hook({ rules: allRules, namespaceSelector: selector });
      const r = shouldCallHook(h, attrs(pods, { namespace: "ghost" }), env());
      assert.ok(r instanceof KubeError);
      assert.equal(r.code, 404);
      assert.equal(r.reason, "NotFound");
      assert.equal(r.message, 'namespaces "ghost" not found');
      const other = hook({
        rules: [{ ...allRules[0], resources: ["services"] }],
        namespaceSelector: selector,
      });
      assert.equal(shouldCallHook(other, attrs(pods, { namespace: "ghost" }), env()), null);
    });

    it("needs no Namespace when the selector is empty", () => {
      assert.ok(
        shouldCallHook(hook({ rules: allRules }), attrs(pods, { namespace: "ghost" }), env()),
      );
    });

    it("turns an invalid selector into a 500 when the rules match", () => {
      const h = hook({
        rules: allRules,
        namespaceSelector: { matchExpressions: [{ key: "a", operator: "Nope" }] },
      });
      const r = shouldCallHook(h, attrs(pods), env(labelled));
      assert.ok(r instanceof KubeError);
      assert.equal(r.code, 500);
      assert.equal(
        r.message,
        'Internal error occurred: "Nope" is not a valid label selector operator',
      );
    });
  });

  describe("objectSelector", () => {
    const h = hook({ rules: allRules, objectSelector: { matchLabels: { managed: "yes" } } });

    it("matches the new object's labels", () => {
      assert.ok(shouldCallHook(h, attrs(keysV1, { object: obj("x", { managed: "yes" }) }), env()));
      assert.equal(
        shouldCallHook(h, attrs(keysV1, { object: obj("x", { managed: "no" }) }), env()),
        null,
      );
    });

    it("matches the old object's labels too (labels being removed, DELETE)", () => {
      const update = attrs(keysV1, {
        operation: "UPDATE",
        object: obj("x"),
        oldObject: obj("x", { managed: "yes" }),
      });
      assert.ok(shouldCallHook(h, update, env()));
      const del = attrs(keysV1, {
        operation: "DELETE",
        object: null,
        oldObject: obj("x", { managed: "yes" }),
      });
      assert.ok(shouldCallHook(h, del, env()));
      assert.equal(shouldCallHook(h, { ...del, oldObject: obj("x") }, env()), null);
    });
  });

  describe("matchPolicy", () => {
    const v2only = [
      {
        operations: ["CREATE"],
        apiGroups: ["management.loft.sh"],
        apiVersions: ["v2"],
        resources: ["ownedaccesskeys"],
      },
    ];

    it("Exact ignores other versions", () => {
      const h = hook({ rules: v2only, matchPolicy: "Exact" });
      assert.equal(shouldCallHook(h, attrs(keysV1), env([], [keysV1, keysV2])), null);
    });

    it("Equivalent (the default) sends the request as the matching version", () => {
      const h = hook({ rules: v2only });
      assert.equal(h.matchPolicy, "Equivalent");
      const inv = invocation(shouldCallHook(h, attrs(keysV1), env([], [keysV1, keysV2])));
      assert.deepEqual(inv.resource, {
        group: "management.loft.sh",
        version: "v2",
        resource: "ownedaccesskeys",
      });
      assert.deepEqual(inv.kind, {
        group: "management.loft.sh",
        version: "v2",
        kind: "OwnedAccessKey",
      });
    });

    it("prefers the requested version when a rule matches it", () => {
      const h = hook({ rules: [...v2only, { ...v2only[0], apiVersions: ["v1"] }] });
      const inv = invocation(shouldCallHook(h, attrs(keysV1), env([], [keysV1, keysV2])));
      assert.equal(inv.resource.version, "v1");
    });

    it("finds no equivalent in another resource", () => {
      const h = hook({ rules: [{ ...v2only[0], resources: ["users"] }] });
      assert.equal(shouldCallHook(h, attrs(keysV1), env([], [keysV1, keysV2])), null);
    });
  });

  it("gives subresources their own kind", () => {
    const inv = invocation(
      shouldCallHook(hook({ rules: allRules }), attrs(pods, { subresource: "eviction" }), env()),
    );
    assert.equal(inv.subresource, "eviction");
    assert.equal(inv.kind.kind, "Eviction");
  });

  it("exempts webhook configurations and admission policies", () => {
    const cfg = resourceType(
      "admissionregistration.k8s.io/v1",
      "ValidatingWebhookConfiguration",
      "validatingwebhookconfigurations",
      false,
    );
    assert.equal(isExemptFromWebhooks(cfg), true);
    assert.equal(isExemptFromWebhooks(pods), false);
  });

  it("applies the v1 defaults to a webhook", () => {
    const h = hook({ rules: [{ operations: ["CREATE"] }] });
    assert.equal(h.failurePolicy, "Fail");
    assert.equal(h.matchPolicy, "Equivalent");
    assert.equal(h.timeoutSeconds, 10);
    assert.equal(h.reinvocationPolicy, "Never");
    assert.deepEqual(h.namespaceSelector, {});
    assert.deepEqual(h.objectSelector, {});
    assert.equal(h.rules[0]!.scope, "*");
    assert.equal(h.uid, "cfg/hook.example.com/0");
  });
});
