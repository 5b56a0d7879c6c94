import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  KNOWN_ROLES,
  scopeWarnings,
  validateScope,
} from "../../../webhook/src/accesskeys/scope.js";

const errorsFor = (scope: unknown): string[] =>
  validateScope(scope, "spec.scope").map(fieldErrorText);
const WILDCARD = `"*" is the only wildcard and must be the whole value; patterns such as "dev-*" are not supported`;

describe("validateScope", () => {
  it("accepts an absent, null or empty scope", () => {
    assert.deepEqual(errorsFor(undefined), []);
    assert.deepEqual(errorsFor(null), []);
    assert.deepEqual(errorsFor({}), []);
  });

  it("rejects a scope that is not an object", () => {
    assert.deepEqual(errorsFor("all"), [
      'spec.scope: Invalid value: "all": must be of type object',
    ]);
    assert.deepEqual(errorsFor([]), ["spec.scope: Invalid value: []: must be of type object"]);
  });

  it("accepts complete entries, with * as a whole value", () => {
    assert.deepEqual(
      errorsFor({
        roles: [
          { role: "vcluster", projects: ["p1", "*"], virtualClusters: ["vc1", "*"] },
          { role: "loft-cli" },
        ],
        projects: [{ project: "p1" }, { project: "*" }],
        spaces: [{ project: "p1", space: "*" }],
        virtualClusters: [{ project: "*", virtualCluster: "*" }],
        clusters: [{ cluster: "*" }, { cluster: "c1" }],
        allowLoftCli: true,
      }),
      [],
    );
  });

  describe("required names", () => {
    const cases: [string, unknown, string[]][] = [
      ["roles", [{}], ["spec.scope.roles[0].role: Required value"]],
      ["roles", [{ role: "" }], ["spec.scope.roles[0].role: Required value"]],
      ["projects", [{ project: "" }], ["spec.scope.projects[0].project: Required value"]],
      ["spaces", [{ project: "p" }], ["spec.scope.spaces[0].space: Required value"]],
      ["spaces", [{ space: "s" }], ["spec.scope.spaces[0].project: Required value"]],
      [
        "virtualClusters",
        [{ project: "p", virtualCluster: "v" }, {}],
        [
          "spec.scope.virtualClusters[1].project: Required value",
          "spec.scope.virtualClusters[1].virtualCluster: Required value",
        ],
      ],
      ["clusters", [{ cluster: null }], ["spec.scope.clusters[0].cluster: Required value"]],
    ];
    for (const [list, value, expected] of cases) {
      it(`${list}: ${JSON.stringify(value)}`, () => {
        assert.deepEqual(errorsFor({ [list]: value }), expected);
      });
    }
  });

  describe("types", () => {
    it("rejects wrong types in every field", () => {
      assert.deepEqual(
        errorsFor({
          roles: [{ role: 5, projects: "p", virtualClusters: [1] }, "vcluster"],
          projects: { project: "p" },
          spaces: [{ project: 1, space: true }],
          virtualClusters: [null],
          clusters: [{ cluster: ["c"] }],
          rules: "get",
          allowLoftCli: "true",
        }),
        [
          "spec.scope.roles[0].role: Invalid value: 5: must be of type string",
          'spec.scope.roles[0].projects: Invalid value: "p": must be of type array',
          "spec.scope.roles[0].virtualClusters[0]: Invalid value: 1: must be of type string",
          'spec.scope.roles[1]: Invalid value: "vcluster": must be of type object',
          'spec.scope.projects: Invalid value: {"project":"p"}: must be of type array',
          "spec.scope.spaces[0].project: Invalid value: 1: must be of type string",
          "spec.scope.spaces[0].space: Invalid value: true: must be of type string",
          "spec.scope.virtualClusters[0]: Invalid value: null: must be of type object",
          'spec.scope.clusters[0].cluster: Invalid value: ["c"]: must be of type string',
          'spec.scope.rules: Invalid value: "get": must be of type array',
          'spec.scope.allowLoftCli: Invalid value: "true": must be of type boolean',
        ],
      );
    });
  });

  describe("wildcards", () => {
    it("rejects a glob in a target name", () => {
      assert.deepEqual(errorsFor({ projects: [{ project: "dev-*" }] }), [
        `spec.scope.projects[0].project: Invalid value: "dev-*": ${WILDCARD}`,
      ]);
    });
    it("rejects globs everywhere a name is given", () => {
      const errors = validateScope(
        {
          roles: [{ role: "vcluster", projects: ["p*"], virtualClusters: ["**"] }],
          spaces: [{ project: "*p", space: "s*" }],
          virtualClusters: [{ project: "p", virtualCluster: "v*c" }],
          clusters: [{ cluster: "*-prod" }],
        },
        "spec.scope",
      );
      assert.deepEqual(
        errors.map((e) => e.field),
        [
          "spec.scope.roles[0].projects[0]",
          "spec.scope.roles[0].virtualClusters[0]",
          "spec.scope.spaces[0].project",
          "spec.scope.spaces[0].space",
          "spec.scope.virtualClusters[0].virtualCluster",
          "spec.scope.clusters[0].cluster",
        ],
      );
      assert.ok(errors.every((e) => e.type === "Invalid" && e.detail === WILDCARD));
    });
  });

  it("validates the deprecated scope.rules", () => {
    assert.deepEqual(errorsFor({ rules: [{ nonResourceURLs: ["metrics"] }] }), [
      `spec.scope.rules[0].nonResourceURLs[0]: Invalid value: "metrics": non-resource URL rules must begin with a '/' character`,
    ]);
    assert.deepEqual(errorsFor({ rules: [{ nonResourceURLs: ["/metrics"] }] }), []);
  });

  it("uses the path it is given", () => {
    assert.equal(validateScope({ clusters: [{}] }, "x")[0]?.field, "x.clusters[0].cluster");
  });
});

describe("scopeWarnings", () => {
  it("says nothing for known roles", () => {
    assert.deepEqual(
      scopeWarnings({ roles: KNOWN_ROLES.map((role) => ({ role })) }, "spec.scope"),
      [],
    );
  });

  it("warns about each unknown role, briefly", () => {
    const warnings = scopeWarnings(
      { roles: [{ role: "vcluster" }, { role: "loftCLI" }, { role: "admin" }] },
      "spec.scope",
    );
    assert.deepEqual(warnings, [
      'spec.scope.roles[1].role: unknown role "loftCLI"; built-in roles include vcluster, loft-cli, agent',
      'spec.scope.roles[2].role: unknown role "admin"; built-in roles include vcluster, loft-cli, agent',
    ]);
    assert.ok(
      warnings.every((w) => w.length <= 120),
      warnings.join("\n"),
    );
  });

  it("cuts a long role name", () => {
    const [warning] = scopeWarnings({ roles: [{ role: "r".repeat(1000) }] }, "spec.scope");
    assert.ok(warning!.length <= 120, warning);
    assert.match(warning!, /"r{24}\.\.\."/);
  });

  it("ignores malformed input (validation reports it)", () => {
    for (const scope of [
      undefined,
      "x",
      { roles: "x" },
      { roles: [null, 5, { role: 5 }, { role: "" }] },
    ]) {
      assert.deepEqual(scopeWarnings(scope, "spec.scope"), []);
    }
  });
});
