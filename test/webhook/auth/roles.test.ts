import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { KubeError } from "../../../webhook/src/shared/status.js";
import {
  policyRulesAllow,
  type RequestAttributes,
} from "../../../webhook/src/auth/policy-rule-match.js";
import {
  builtInRoles,
  LOFT_CLI_ROLE,
  MAX_ROLES,
  MAX_ROLES_FILE_BYTES,
  MAX_RULES_PER_ROLE,
  parseRolesFile,
} from "../../../webhook/src/auth/roles.js";

const DOMAIN = "loft.sh";

/** The message of the error parseRolesFile throws for `text`. */
function errorOf(text: string): string {
  try {
    parseRolesFile(text, DOMAIN);
  } catch (err) {
    assert.ok(err instanceof KubeError, String(err));
    assert.equal(err.code, 400);
    assert.equal(err.reason, "BadRequest");
    return err.message;
  }
  assert.fail("expected the roles file to be rejected");
}

const req = (
  verb: string,
  group: string,
  resource: string,
  subresource = "",
): RequestAttributes => ({
  resourceAttributes: {
    namespace: "",
    verb,
    group,
    version: "v1",
    resource,
    subresource,
    name: "",
  },
});

describe("parseRolesFile", () => {
  it("reads the documented format", () => {
    const roles = parseRolesFile(
      `roles:
  - name: deployer
    rules:
      - apiGroups: ["apps"]
        resources: ["deployments", "deployments/scale"]
        verbs: ["get", "list", "watch", "update", "patch"]
  - name: health
    rules:
      - nonResourceURLs: ["/healthz", "/readyz"]
        verbs: ["get"]
`,
      DOMAIN,
    );
    assert.deepEqual(roles.get("deployer"), [
      {
        apiGroups: ["apps"],
        resources: ["deployments", "deployments/scale"],
        resourceNames: [],
        nonResourceURLs: [],
        verbs: ["get", "list", "watch", "update", "patch"],
      },
    ]);
    assert.deepEqual(roles.names().sort(), ["deployer", "health", "loft-cli"]);
    assert.equal(roles.get("nope"), undefined);
    assert.equal(roles.get("__proto__"), undefined);
    assert.equal(
      policyRulesAllow(roles.get("deployer")!, req("patch", "apps", "deployments", "scale")),
      true,
    );
    assert.equal(
      policyRulesAllow(roles.get("deployer")!, req("delete", "apps", "deployments")),
      false,
    );
  });

  it("accepts JSON, an empty file and a file without roles", () => {
    assert.deepEqual(
      parseRolesFile(
        '{"roles":[{"name":"r","rules":[{"verbs":["get"],"nonResourceURLs":["/x"]}]}]}',
        DOMAIN,
      )
        .names()
        .sort(),
      ["loft-cli", "r"],
    );
    assert.deepEqual(parseRolesFile("", DOMAIN).names(), [LOFT_CLI_ROLE]);
    assert.deepEqual(parseRolesFile("roles: []\n", DOMAIN).names(), [LOFT_CLI_ROLE]);
  });

  it("returns frozen rules", () => {
    const rules = parseRolesFile(
      "roles: [{name: r, rules: [{verbs: [get], apiGroups: [''], resources: [pods]}]}]",
      DOMAIN,
    ).get("r")!;
    assert.ok(Object.isFrozen(rules));
    assert.ok(Object.isFrozen(rules[0]));
  });

  const bad: [string, string, string][] = [
    [
      "empty verbs",
      "roles: [{name: r, rules: [{apiGroups: [''], resources: [pods], verbs: []}]}]",
      "roles[0].rules[0].verbs: Required value: verbs must contain at least one value",
    ],
    [
      "missing verbs",
      "roles: [{name: a, rules: []}, {name: r, rules: [{apiGroups: [''], resources: [pods]}]}]",
      "roles[1].rules[0].verbs: Required value",
    ],
    [
      "no apiGroups",
      "roles: [{name: r, rules: [{resources: [pods], verbs: [get]}]}]",
      "roles[0].rules[0].apiGroups: Required value: resource rules must supply at least one api group",
    ],
    [
      "no resources",
      "roles: [{name: r, rules: [{apiGroups: [''], verbs: [get]}]}]",
      "roles[0].rules[0].resources: Required value: resource rules must supply at least one resource",
    ],
    [
      "resourceNames with nonResourceURLs",
      "roles: [{name: r, rules: [{nonResourceURLs: [/x], resourceNames: [a], verbs: [get]}]}]",
      'roles[0].rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      "duplicate names",
      "roles: [{name: r, rules: []}, {name: r, rules: []}]",
      'roles[1].name: Duplicate value: "r"',
    ],
    [
      "loft-cli redefined",
      "roles: [{name: loft-cli, rules: []}]",
      'roles[0].name: Forbidden: "loft-cli" is a built-in role and cannot be redefined',
    ],
    ["missing name", "roles: [{rules: []}]", "roles[0].name: Required value"],
    [
      "name not a string",
      "roles: [{name: 1, rules: []}]",
      "roles[0].name: Invalid value: 1: must be of type string",
    ],
    ["missing rules", "roles: [{name: r}]", "roles[0].rules: Required value"],
    [
      "rules not a list",
      "roles: [{name: r, rules: {}}]",
      "roles[0].rules: Invalid value: {}: must be of type array",
    ],
    [
      "verbs not strings",
      "roles: [{name: r, rules: [{verbs: [1], nonResourceURLs: [/x]}]}]",
      "roles[0].rules[0].verbs[0]: Invalid value: 1: must be of type string",
    ],
    [
      "unknown rule field",
      "roles: [{name: r, rules: [{verb: [get], verbs: [get], nonResourceURLs: [/x]}]}]",
      "roles[0].rules[0].verb: Forbidden: unknown field",
    ],
    [
      "unknown role field",
      "roles: [{name: r, rule: [], rules: []}]",
      "roles[0].rule: Forbidden: unknown field",
    ],
    ["unknown top-level field", "role: []\nroles: []", "role: Forbidden: unknown field"],
    ["roles not a list", "roles: {}", "roles: Invalid value: {}: must be of type array"],
    ["document not an object", "- a", '<document>: Invalid value: ["a"]: must be of type object'],
    ["role not an object", "roles: [r]", 'roles[0]: Invalid value: "r": must be of type object'],
    ["YAML syntax", "roles: [", "roles file"],
    ["two documents", "roles: []\n---\nroles: []\n", "more than one YAML document"],
  ];
  for (const [name, text, expected] of bad) {
    it(`rejects ${name}`, () => {
      const message = errorOf(text);
      assert.ok(message.startsWith("invalid roles file: "), message);
      assert.ok(message.includes(expected), message);
    });
  }

  it("reports every problem at once, with causes", () => {
    try {
      parseRolesFile("roles: [{name: r, rules: [{}]}, {name: r, rules: []}]", DOMAIN);
      assert.fail("expected an error");
    } catch (err) {
      assert.ok(err instanceof KubeError);
      const fields = err.causes.map((c) => c.field);
      assert.deepEqual(fields, [
        "roles[0].rules[0].verbs",
        "roles[0].rules[0].apiGroups",
        "roles[0].rules[0].resources",
        "roles[1].name",
      ]);
    }
  });

  it("rejects oversized files", () => {
    const big = `# ${"x".repeat(MAX_ROLES_FILE_BYTES)}\nroles: []`;
    assert.match(errorOf(big), /larger than 1048576 bytes/);
    const multibyte = `# ${"é".repeat(MAX_ROLES_FILE_BYTES / 2)}\nroles: []`;
    assert.match(errorOf(multibyte), /larger than/);
  });

  it("rejects more than 1,000 roles or rules", () => {
    const roles = Array.from({ length: MAX_ROLES + 1 }, (_, i) => ({ name: `r${i}`, rules: [] }));
    assert.match(
      errorOf(JSON.stringify({ roles })),
      /roles: Too many: 1001: must have at most 1000 items/,
    );
    const rules = Array.from({ length: MAX_RULES_PER_ROLE + 1 }, () => ({
      verbs: ["get"],
      nonResourceURLs: ["/x"],
    }));
    assert.match(
      errorOf(JSON.stringify({ roles: [{ name: "r", rules }] })),
      /roles\[0\].rules: Too many/,
    );
    const atLimit = Array.from({ length: MAX_ROLES }, (_, i) => ({ name: `r${i}`, rules: [] }));
    assert.equal(
      parseRolesFile(JSON.stringify({ roles: atLimit }), DOMAIN).names().length,
      MAX_ROLES + 1,
    );
  });

  it("rejects an alias bomb", () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      lines.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(",")}]`);
    }
    lines.push("roles: []");
    assert.match(errorOf(lines.join("\n")), /aliases/);
  });

  it("rejects deep nesting without overflowing the stack", () => {
    assert.match(errorOf(`roles: ${"[".repeat(100_000)}`), /invalid roles file/);
  });

  it("keeps __proto__ keys as data and rejects them as unknown fields", () => {
    const message = errorOf('{"roles":[{"name":"r","rules":[],"__proto__":{"x":1}}]}');
    assert.match(message, /roles\[0\].__proto__: Forbidden: unknown field/);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  it("allows a role named __proto__ or constructor and finds it", () => {
    const roles = parseRolesFile(
      "roles: [{name: __proto__, rules: [{verbs: [get], nonResourceURLs: [/x]}]}, {name: constructor, rules: []}]",
      DOMAIN,
    );
    assert.equal(roles.get("__proto__")?.length, 1);
    assert.deepEqual(roles.get("constructor"), []);
  });

  it("bounds long field names and values in messages", () => {
    const message = errorOf(`roles: [{name: r, rules: [], ${"k".repeat(10_000)}: 1}]`);
    assert.ok(message.length < 300, message);
    assert.match(
      errorOf(`roles: [{name: ${"n".repeat(300)}, rules: []}]`),
      /Too long: may not be more than 253 bytes/,
    );
  });
});

describe("built-in role loft-cli", () => {
  const rules = builtInRoles(DOMAIN).get(LOFT_CLI_ROLE)!;
  const allows = (r: RequestAttributes) => policyRulesAllow(rules, r);

  const cases: [string, RequestAttributes, boolean][] = [
    ["get any management resource", req("get", "management.loft.sh", "projects"), true],
    ["list management subresource", req("list", "management.loft.sh", "clusters", "status"), true],
    ["watch management", req("watch", "management.loft.sh", "ownedaccesskeys"), true],
    ["create selves", req("create", "management.loft.sh", "selves"), true],
    ["create other management resources", req("create", "management.loft.sh", "projects"), false],
    ["delete management", req("delete", "management.loft.sh", "projects"), false],
    ["selfsubjectreviews", req("create", "authentication.k8s.io", "selfsubjectreviews"), true],
    [
      "selfsubjectaccessreviews",
      req("create", "authorization.k8s.io", "selfsubjectaccessreviews"),
      true,
    ],
    [
      "selfsubjectrulesreviews",
      req("create", "authorization.k8s.io", "selfsubjectrulesreviews"),
      true,
    ],
    ["subjectaccessreviews", req("create", "authorization.k8s.io", "subjectaccessreviews"), false],
    ["core pods", req("get", "", "pods"), false],
    ["another group domain", req("get", "management.example.com", "projects"), false],
  ];
  for (const [name, request, expected] of cases) {
    it(`${expected ? "allows" : "does not allow"} ${name}`, () =>
      assert.equal(allows(request), expected));
  }

  it("follows the group domain", () => {
    const other = builtInRoles("example.com").get(LOFT_CLI_ROLE)!;
    assert.equal(policyRulesAllow(other, req("get", "management.example.com", "projects")), true);
    assert.equal(policyRulesAllow(other, req("get", "management.loft.sh", "projects")), false);
  });

  it("is present in every parsed roles file", () => {
    assert.deepEqual(parseRolesFile("roles: []", DOMAIN).get(LOFT_CLI_ROLE), rules);
  });
});
