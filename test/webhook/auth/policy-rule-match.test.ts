import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  NOT_LOADED,
  nonResourceURLMatches,
  policyRuleMatches,
  policyRulesAllow,
  requestNamespace,
  scopeRuleMatches,
  type Labels,
  type PolicyRule,
  type RequestAttributes,
  type ResourceAttributes,
  type TargetContext,
} from "../../../webhook/src/auth/policy-rule-match.js";

const res = (verb: string, more: Partial<ResourceAttributes> = {}): RequestAttributes => ({
  resourceAttributes: {
    namespace: "",
    verb,
    group: "",
    version: "v1",
    resource: "",
    subresource: "",
    name: "",
    ...more,
  },
});
const url = (verb: string, path: string): RequestAttributes => ({
  nonResourceAttributes: { verb, path },
});

describe("policyRuleMatches (RBAC)", () => {
  // The cases of kube's plugin/pkg/auth/authorizer/rbac TestRuleMatches, as facts.
  type Case = [string, PolicyRule, [RequestAttributes, boolean][]];
  const r = (verb: string, group: string, resource: string, subresource = "") =>
    res(verb, { group, resource, subresource });
  const ruleMatchesCases: Case[] = [
    [
      "star verb, exact match other",
      { verbs: ["*"], apiGroups: ["group1"], resources: ["resource1"] },
      [
        [r("verb1", "group1", "resource1"), true],
        [r("verb1", "group2", "resource1"), false],
        [r("verb1", "group1", "resource2"), false],
        [r("verb2", "group1", "resource1"), true],
        [r("verb2", "group2", "resource2"), false],
      ],
    ],
    [
      "star group, exact match other",
      { verbs: ["verb1"], apiGroups: ["*"], resources: ["resource1"] },
      [
        [r("verb1", "group1", "resource1"), true],
        [r("verb1", "group2", "resource1"), true],
        [r("verb1", "group1", "resource2"), false],
        [r("verb2", "group1", "resource1"), false],
      ],
    ],
    [
      "star resource, exact match other",
      { verbs: ["verb1"], apiGroups: ["group1"], resources: ["*"] },
      [
        [r("verb1", "group1", "resource1"), true],
        [r("verb1", "group2", "resource1"), false],
        [r("verb1", "group1", "resource2"), true],
        [r("verb2", "group1", "resource1"), false],
      ],
    ],
    [
      "tuple expansion",
      {
        verbs: ["verb1", "verb2"],
        apiGroups: ["group1", "group2"],
        resources: ["resource1", "resource2"],
      },
      [
        [r("verb1", "group1", "resource1"), true],
        [r("verb1", "group2", "resource2"), true],
        [r("verb2", "group1", "resource2"), true],
        [r("verb2", "group2", "resource1"), true],
        [r("verb3", "group1", "resource1"), false],
      ],
    ],
    [
      "subresource expansion",
      { verbs: ["*"], apiGroups: ["*"], resources: ["resource1/subresource1"] },
      [
        [r("verb1", "group1", "resource1", "subresource1"), true],
        [r("verb1", "group2", "resource1", "subresource2"), false],
        [r("verb1", "group1", "resource2", "subresource1"), false],
        [r("verb2", "group1", "resource1", "subresource1"), true],
        [r("verb1", "group1", "resource1"), false],
      ],
    ],
    [
      "star nonresource, exact match other",
      { verbs: ["verb1"], nonResourceURLs: ["*"] },
      [
        [url("verb1", "/foo"), true],
        [url("verb1", "/foo/bar/one"), true],
        [url("verb2", "/foo"), false],
        [url("verb2", "/foo/baz/one"), false],
      ],
    ],
    [
      "star nonresource subpath",
      { verbs: ["verb1"], nonResourceURLs: ["/foo/*"] },
      [
        [url("verb1", "/foo"), false],
        [url("verb1", "/foo/bar"), true],
        [url("verb1", "/foo/bar/one"), true],
        [url("verb1", "/notfoo"), false],
        [url("verb1", "/notfoo/bar"), false],
      ],
    ],
    [
      "star verb, exact nonresource",
      { verbs: ["*"], nonResourceURLs: ["/foo", "/foo/bar/one"] },
      [
        [url("verb1", "/foo"), true],
        [url("verb1", "/foo/bar"), false],
        [url("verb1", "/foo/bar/one"), true],
        [url("verb2", "/foo/baz/one"), false],
      ],
    ],
  ];
  for (const [name, rule, cases] of ruleMatchesCases) {
    it(name, () => {
      for (const [request, expected] of cases) {
        assert.equal(policyRuleMatches(rule, request), expected, JSON.stringify(request));
      }
    });
  }

  // kube's pkg/apis/rbac TestResourceMatches, as facts.
  const resourceCases: [string, string[], string, string, boolean][] = [
    ["all matches", ["*"], "foo", "", true],
    ["checks all rules", ["doesn't match", "*"], "foo", "", true],
    ["matches exact rule", ["foo/bar"], "foo", "bar", true],
    ["matches exact rule 02", ["foo/bar"], "foo", "", false],
    ["matches subresource", ["*/scale"], "foo", "scale", true],
    [
      "doesn't match partial subresource hit",
      ["foo/bar", "*/other"],
      "foo",
      "other/segment",
      false,
    ],
    [
      "matches subresource with multiple slashes",
      ["*/other/segment"],
      "foo",
      "other/segment",
      true,
    ],
    ["doesn't fail on empty", [""], "foo", "other/segment", false],
    ["doesn't fail on slash", ["/"], "foo", "other/segment", false],
    ["doesn't fail on missing subresource", ["*/"], "foo", "other/segment", false],
    ["doesn't match on not star", ["*something/other/segment"], "foo", "other/segment", false],
    ["doesn't match on something else", ["something/other/segment"], "foo", "other/segment", false],
  ];
  for (const [name, resources, resource, subresource, expected] of resourceCases) {
    it(`resources: ${name}`, () => {
      const rule: PolicyRule = { verbs: ["*"], apiGroups: ["*"], resources };
      assert.equal(policyRuleMatches(rule, r("get", "g", resource, subresource)), expected);
    });
  }

  it("does not treat pods/* as a wildcard (RBAC has no resource/* form)", () => {
    const rule: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["pods/*"] };
    assert.equal(policyRuleMatches(rule, r("get", "", "pods", "log")), false);
    assert.equal(policyRuleMatches(rule, r("get", "", "pods")), false);
  });

  it("matches * on resources with and without subresources", () => {
    const rule: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["*"] };
    assert.equal(policyRuleMatches(rule, r("get", "", "pods", "log")), true);
    assert.equal(policyRuleMatches(rule, r("get", "", "pods")), true);
  });

  it("checks resourceNames; a request without a name never matches a non-empty list", () => {
    const rule: PolicyRule = {
      verbs: ["get", "list", "create"],
      apiGroups: [""],
      resources: ["configmaps"],
      resourceNames: ["app"],
    };
    assert.equal(
      policyRuleMatches(rule, res("get", { resource: "configmaps", name: "app" })),
      true,
    );
    assert.equal(
      policyRuleMatches(rule, res("get", { resource: "configmaps", name: "other" })),
      false,
    );
    assert.equal(policyRuleMatches(rule, res("list", { resource: "configmaps" })), false);
    assert.equal(policyRuleMatches(rule, res("create", { resource: "configmaps" })), false);
    const empty: PolicyRule = { ...rule, resourceNames: [] };
    assert.equal(policyRuleMatches(empty, res("list", { resource: "configmaps" })), true);
  });

  it("never lets a resource rule match a non-resource request or the other way round", () => {
    const resourceRule: PolicyRule = { verbs: ["*"], apiGroups: ["*"], resources: ["*"] };
    const urlRule: PolicyRule = { verbs: ["*"], nonResourceURLs: ["*"] };
    assert.equal(policyRuleMatches(resourceRule, url("get", "/healthz")), false);
    assert.equal(policyRuleMatches(urlRule, res("get", { resource: "pods" })), false);
  });

  it("treats * inside a value as a literal: dev-* does not match dev-1", () => {
    const rule: PolicyRule = { verbs: ["get*"], apiGroups: ["app*"], resources: ["dep*"] };
    assert.equal(policyRuleMatches(rule, r("get", "apps", "deployments")), false);
    assert.equal(policyRuleMatches(rule, r("get*", "app*", "dep*")), true);
  });

  it("ORs rules", () => {
    const rules: PolicyRule[] = [
      { verbs: ["get"], apiGroups: [""], resources: ["pods"] },
      { verbs: ["get"], nonResourceURLs: ["/metrics"] },
    ];
    assert.equal(policyRulesAllow(rules, url("get", "/metrics")), true);
    assert.equal(policyRulesAllow(rules, r("get", "", "pods")), true);
    assert.equal(policyRulesAllow(rules, r("list", "", "pods")), false);
    assert.equal(policyRulesAllow([], r("get", "", "pods")), false);
  });

  it("nonResourceURLMatches: trailing * is a prefix, elsewhere a literal", () => {
    assert.equal(nonResourceURLMatches("/foo*", "/foobar"), true);
    assert.equal(nonResourceURLMatches("/foo**", "/foobar"), true);
    assert.equal(nonResourceURLMatches("/*/bar", "/foo/bar"), false);
    assert.equal(nonResourceURLMatches("/*/bar", "/*/bar"), true);
    assert.equal(nonResourceURLMatches("**", "/anything"), true);
  });

  it("stays fast on hostile patterns", () => {
    const stars = `${"*".repeat(100_000)}x`;
    const start = process.hrtime.bigint();
    assert.equal(nonResourceURLMatches(stars, "/a"), false);
    assert.equal(
      nonResourceURLMatches(`/${"a".repeat(100_000)}*`, `/${"a".repeat(99_999)}`),
      false,
    );
    assert.ok(Number(process.hrtime.bigint() - start) / 1e6 < 200);
  });

  it("a rule with * everywhere matches every request (property)", () => {
    const all: PolicyRule[] = [
      { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
      { verbs: ["*"], nonResourceURLs: ["*"] },
    ];
    fc.assert(fc.property(arbitraryRequest, (request) => policyRulesAllow(all, request)));
  });
});

