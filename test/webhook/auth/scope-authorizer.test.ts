import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import type {
  AccessKeyScope,
  OwnedAccessKey,
  OwnedAccessKeySpec,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import type { NamespaceLabels } from "../../../webhook/src/auth/contracts.js";
import type {
  RequestAttributes,
  ResourceAttributes,
} from "../../../webhook/src/auth/policy-rule-match.js";
import { parseRolesFile } from "../../../webhook/src/auth/roles.js";
import {
  authorizeScope,
  DEFAULT_PROJECT_LABEL,
  DEFAULT_VIRTUAL_CLUSTER_LABEL,
  describeRequest,
  isAlwaysAllowed,
  isRestricted,
  NOT_LOADED_REASON,
  type ScopeDeps,
} from "../../../webhook/src/auth/scope-authorizer.js";

const P = DEFAULT_PROJECT_LABEL;
const V = DEFAULT_VIRTUAL_CLUSTER_LABEL;

const NAMESPACES: Record<string, Record<string, string>> = {
  "team-a": { [P]: "a" },
  "team-a-2": { [P]: "a" },
  "team-b": { [P]: "b" },
  "vc-ns": { [P]: "a", [V]: "vc1" },
  "vc-b": { [P]: "b", [V]: "vc2" },
  "vc-noproject": { [V]: "vc3" },
  "dev-1": { [P]: "dev-1" },
  plain: {},
};

function namespaceLabels(synced = true, table = NAMESPACES): NamespaceLabels & { calls: number } {
  return {
    calls: 0,
    synced() {
      return synced;
    },
    labels(name) {
      this.calls++;
      return Object.hasOwn(table, name) ? table[name] : undefined;
    },
  };
}

const ROLES = parseRolesFile(
  `roles:
  - name: deployer
    rules:
      - apiGroups: ["apps"]
        resources: ["deployments", "deployments/scale"]
        verbs: ["get", "list", "watch", "update", "patch"]
  - name: node-reader
    rules:
      - apiGroups: [""]
        resources: ["nodes"]
        verbs: ["get", "list"]
`,
  "loft.sh",
);

function deps(more: Partial<ScopeDeps> = {}): ScopeDeps {
  return {
    groupDomain: "loft.sh",
    clusterName: "east",
    projectLabel: P,
    virtualClusterLabel: V,
    roles: ROLES,
    namespaces: namespaceLabels(),
    ...more,
  };
}

const key = (spec: OwnedAccessKeySpec, name = "ci"): OwnedAccessKey => ({
  apiVersion: "management.loft.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name, uid: "u-1" },
  spec: { user: "alice", ...spec },
});
const scoped = (scope: AccessKeyScope): OwnedAccessKey => key({ scope });

const res = (verb: string, more: Partial<ResourceAttributes> = {}): RequestAttributes => ({
  resourceAttributes: {
    namespace: "",
    verb,
    group: "",
    version: "v1",
    resource: "pods",
    subresource: "",
    name: "",
    ...more,
  },
});
const inNs = (namespace: string, verb = "get", more: Partial<ResourceAttributes> = {}) =>
  res(verb, { namespace, ...more });
const url = (verb: string, path: string): RequestAttributes => ({
  nonResourceAttributes: { verb, path },
});

const denied = (k: OwnedAccessKey, r: RequestAttributes, d = deps()): boolean =>
  authorizeScope(k, r, d).denied;

describe("authorizeScope", () => {
  describe("keys that restrict nothing", () => {
    const unrestricted: [string, OwnedAccessKeySpec][] = [
      ["no scope", {}],
      ["empty scope", { scope: {} }],
      [
        "empty lists",
        {
          scope: {
            roles: [],
            projects: [],
            spaces: [],
            virtualClusters: [],
            clusters: [],
            rules: [],
          },
        },
      ],
      ["allowLoftCli false", { allowLoftCli: false, scope: { allowLoftCli: false } }],
      ["empty spec.rules", { rules: [] }],
      ["null scope", { scope: null as unknown as AccessKeyScope }],
    ];
    for (const [name, spec] of unrestricted) {
      it(`has no opinion for a key with ${name}`, () => {
        assert.equal(isRestricted(key(spec)), false);
        assert.deepEqual(authorizeScope(key(spec), inNs("kube-system", "delete"), deps()), {
          denied: false,
        });
      });
    }

    const restricted: [string, OwnedAccessKeySpec][] = [
      ["a scope entry", { scope: { clusters: [{ cluster: "west" }] } }],
      ["allowLoftCli under spec", { allowLoftCli: true }],
      ["allowLoftCli under scope", { scope: { allowLoftCli: true } }],
      ["spec.rules", { rules: [{ verbs: ["get"] }] }],
      ["spec.scope.rules", { scope: { rules: [{ verbs: ["get"] }] } }],
      ["a malformed scope", { scope: "all" as unknown as AccessKeyScope }],
      ["a malformed list", { scope: { projects: { project: "a" } as unknown as [] } }],
      ["a malformed spec.rules", { rules: "all" as unknown as [] }],
    ];
    for (const [name, spec] of restricted) {
      it(`restricts a key with ${name}`, () => {
        assert.equal(isRestricted(key(spec)), true);
        assert.equal(denied(key(spec), inNs("kube-system", "delete")), true);
      });
    }
  });

  describe("always allowed for a restricted key", () => {
    const k = scoped({ clusters: [{ cluster: "west" }] });
    const allowed: [string, RequestAttributes][] = [
      ["GET /api", url("get", "/api")],
      ["GET /api/v1", url("get", "/api/v1")],
      ["GET /apis", url("get", "/apis")],
      ["GET /apis/apps/v1", url("get", "/apis/apps/v1")],
      ["GET /version", url("get", "/version")],
      ["GET /openapi/v3/apis/apps/v1", url("get", "/openapi/v3/apis/apps/v1")],
      [
        "create selfsubjectreviews",
        res("create", { group: "authentication.k8s.io", resource: "selfsubjectreviews" }),
      ],
      [
        "create selfsubjectaccessreviews",
        res("create", { group: "authorization.k8s.io", resource: "selfsubjectaccessreviews" }),
      ],
      [
        "create selfsubjectrulesreviews",
        res("create", { group: "authorization.k8s.io", resource: "selfsubjectrulesreviews" }),
      ],
    ];
    for (const [name, r] of allowed) {
      it(name, () => {
        assert.equal(isAlwaysAllowed(r), true);
        assert.equal(denied(k, r), false);
      });
    }
    const notAllowed: [string, RequestAttributes][] = [
      ["POST /api", url("post", "/api")],
      ["GET /apiextras", url("get", "/apiextras")],
      ["GET /openapi", url("get", "/openapi")],
      ["GET /metrics", url("get", "/metrics")],
      ["GET /healthz", url("get", "/healthz")],
      ["GET /versions", url("get", "/versions")],
      [
        "create subjectaccessreviews",
        res("create", { group: "authorization.k8s.io", resource: "subjectaccessreviews" }),
      ],
      [
        "create tokenreviews",
        res("create", { group: "authentication.k8s.io", resource: "tokenreviews" }),
      ],
      [
        "list selfsubjectreviews",
        res("list", { group: "authentication.k8s.io", resource: "selfsubjectreviews" }),
      ],
      [
        "selfsubjectreviews in the wrong group",
        res("create", { group: "authorization.k8s.io", resource: "selfsubjectreviews" }),
      ],
      [
        "a subresource of a self review",
        res("create", {
          group: "authorization.k8s.io",
          resource: "selfsubjectaccessreviews",
          subresource: "x",
        }),
      ],
      [
        "a group named __proto__",
        res("create", { group: "__proto__", resource: "selfsubjectreviews" }),
      ],
    ];
    for (const [name, r] of notAllowed) {
      it(`but not ${name}`, () => {
        assert.equal(isAlwaysAllowed(r), false);
        assert.equal(denied(k, r), true);
      });
    }
  });

  // The mapping table: each scope entry, and requests it lets through (false) or not (true).
  const table: [string, AccessKeyScope, [RequestAttributes, boolean][]][] = [
    [
      "projects: a",
      { projects: [{ project: "a" }] },
      [
        [inNs("team-a"), false],
        [inNs("team-a-2", "delete"), false],
        [inNs("vc-ns"), false],
        [inNs("team-b"), true],
        [inNs("plain"), true],
        [inNs("unknown"), true],
        [res("get", { resource: "namespaces", name: "team-a" }), false],
        [res("delete", { resource: "namespaces", name: "team-a", namespace: "team-a" }), false],
        [res("get", { resource: "namespaces", name: "team-b" }), true],
        [res("list", { resource: "namespaces" }), true],
        [res("list", { resource: "nodes" }), true],
        [url("get", "/healthz"), true],
      ],
    ],
    [
      "projects: *",
      { projects: [{ project: "*" }] },
      [
        [inNs("team-a"), false],
        [inNs("team-b"), false],
        [inNs("dev-1"), false],
        [inNs("plain"), true],
        [inNs("vc-noproject"), true],
        [res("list", { resource: "pods" }), true],
      ],
    ],
    [
      "projects: dev-* is not a pattern",
      { projects: [{ project: "dev-*" }] },
      [[inNs("dev-1"), true]],
    ],
    [
      "spaces: a/team-a",
      { spaces: [{ project: "a", space: "team-a" }] },
      [
        [inNs("team-a"), false],
        [inNs("team-a-2"), true],
        [inNs("team-b"), true],
        [res("get", { resource: "namespaces", name: "team-a" }), false],
      ],
    ],
    [
      "spaces: a/team-b (the space is not in project a)",
      { spaces: [{ project: "a", space: "team-b" }] },
      [[inNs("team-b"), true]],
    ],
    [
      "spaces: a/*",
      { spaces: [{ project: "a", space: "*" }] },
      [
        [inNs("team-a"), false],
        [inNs("team-a-2"), false],
        [inNs("team-b"), true],
      ],
    ],
    [
      "spaces: */team-b",
      { spaces: [{ project: "*", space: "team-b" }] },
      [
        [inNs("team-b"), false],
        [inNs("team-a"), true],
        [inNs("plain"), true],
      ],
    ],
    [
      "spaces: */plain (a namespace without project is no space)",
      { spaces: [{ project: "*", space: "plain" }] },
      [[inNs("plain"), true]],
    ],
    [
      "spaces: team-* is not a pattern",
      { spaces: [{ project: "a", space: "team-*" }] },
      [[inNs("team-a"), true]],
    ],
    [
      "virtualClusters: a/vc1",
      { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] },
      [
        [inNs("vc-ns"), false],
        [inNs("vc-b"), true],
        [inNs("team-a"), true],
      ],
    ],
    [
      "virtualClusters: */*",
      { virtualClusters: [{ project: "*", virtualCluster: "*" }] },
      [
        [inNs("vc-ns"), false],
        [inNs("vc-b"), false],
        [inNs("vc-noproject"), true],
        [inNs("team-a"), true],
      ],
    ],
    [
      "virtualClusters: b/* ",
      { virtualClusters: [{ project: "b", virtualCluster: "*" }] },
      [
        [inNs("vc-b"), false],
        [inNs("vc-ns"), true],
      ],
    ],
    [
      "clusters: this cluster",
      { clusters: [{ cluster: "east" }] },
      [
        [inNs("kube-system", "delete"), false],
        [res("list", { resource: "nodes" }), false],
        [url("post", "/anything"), false],
      ],
    ],
    [
      "clusters: *",
      { clusters: [{ cluster: "*" }] },
      [[res("delete", { resource: "nodes", name: "n1" }), false]],
    ],
    ["clusters: another cluster", { clusters: [{ cluster: "west" }] }, [[inNs("team-a"), true]]],
    [
      "roles: deployer everywhere",
      { roles: [{ role: "deployer" }] },
      [
        [
          inNs("team-b", "patch", { group: "apps", resource: "deployments", subresource: "scale" }),
          false,
        ],
        [res("list", { group: "apps", resource: "deployments" }), false],
        [inNs("team-b", "delete", { group: "apps", resource: "deployments" }), true],
        [inNs("team-b", "get", { resource: "pods" }), true],
      ],
    ],
    [
      "roles: deployer in project a",
      { roles: [{ role: "deployer", projects: ["a"] }] },
      [
        [inNs("team-a", "get", { group: "apps", resource: "deployments" }), false],
        [inNs("team-b", "get", { group: "apps", resource: "deployments" }), true],
        [res("list", { group: "apps", resource: "deployments" }), true],
        [inNs("team-a", "get", { resource: "pods" }), true],
      ],
    ],
    [
      "roles: deployer in project * (any project)",
      { roles: [{ role: "deployer", projects: ["*"] }] },
      [
        [inNs("team-b", "get", { group: "apps", resource: "deployments" }), false],
        [inNs("plain", "get", { group: "apps", resource: "deployments" }), true],
      ],
    ],
    [
      "roles: deployer in virtual cluster vc2 or project a",
      { roles: [{ role: "deployer", projects: ["a"], virtualClusters: ["vc2"] }] },
      [
        [inNs("vc-b", "get", { group: "apps", resource: "deployments" }), false],
        [inNs("team-a", "get", { group: "apps", resource: "deployments" }), false],
        [inNs("team-b", "get", { group: "apps", resource: "deployments" }), true],
      ],
    ],
    [
      "roles: cluster-scoped role rules",
      { roles: [{ role: "node-reader" }] },
      [
        [res("list", { resource: "nodes" }), false],
        [res("delete", { resource: "nodes", name: "n" }), true],
      ],
    ],
    [
      "roles: loft-cli",
      { roles: [{ role: "loft-cli" }] },
      [
        [res("list", { group: "management.loft.sh", resource: "projects" }), false],
        [res("create", { group: "management.loft.sh", resource: "selves" }), false],
        [res("delete", { group: "management.loft.sh", resource: "projects", name: "p" }), true],
        [inNs("team-a"), true],
      ],
    ],
    ["roles: unknown role", { roles: [{ role: "ghost" }] }, [[inNs("team-a"), true]]],
    [
      "allowLoftCli",
      { allowLoftCli: true },
      [
        [res("watch", { group: "management.loft.sh", resource: "clusters" }), false],
        [inNs("team-a"), true],
      ],
    ],
    [
      "rules (deprecated)",
      {
        rules: [
          {
            verbs: ["get", "list"],
            resources: [{ group: "", resources: ["pods"] }],
            namespaces: ["team-b"],
          },
        ],
      },
      [
        [inNs("team-b", "list"), false],
        [inNs("team-b", "delete"), true],
        [inNs("team-a", "get"), true],
      ],
    ],
    [
      "several lists are OR-ed",
      {
        projects: [{ project: "b" }],
        roles: [{ role: "node-reader" }],
        rules: [{ nonResourceURLs: ["/healthz"] }],
      },
      [
        [inNs("team-b", "delete"), false],
        [res("get", { resource: "nodes", name: "n" }), false],
        [url("get", "/healthz"), false],
        [inNs("team-a"), true],
        [url("get", "/metrics"), true],
      ],
    ],
  ];
  for (const [name, scope, cases] of table) {
    it(`maps ${name}`, () => {
      for (const [request, expected] of cases) {
        assert.equal(denied(scoped(scope), request), expected, describeRequest(request));
      }
    });
  }

  it("reads deprecated spec.rules and spec.allowLoftCli next to spec.scope", () => {
    const k = key({
      rules: [{ namespaces: ["team-b"] }],
      allowLoftCli: true,
      scope: { projects: [{ project: "a" }] },
    });
    assert.equal(denied(k, inNs("team-b", "delete")), false);
    assert.equal(denied(k, inNs("team-a", "delete")), false);
    assert.equal(
      denied(k, res("get", { group: "management.loft.sh", resource: "projects" })),
      false,
    );
    assert.equal(denied(k, inNs("plain")), true);
  });

  it("a named cluster never matches without --cluster-name", () => {
    assert.equal(
      denied(scoped({ clusters: [{ cluster: "east" }] }), inNs("x"), deps({ clusterName: "" })),
      true,
    );
    assert.equal(
      denied(scoped({ clusters: [{ cluster: "*" }] }), inNs("x"), deps({ clusterName: "" })),
      false,
    );
  });

  it("uses the configured labels", () => {
    const d = deps({
      projectLabel: "example.com/project",
      virtualClusterLabel: "example.com/vc",
      namespaces: namespaceLabels(true, {
        n: { "example.com/project": "a", "example.com/vc": "v" },
        "team-a": { [P]: "a" },
      }),
    });
    assert.equal(denied(scoped({ projects: [{ project: "a" }] }), inNs("n"), d), false);
    assert.equal(denied(scoped({ projects: [{ project: "a" }] }), inNs("team-a"), d), true);
    assert.equal(
      denied(scoped({ virtualClusters: [{ project: "a", virtualCluster: "v" }] }), inNs("n"), d),
      false,
    );
  });

  describe("namespace labels not loaded", () => {
    const notLoaded = () => deps({ namespaces: namespaceLabels(false) });

    it("denies with the not-loaded reason when the answer needs them", () => {
      assert.deepEqual(
        authorizeScope(scoped({ projects: [{ project: "a" }] }), inNs("team-a"), notLoaded()),
        {
          denied: true,
          reason: NOT_LOADED_REASON,
        },
      );
    });

    it("decides without them when it can", () => {
      const both = scoped({ projects: [{ project: "a" }], clusters: [{ cluster: "east" }] });
      assert.equal(denied(both, inNs("team-a"), notLoaded()), false);
      const spaces = scoped({ spaces: [{ project: "a", space: "team-a" }] });
      assert.equal(authorizeScope(spaces, inNs("team-b"), notLoaded()).denied, true);
      assert.notEqual(
        (authorizeScope(spaces, inNs("team-b"), notLoaded()) as { reason: string }).reason,
        NOT_LOADED_REASON,
      );
      assert.equal(
        denied(
          scoped({ projects: [{ project: "a" }] }),
          res("list", { resource: "nodes" }),
          notLoaded(),
        ),
        true,
      );
      assert.equal(
        denied(
          scoped({ roles: [{ role: "deployer", projects: ["a"] }] }),
          inNs("team-a"),
          notLoaded(),
        ),
        true,
      );
    });

    it("looks a namespace up at most once per review", () => {
      const d = deps();
      const scope = {
        projects: [{ project: "x" }, { project: "y" }],
        spaces: [{ project: "a", space: "*" }],
      };
      authorizeScope(scoped(scope), inNs("team-b"), d);
      assert.equal((d.namespaces as ReturnType<typeof namespaceLabels>).calls, 1);
    });
  });

  describe("reasons", () => {
    it("names the key, the request and the scope", () => {
      const decision = authorizeScope(
        scoped({ projects: [{ project: "a" }] }),
        inNs("prod", "list"),
        deps(),
      );
      assert.deepEqual(decision, {
        denied: true,
        reason: `access key "ci" does not allow "list" "pods" in namespace "prod": outside the key's scope`,
      });
    });

    it("describes groups, subresources, names and non-resource requests", () => {
      assert.equal(
        describeRequest(
          inNs("prod", "patch", {
            group: "apps",
            resource: "deployments",
            subresource: "scale",
            name: "web",
          }),
        ),
        `"patch" "deployments.apps/scale" "web" in namespace "prod"`,
      );
      assert.equal(describeRequest(url("get", "/metrics")), `"get" "/metrics"`);
    });

    it("names an unknown role", () => {
      const decision = authorizeScope(scoped({ roles: [{ role: "ghost" }] }), inNs("prod"), deps());
      assert.ok(
        decision.denied && decision.reason.endsWith(`(unknown role "ghost")`),
        JSON.stringify(decision),
      );
    });

    it("bounds and escapes user-controlled text", () => {
      const long = "n".repeat(100_000);
      const k = key({ scope: { roles: [{ role: long }] } }, long);
      const decision = authorizeScope(k, inNs(long, "get\n\u0000evil", { name: long }), deps());
      assert.ok(decision.denied);
      assert.ok(decision.reason.length < 800, String(decision.reason.length));
      assert.ok(!decision.reason.includes("\n") && !decision.reason.includes("\u0000"));
    });
  });

  describe("hostile input", () => {
    it("ignores malformed entries without throwing", () => {
      const scope = {
        projects: [null, 1, "a", { project: 1 }, { project: "" }, { project: null }],
        spaces: [{ project: "a" }, { space: "*" }],
        virtualClusters: [{ project: "a" }],
        clusters: [{ cluster: 1 }, {}],
        roles: [{ role: 1 }, { role: "deployer", projects: "a" }, {}],
        rules: [null, "x", { verbs: "get" }],
      } as unknown as AccessKeyScope;
      for (const r of [
        inNs("team-a"),
        inNs("team-a", "get", { group: "apps", resource: "deployments" }),
        url("get", "/x"),
      ]) {
        assert.equal(denied(scoped(scope), r), true);
      }
    });

    it("does not read inherited properties (__proto__, constructor)", () => {
      const scope = JSON.parse(
        '{"__proto__": {"clusters": [{"cluster": "*"}]}, "projects": [{"project": "zzz"}]}',
      );
      assert.equal(denied(scoped(scope), inNs("team-a")), true);
      const ns = namespaceLabels(true, JSON.parse(`{"team-a": {"__proto__": {"${P}": "a"}}}`));
      assert.equal(
        denied(scoped({ projects: [{ project: "a" }] }), inNs("team-a"), deps({ namespaces: ns })),
        true,
      );
      assert.equal(
        denied(scoped({ projects: [{ project: "a" }] }), inNs("constructor"), deps()),
        true,
      );
      assert.equal(
        denied(scoped({ roles: [{ role: "constructor" }] }), inNs("team-a"), deps()),
        true,
      );
      assert.equal(
        denied(scoped({ roles: [{ role: "__proto__" }] }), inNs("team-a"), deps()),
        true,
      );
    });

    it("handles huge lists", () => {
      const projects = Array.from({ length: 100_000 }, (_, i) => ({ project: `p${i}` }));
      const start = Date.now();
      assert.equal(denied(scoped({ projects }), inNs("team-a")), true);
      assert.equal(
        denied(scoped({ projects: [...projects, { project: "a" }] }), inNs("team-a")),
        false,
      );
      assert.ok(Date.now() - start < 2000);
    });
  });
});

