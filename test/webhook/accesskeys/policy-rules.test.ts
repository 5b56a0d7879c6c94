import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import { resourcesOverlap, validateRules } from "../../../webhook/src/accesskeys/policy-rules.js";

const errorsFor = (rules: unknown): string[] =>
  validateRules(rules, "spec.rules").map(fieldErrorText);
const resourcesErrors = (resources: string[]): string[] =>
  errorsFor([{ resources: [{ group: "apps", resources }] }]);
const URL_WILDCARD = `non-resource URL wildcards '*' must be the full final path step, as in "/healthz/*"`;

describe("validateRules", () => {
  it("accepts absent, null and empty rules", () => {
    assert.deepEqual(errorsFor(undefined), []);
    assert.deepEqual(errorsFor(null), []);
    assert.deepEqual(errorsFor([]), []);
    assert.deepEqual(errorsFor([{}]), []);
  });

  it("accepts a rule using every field", () => {
    assert.deepEqual(
      errorsFor([
        {
          verbs: ["*"],
          resources: [{ group: "", resources: ["pods", "pods/log"], resourceNames: ["web"] }],
          namespaces: ["", "default"],
          nonResourceURLs: ["*", "/metrics", "/healthz/*", "/*"],
          requestTargets: ["Management", "Cluster", "ProjectSpace", "ProjectVirtualCluster"],
          cluster: "c1",
          virtualClusters: [{ name: "vc", namespace: "ns" }, {}],
        },
      ]),
      [],
    );
  });

  it("rejects wrong types in every field", () => {
    assert.deepEqual(
      errorsFor([
        {
          verbs: "get",
          resources: [{ group: 1, resources: "pods", resourceNames: [2] }, "pods"],
          namespaces: [null],
          nonResourceURLs: { url: "/" },
          requestTargets: [1],
          cluster: false,
          virtualClusters: [{ name: 1, namespace: [] }, 3],
        },
        "rule",
      ]),
      [
        'spec.rules[0].verbs: Invalid value: "get": must be of type array',
        "spec.rules[0].resources[0].group: Invalid value: 1: must be of type string",
        'spec.rules[0].resources[0].resources: Invalid value: "pods": must be of type array',
        "spec.rules[0].resources[0].resourceNames[0]: Invalid value: 2: must be of type string",
        'spec.rules[0].resources[1]: Invalid value: "pods": must be of type object',
        "spec.rules[0].namespaces[0]: Invalid value: null: must be of type string",
        'spec.rules[0].nonResourceURLs: Invalid value: {"url":"/"}: must be of type array',
        "spec.rules[0].requestTargets[0]: Invalid value: 1: must be of type string",
        "spec.rules[0].cluster: Invalid value: false: must be of type string",
        "spec.rules[0].virtualClusters[0].name: Invalid value: 1: must be of type string",
        "spec.rules[0].virtualClusters[0].namespace: Invalid value: []: must be of type string",
        "spec.rules[0].virtualClusters[1]: Invalid value: 3: must be of type object",
        'spec.rules[1]: Invalid value: "rule": must be of type object',
      ],
    );
    assert.deepEqual(errorsFor({ verbs: [] }), [
      'spec.rules: Invalid value: {"verbs":[]}: must be of type array',
    ]);
  });

  describe("resourceNames needs resources", () => {
    it("accepts resourceNames with resources", () => {
      assert.deepEqual(
        errorsFor([{ resources: [{ resources: ["pods"], resourceNames: ["a"] }] }]),
        [],
      );
    });
    it("accepts empty resourceNames without resources", () => {
      assert.deepEqual(errorsFor([{ resources: [{ resources: [], resourceNames: [] }] }]), []);
    });
    it("rejects resourceNames without resources", () => {
      for (const resources of [undefined, []]) {
        assert.deepEqual(
          errorsFor([{ resources: [{ group: "", resources, resourceNames: ["a", "b"] }] }]),
          [
            'spec.rules[0].resources[0].resourceNames: Invalid value: ["a","b"]: using resourceNames requires at least one resource',
          ],
        );
      }
    });
  });

  describe("overlapping resources with a wildcard", () => {
    it("accepts distinct entries without a wildcard, even duplicates", () => {
      assert.deepEqual(resourcesErrors(["deployments", "deployments/scale", "deployments"]), []);
    });
    it("accepts non-overlapping wildcards", () => {
      assert.deepEqual(resourcesErrors(["pods/*", "deployments/scale", "pods"]), []);
      assert.deepEqual(resourcesErrors(["*/scale", "pods/log", "deployments"]), []);
    });
    it("rejects anything next to *", () => {
      assert.deepEqual(resourcesErrors(["*", "pods", "pods/log"]), [
        'spec.rules[0].resources[0].resources[1]: Invalid value: "pods": overlaps "*"; with a wildcard, entries must not overlap',
        'spec.rules[0].resources[0].resources[2]: Invalid value: "pods/log": overlaps "*"; with a wildcard, entries must not overlap',
      ]);
      assert.deepEqual(resourcesErrors(["pods", "*"]), [
        'spec.rules[0].resources[0].resources[1]: Invalid value: "*": overlaps "pods"; with a wildcard, entries must not overlap',
      ]);
    });
    it("rejects pods/log next to pods/*", () => {
      assert.deepEqual(resourcesErrors(["pods/*", "pods/log"]), [
        'spec.rules[0].resources[0].resources[1]: Invalid value: "pods/log": overlaps "pods/*"; with a wildcard, entries must not overlap',
      ]);
    });
    it("rejects deployments/scale next to */scale, and names every earlier overlap", () => {
      assert.deepEqual(resourcesErrors(["*/scale", "deployments/*", "deployments/scale"]), [
        'spec.rules[0].resources[0].resources[1]: Invalid value: "deployments/*": overlaps "*/scale"; with a wildcard, entries must not overlap',
        'spec.rules[0].resources[0].resources[2]: Invalid value: "deployments/scale": overlaps "*/scale", "deployments/*"; with a wildcard, entries must not overlap',
      ]);
    });
    it("rejects exact duplicates when a wildcard is present", () => {
      assert.deepEqual(resourcesErrors(["pods/*", "services", "services"]), [
        'spec.rules[0].resources[0].resources[2]: Invalid value: "services": overlaps "services"; with a wildcard, entries must not overlap',
      ]);
    });
    it("checks each group entry on its own", () => {
      assert.deepEqual(
        errorsFor([{ resources: [{ resources: ["*"] }, { resources: ["pods"] }] }]),
        [],
      );
    });
    it("skips non-string entries (reported as wrong types)", () => {
      assert.deepEqual(resourcesErrors(["*", 5 as unknown as string]), [
        "spec.rules[0].resources[0].resources[1]: Invalid value: 5: must be of type string",
      ]);
    });
  });

  describe("resourcesOverlap", () => {
    const cases: [string, string, boolean][] = [
      ["*", "anything/at-all", true],
      ["pods", "pods", true],
      ["pods", "pods/log", false],
      ["pods/*", "pods", false],
      ["pods/*", "pods/log", true],
      ["pods/*", "services/log", false],
      ["*/scale", "deployments/scale", true],
      ["*/scale", "deployments/status", false],
      ["*/scale", "pods/*", true],
      ["*/scale", "deployments", false],
    ];
    for (const [a, b, expected] of cases) {
      it(`${a} ${expected ? "overlaps" : "does not overlap"} ${b}`, () => {
        assert.equal(resourcesOverlap(a, b), expected);
        assert.equal(resourcesOverlap(b, a), expected);
      });
    }
    it("is symmetric and reflexive", () => {
      const segment = fc.constantFrom("*", "pods", "log", "scale");
      const resource = fc.oneof(
        segment,
        fc.tuple(segment, segment).map(([r, s]) => `${r}/${s}`),
      );
      fc.assert(
        fc.property(resource, resource, (a, b) => {
          assert.equal(resourcesOverlap(a, b), resourcesOverlap(b, a));
          assert.equal(resourcesOverlap(a, a), true);
        }),
      );
    });
  });

  describe("nonResourceURLs", () => {
    it("accepts *, paths and a final /*", () => {
      assert.deepEqual(
        errorsFor([{ nonResourceURLs: ["*", "/", "/metrics", "/healthz/*", "/*"] }]),
        [],
      );
    });
    it("requires a leading /", () => {
      assert.deepEqual(errorsFor([{ nonResourceURLs: ["metrics", ""] }]), [
        `spec.rules[0].nonResourceURLs[0]: Invalid value: "metrics": non-resource URL rules must begin with a '/' character`,
        `spec.rules[0].nonResourceURLs[1]: Invalid value: "": non-resource URL rules must begin with a '/' character`,
      ]);
    });
    it("allows * only as the full final path step", () => {
      assert.deepEqual(errorsFor([{ nonResourceURLs: ["/foo*", "/*/bar", "/a/**"] }]), [
        `spec.rules[0].nonResourceURLs[0]: Invalid value: "/foo*": ${URL_WILDCARD}`,
        `spec.rules[0].nonResourceURLs[1]: Invalid value: "/*/bar": ${URL_WILDCARD}`,
        `spec.rules[0].nonResourceURLs[2]: Invalid value: "/a/**": ${URL_WILDCARD}`,
      ]);
    });
    it("reports both problems of one URL", () => {
      assert.equal(errorsFor([{ nonResourceURLs: ["*/x"] }]).length, 2);
    });
  });

  describe("requestTargets", () => {
    it("rejects unknown targets", () => {
      assert.deepEqual(errorsFor([{ requestTargets: ["Cluster", "cluster"] }]), [
        'spec.rules[0].requestTargets[1]: Unsupported value: "cluster": supported values: "Management", "Cluster", "ProjectSpace", "ProjectVirtualCluster"',
      ]);
    });
  });
});