/** Any request, with names drawn from a small pool so that rules sometimes match. */
const arbitraryRequest: fc.Arbitrary<RequestAttributes> = fc.oneof(
  fc
    .record({
      namespace: fc.constantFrom("", "dev", "prod", "__proto__"),
      verb: fc.constantFrom("get", "list", "create", "delete", "watch"),
      group: fc.constantFrom("", "apps", "management.loft.sh"),
      version: fc.constant("v1"),
      resource: fc.constantFrom("pods", "deployments", "namespaces", "secrets"),
      subresource: fc.constantFrom("", "log", "scale", "status"),
      name: fc.constantFrom("", "dev", "web", "constructor"),
    })
    .map((a): RequestAttributes => ({ resourceAttributes: a })),
  fc
    .record({
      verb: fc.constantFrom("get", "post"),
      path: fc.constantFrom("/api", "/healthz", "/metrics", "/openapi/v2", "/logs/x"),
    })
    .map((a): RequestAttributes => ({ nonResourceAttributes: a })),
);

describe("requestNamespace", () => {
  it("is the namespace of a namespaced request and '' for cluster-scoped ones", () => {
    assert.equal(requestNamespace(res("get", { resource: "pods", namespace: "dev" })), "dev");
    assert.equal(requestNamespace(res("list", { resource: "nodes" })), "");
    assert.equal(requestNamespace(url("get", "/api")), "");
  });

  it("is the named namespace for the core namespaces resource", () => {
    assert.equal(requestNamespace(res("get", { resource: "namespaces", name: "dev" })), "dev");
    const kube = res("delete", { resource: "namespaces", name: "dev", namespace: "dev" });
    assert.equal(requestNamespace(kube), "dev");
    const odd = res("get", { resource: "namespaces", name: "dev", namespace: "prod" });
    assert.equal(requestNamespace(odd), "");
    assert.equal(requestNamespace(res("list", { resource: "namespaces" })), "");
    const other = res("get", { group: "x.io", resource: "namespaces", name: "dev" });
    assert.equal(requestNamespace(other), "");
  });
});