// ---------------------------------------------------------------- properties

const name = (pool: string[]) => fc.constantFrom(...pool);
const projectName = name(["a", "b", "*", "dev-*", "__proto__"]);
const arbitraryScope: fc.Arbitrary<AccessKeyScope> = fc.record(
  {
    projects: fc.array(fc.record({ project: projectName }), { maxLength: 3 }),
    spaces: fc.array(
      fc.record({ project: projectName, space: name(["team-a", "team-b", "plain", "*"]) }),
      { maxLength: 3 },
    ),
    virtualClusters: fc.array(
      fc.record({ project: projectName, virtualCluster: name(["vc1", "vc2", "*"]) }),
      { maxLength: 3 },
    ),
    clusters: fc.array(fc.record({ cluster: name(["east", "west", "*"]) }), { maxLength: 2 }),
    roles: fc.array(
      fc.record(
        {
          role: name(["deployer", "node-reader", "loft-cli", "ghost"]),
          projects: fc.array(projectName, { maxLength: 2 }),
          virtualClusters: fc.array(name(["vc1", "vc2", "*"]), { maxLength: 2 }),
        },
        { requiredKeys: ["role"] },
      ),
      { maxLength: 2 },
    ),
    rules: fc.array(
      fc.record(
        {
          verbs: fc.array(name(["get", "list", "*"]), { maxLength: 2 }),
          namespaces: fc.array(name(["", "team-a", "plain"]), { maxLength: 2 }),
          requestTargets: fc.array(
            name(["Management", "Cluster", "ProjectSpace", "ProjectVirtualCluster"]),
            { maxLength: 2 },
          ),
          nonResourceURLs: fc.array(name(["/healthz", "/logs/*", "*"]), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 2 },
    ),
    allowLoftCli: fc.boolean(),
  },
  { requiredKeys: [] },
);

const arbitraryRequest: fc.Arbitrary<RequestAttributes> = fc.oneof(
  fc
    .record({
      namespace: name(["", ...Object.keys(NAMESPACES), "unknown", "__proto__"]),
      verb: name(["get", "list", "create", "delete", "patch"]),
      group: name(["", "apps", "management.loft.sh", "authorization.k8s.io"]),
      version: fc.constant("v1"),
      resource: name(["pods", "deployments", "namespaces", "nodes", "selfsubjectaccessreviews"]),
      subresource: name(["", "scale", "log"]),
      name: name(["", "team-a", "web"]),
    })
    .map((a): RequestAttributes => ({ resourceAttributes: a })),
  fc
    .record({
      verb: name(["get", "post"]),
      path: name(["/api", "/healthz", "/logs/x", "/metrics", "/version"]),
    })
    .map((a): RequestAttributes => ({ nonResourceAttributes: a })),
);

const LISTS = ["projects", "spaces", "virtualClusters", "clusters", "roles", "rules"] as const;

describe("authorizeScope properties", () => {
  it("only ever answers denied or no opinion", () => {
    fc.assert(
      fc.property(arbitraryScope, arbitraryRequest, fc.boolean(), (scope, request, synced) => {
        const decision = authorizeScope(
          scoped(scope),
          request,
          deps({ namespaces: namespaceLabels(synced) }),
        );
        assert.deepEqual(
          Object.keys(decision).sort(),
          decision.denied ? ["denied", "reason"] : ["denied"],
        );
        assert.ok(!("allowed" in decision));
      }),
    );
  });

  it("is monotonic: adding an entry to a restricted key never denies more", () => {
    fc.assert(
      fc.property(
        arbitraryScope,
        arbitraryScope,
        arbitraryRequest,
        fc.boolean(),
        (scope, extra, request, synced) => {
          const d = () => deps({ namespaces: namespaceLabels(synced) });
          const before = scoped(scope);
          fc.pre(isRestricted(before));
          const merged: AccessKeyScope = {
            ...scope,
            allowLoftCli: scope.allowLoftCli === true || extra.allowLoftCli === true,
          };
          for (const list of LISTS) {
            (merged as Record<string, unknown[]>)[list] = [
              ...(scope[list] ?? []),
              ...(extra[list] ?? []),
            ];
          }
          if (!authorizeScope(before, request, d()).denied) {
            assert.equal(authorizeScope(scoped(merged), request, d()).denied, false);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a key scoped to this cluster denies nothing", () => {
    fc.assert(
      fc.property(arbitraryScope, arbitraryRequest, (scope, request) => {
        const k = scoped({ ...scope, clusters: [...(scope.clusters ?? []), { cluster: "east" }] });
        assert.equal(
          authorizeScope(k, request, deps({ namespaces: namespaceLabels(false) })).denied,
          false,
        );
      }),
    );
  });
});