describe("scopeRuleMatches (deprecated AccessKeyScopeRule)", () => {
  const namespaces: Record<string, Labels> = {
    "team-a": { "loft.sh/project": "a" },
    "vc-ns": { "loft.sh/vcluster-instance-name": "vc1" },
    plain: {},
  };
  const ctxFor = (
    request: RequestAttributes,
    loaded = true,
    clusterName = "east",
  ): TargetContext => ({
    managementGroup: "management.loft.sh",
    clusterName,
    projectLabel: "loft.sh/project",
    virtualClusterLabel: "loft.sh/vcluster-instance-name",
    namespaceLabels: () => {
      const ns = requestNamespace(request);
      if (ns === "") return undefined;
      if (!loaded) return NOT_LOADED;
      return Object.hasOwn(namespaces, ns) ? namespaces[ns] : undefined;
    },
  });
  const matches = (rule: unknown, request: RequestAttributes, loaded = true, cluster = "east") =>
    scopeRuleMatches(rule, request, ctxFor(request, loaded, cluster));

  const pod = (verb: string, namespace: string, more: Partial<ResourceAttributes> = {}) =>
    res(verb, { resource: "pods", namespace, ...more });

  const cases: [string, unknown, RequestAttributes, boolean | "unknown"][] = [
    ["empty rule matches everything", {}, pod("delete", "x"), true],
    ["empty rule matches non-resource", {}, url("post", "/x"), true],
    ["verbs: listed", { verbs: ["get"] }, pod("get", "x"), true],
    ["verbs: not listed", { verbs: ["get"] }, pod("list", "x"), false],
    ["verbs: *", { verbs: ["*"] }, url("post", "/x"), true],
    ["verbs: no pattern", { verbs: ["g*"] }, pod("get", "x"), false],
    [
      "resources: group + resource",
      { resources: [{ group: "", resources: ["pods"] }] },
      pod("get", "x"),
      true,
    ],
    [
      "resources: other group",
      { resources: [{ group: "apps", resources: ["pods"] }] },
      pod("get", "x"),
      false,
    ],
    [
      "resources: group *",
      { resources: [{ group: "*", resources: ["pods"] }] },
      pod("get", "x"),
      true,
    ],
    ["resources: empty = whole group", { resources: [{ group: "" }] }, pod("get", "x"), true],
    [
      "resources: pods/* = subresources",
      { resources: [{ resources: ["pods/*"] }] },
      pod("get", "x", { subresource: "log" }),
      true,
    ],
    [
      "resources: pods/* not pods itself",
      { resources: [{ resources: ["pods/*"] }] },
      pod("get", "x"),
      false,
    ],
    [
      "resources: */log",
      { resources: [{ resources: ["*/log"] }] },
      pod("get", "x", { subresource: "log" }),
      true,
    ],
    [
      "resources: */log not exec",
      { resources: [{ resources: ["*/log"] }] },
      pod("get", "x", { subresource: "exec" }),
      false,
    ],
    [
      "resources: pods/log exact",
      { resources: [{ resources: ["pods/log"] }] },
      pod("get", "x", { subresource: "log" }),
      true,
    ],
    [
      "resources: pods does not cover pods/log",
      { resources: [{ resources: ["pods"] }] },
      pod("get", "x", { subresource: "log" }),
      false,
    ],
    [
      "resourceNames: listed",
      { resources: [{ resources: ["pods"], resourceNames: ["web"] }] },
      pod("get", "x", { name: "web" }),
      true,
    ],
    [
      "resourceNames: list has no name",
      { resources: [{ resources: ["pods"], resourceNames: ["web"] }] },
      pod("list", "x"),
      false,
    ],
    [
      "resources: never non-resource",
      { resources: [{ resources: ["*"] }] },
      url("get", "/healthz"),
      false,
    ],
    ["namespaces: listed", { namespaces: ["x"] }, pod("get", "x"), true],
    ["namespaces: not listed", { namespaces: ["x"] }, pod("get", "y"), false],
    [
      "namespaces: '' = cluster-scoped",
      { namespaces: [""] },
      res("get", { resource: "nodes" }),
      true,
    ],
    ["namespaces: '' not namespaced", { namespaces: [""] }, pod("get", "x"), false],
    ["namespaces: no pattern", { namespaces: ["dev-*"] }, pod("get", "dev-1"), false],
    ["namespaces: no non-resource", { namespaces: ["x"] }, url("get", "/x"), false],
    ["nonResourceURLs: exact", { nonResourceURLs: ["/healthz"] }, url("get", "/healthz"), true],
    [
      "nonResourceURLs: trailing *",
      { nonResourceURLs: ["/logs/*"] },
      url("get", "/logs/a/b"),
      true,
    ],
    ["nonResourceURLs: other", { nonResourceURLs: ["/logs/*"] }, url("get", "/metrics"), false],
    ["nonResourceURLs: not resource requests", { nonResourceURLs: ["*"] }, pod("get", "x"), false],
    [
      "resources and nonResourceURLs: either",
      { resources: [{ resources: ["pods"] }], nonResourceURLs: ["/healthz"] },
      url("get", "/healthz"),
      true,
    ],
    [
      "requestTargets: Management",
      { requestTargets: ["Management"] },
      res("get", { group: "management.loft.sh", resource: "projects" }),
      true,
    ],
    [
      "requestTargets: Management not core",
      { requestTargets: ["Management"] },
      pod("get", "x"),
      false,
    ],
    ["requestTargets: Cluster", { requestTargets: ["Cluster"] }, pod("get", "x"), true],
    [
      "requestTargets: Cluster non-resource",
      { requestTargets: ["Cluster"] },
      url("get", "/healthz"),
      true,
    ],
    [
      "requestTargets: Cluster not management",
      { requestTargets: ["Cluster"] },
      res("get", { group: "management.loft.sh", resource: "projects" }),
      false,
    ],
    [
      "requestTargets: ProjectSpace",
      { requestTargets: ["ProjectSpace"] },
      pod("get", "team-a"),
      true,
    ],
    [
      "requestTargets: ProjectSpace no label",
      { requestTargets: ["ProjectSpace"] },
      pod("get", "plain"),
      false,
    ],
    [
      "requestTargets: ProjectSpace unknown ns",
      { requestTargets: ["ProjectSpace"] },
      pod("get", "nope"),
      false,
    ],
    [
      "requestTargets: ProjectSpace cluster-scoped",
      { requestTargets: ["ProjectSpace"] },
      res("list", { resource: "nodes" }),
      false,
    ],
    [
      "requestTargets: ProjectVirtualCluster",
      { requestTargets: ["ProjectVirtualCluster"] },
      pod("get", "vc-ns"),
      true,
    ],
    [
      "requestTargets: ProjectVirtualCluster other",
      { requestTargets: ["ProjectVirtualCluster"] },
      pod("get", "team-a"),
      false,
    ],
    ["requestTargets: unsupported value", { requestTargets: ["Other"] }, pod("get", "x"), false],
    ["cluster: this cluster", { cluster: "east" }, pod("get", "x"), true],
    ["cluster: *", { cluster: "*" }, pod("get", "x"), true],
    ["cluster: other", { cluster: "west" }, pod("get", "x"), false],
    ["cluster: no pattern", { cluster: "ea*" }, pod("get", "x"), false],
    [
      "virtualClusters: its namespace",
      { virtualClusters: [{ name: "vc1", namespace: "vc-ns" }] },
      pod("get", "vc-ns"),
      true,
    ],
    [
      "virtualClusters: other namespace",
      { virtualClusters: [{ name: "vc1", namespace: "vc-ns" }] },
      pod("get", "x"),
      false,
    ],
    [
      "virtualClusters: not cluster-scoped",
      { virtualClusters: [{ name: "vc1", namespace: "" }] },
      res("list", { resource: "nodes" }),
      false,
    ],
    ["malformed: verbs not a list", { verbs: "get" }, pod("get", "x"), false],
    ["malformed: namespaces not a list", { namespaces: "x" }, pod("get", "x"), false],
    ["malformed: resources entry not an object", { resources: ["pods"] }, pod("get", "x"), false],
    ["malformed: cluster not a string", { cluster: 1 }, pod("get", "x"), false],
    ["malformed: not an object", "rule", pod("get", "x"), false],
    [
      "hostile: __proto__ key",
      JSON.parse('{"__proto__": {"verbs": ["get"]}, "verbs": ["list"]}'),
      pod("get", "x"),
      false,
    ],
  ];
  for (const [name, rule, request, expected] of cases) {
    it(name, () => assert.equal(matches(rule, request), expected));
  }

  it("cluster: a named cluster never matches without --cluster-name", () => {
    assert.equal(matches({ cluster: "east" }, pod("get", "x"), true, ""), false);
    assert.equal(matches({ cluster: "*" }, pod("get", "x"), true, ""), true);
  });

  it("is unknown when a label target needs namespaces that are not loaded", () => {
    assert.equal(
      matches({ requestTargets: ["ProjectSpace"] }, pod("get", "team-a"), false),
      "unknown",
    );
    // Decided without labels: not unknown.
    assert.equal(
      matches({ requestTargets: ["Cluster", "ProjectSpace"] }, pod("get", "team-a"), false),
      true,
    );
    assert.equal(
      matches({ verbs: ["list"], requestTargets: ["ProjectSpace"] }, pod("get", "team-a"), false),
      false,
    );
  });

  it("does not look at namespace labels when the rule does not need them", () => {
    let calls = 0;
    const request = pod("get", "team-a");
    const ctx = { ...ctxFor(request), namespaceLabels: () => (calls++, undefined) };
    scopeRuleMatches({ verbs: ["get"], requestTargets: ["Cluster"] }, request, ctx);
    assert.equal(calls, 0);
  });
});
