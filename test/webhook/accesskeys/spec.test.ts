import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  fieldErrorText,
  OMIT_VALUE,
  type FieldError,
} from "../../../webhook/src/shared/field-errors.js";
import { isRfc3339, validateSpec } from "../../../webhook/src/accesskeys/spec.js";

const texts = (errors: FieldError[]): string[] => errors.map(fieldErrorText);
const errorsFor = (spec: unknown): string[] => texts(validateSpec(spec));

/** A spec that sets every field of docs/reference.md#ownedaccesskey-fields to a valid value. */
const FULL_SPEC = {
  displayName: "CI key",
  description: "used by the pipeline",
  user: "alice",
  team: "devs",
  subject: "loft:metrics-writer:p-default:my-vcluster",
  groups: ["loft:system:metrics-writers"],
  key: "k3y",
  disabled: false,
  ttl: 1728000,
  ttlAfterLastActivity: true,
  scope: {
    roles: [{ role: "vcluster", projects: ["p1"], virtualClusters: ["*"] }],
    projects: [{ project: "*" }],
    spaces: [{ project: "p1", space: "s1" }],
    virtualClusters: [{ project: "p1", virtualCluster: "vc1" }],
    clusters: [{ cluster: "c1" }],
    rules: [{ verbs: ["get"] }],
    allowLoftCli: true,
  },
  rules: [
    {
      verbs: ["get", "list"],
      resources: [{ group: "", resources: ["pods", "pods/log"], resourceNames: ["a"] }],
      namespaces: ["default", ""],
      nonResourceURLs: ["/healthz/*"],
      requestTargets: ["Management", "Cluster"],
      cluster: "c1",
      virtualClusters: [{ name: "vc1", namespace: "ns" }],
    },
  ],
  allowLoftCli: false,
  type: "User",
  identity: {
    userId: "u-1",
    username: "alice",
    preferredUsername: "Alice",
    email: "alice@example.com",
    emailVerified: true,
    groups: ["g1"],
    connector: "github",
    connectorData: "c2VjcmV0",
    extraClaims: { org: "acme" },
  },
  identityRefresh: "2025-01-01T00:00:00Z",
  oidcProvider: { clientId: "c", nonce: "n", redirectUri: "https://x/cb", scopes: "openid" },
  parent: "other-key",
  oidcLogin: {
    idToken: "aWQ=",
    accessToken: "YWNj",
    refreshToken: "cmVmcmVzaA==",
    lastRefresh: "2025-01-01T00:00:00.123+02:00",
  },
};

describe("validateSpec", () => {
  it("accepts a spec that sets every field", () => {
    assert.deepEqual(errorsFor(FULL_SPEC), []);
  });

  it("accepts an absent or empty spec, and null fields (pruned by kube)", () => {
    assert.deepEqual(errorsFor(undefined), []);
    assert.deepEqual(errorsFor(null), []);
    assert.deepEqual(errorsFor({}), []);
    assert.deepEqual(errorsFor({ user: null, ttl: null, identityRefresh: null, scope: null }), []);
  });

  it("ignores unknown fields, including prototype names", () => {
    const spec = JSON.parse('{"unknownField": 5, "__proto__": 1, "constructor": 2}') as unknown;
    assert.deepEqual(errorsFor(spec), []);
  });

  it("rejects a spec that is not an object without echoing it", () => {
    for (const spec of ["key-material", 5, ["x"], true]) {
      const errors = validateSpec(spec);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.type, "TypeInvalid");
      assert.equal(errors[0]!.badValue, OMIT_VALUE);
      assert.equal(fieldErrorText(errors[0]!), "spec: Invalid value: must be of type object");
    }
  });

  describe("wrong types in every field", () => {
    // [path under spec, wrong value, expected JSON type, is the value secret]
    const cases: [string, unknown, string, boolean][] = [
      ["displayName", 1, "string", false],
      ["description", true, "string", false],
      ["user", ["alice"], "string", false],
      ["team", { name: "devs" }, "string", false],
      ["subject", 7, "string", false],
      ["groups", "g1", "array", false],
      ["groups.0", 1, "string", false],
      ["key", 12345, "string", true],
      ["disabled", "true", "boolean", false],
      ["ttl", "10", "integer", false],
      ["ttlAfterLastActivity", 1, "boolean", false],
      ["scope", [], "object", false],
      ["rules", {}, "array", false],
      ["allowLoftCli", "yes", "boolean", false],
      ["type", 1, "string", false],
      ["identity", "x", "object", true],
      ["identity.userId", 1, "string", false],
      ["identity.username", 1, "string", false],
      ["identity.preferredUsername", 1, "string", false],
      ["identity.email", 1, "string", false],
      ["identity.emailVerified", "true", "boolean", false],
      ["identity.groups", "g", "array", false],
      ["identity.connector", 1, "string", false],
      ["identity.connectorData", 1, "string", true],
      ["identity.extraClaims", "x", "object", false],
      ["identityRefresh", 1735689600, "string", false],
      ["oidcProvider", "x", "object", false],
      ["oidcProvider.clientId", 1, "string", false],
      ["oidcProvider.nonce", 1, "string", false],
      ["oidcProvider.redirectUri", 1, "string", false],
      ["oidcProvider.scopes", ["openid"], "string", false],
      ["parent", 1, "string", false],
      ["oidcLogin", [], "object", true],
      ["oidcLogin.idToken", 1, "string", true],
      ["oidcLogin.accessToken", 1, "string", true],
      ["oidcLogin.refreshToken", 1, "string", true],
      ["oidcLogin.lastRefresh", 1, "string", false],
    ];
    for (const [path, value, type, secret] of cases) {
      it(`spec.${path}: ${JSON.stringify(value)} is not a ${type}`, () => {
        const spec = withValue(FULL_SPEC, path.split("."), value);
        const errors = validateSpec(spec);
        const field = `spec.${path.replace(/\.(\d+)/g, "[$1]")}`;
        assert.equal(errors.length, 1, texts(errors).join("\n"));
        const [error] = errors;
        assert.equal(error!.type, "TypeInvalid");
        assert.equal(error!.field, field);
        assert.equal(error!.detail, `must be of type ${type}`);
        assert.equal(error!.badValue, secret ? OMIT_VALUE : value);
      });
    }
  });

  describe("type", () => {
    it("accepts every AccessKeyType, including the empty one", () => {
      for (const type of [
        "",
        "Login",
        "User",
        "Other",
        "Reset",
        "OIDCRefreshToken",
        "NetworkPeer",
        "Workspace",
      ]) {
        assert.deepEqual(errorsFor({ type }), [], type);
      }
    });
    it("rejects an unknown type and lists the supported values", () => {
      assert.deepEqual(errorsFor({ type: "Bogus" }), [
        'spec.type: Unsupported value: "Bogus": supported values: "Login", "User", "Other", "Reset", "OIDCRefreshToken", "NetworkPeer", "Workspace"',
      ]);
    });
    it("is case-sensitive", () => {
      assert.equal(validateSpec({ type: "user" })[0]?.type, "NotSupported");
    });
  });

  describe("ttl", () => {
    it("accepts 0, the documented 1728000 and the largest safe integer", () => {
      for (const ttl of [0, 1728000, Number.MAX_SAFE_INTEGER])
        assert.deepEqual(errorsFor({ ttl }), []);
    });
    it("rejects a negative ttl", () => {
      assert.deepEqual(errorsFor({ ttl: -1 }), [
        "spec.ttl: Invalid value: -1: must be greater than or equal to 0",
      ]);
    });
    it("rejects a fraction", () => {
      assert.deepEqual(errorsFor({ ttl: 1.5 }), [
        "spec.ttl: Invalid value: 1.5: must be of type integer",
      ]);
    });
    it("rejects a number string", () => {
      assert.deepEqual(errorsFor({ ttl: "10" }), [
        'spec.ttl: Invalid value: "10": must be of type integer',
      ]);
    });
    it("rejects 2^53, which JSON cannot carry exactly", () => {
      assert.deepEqual(errorsFor({ ttl: 2 ** 53 }), [
        "spec.ttl: Invalid value: 9007199254740992: must be less than or equal to 9007199254740991; larger numbers lose precision",
      ]);
      const parsed = JSON.parse('{"ttl": 9007199254740993}') as unknown;
      assert.equal(validateSpec(parsed)[0]?.type, "Invalid");
    });
  });

  describe("timestamps", () => {
    it("accepts RFC 3339 date-times", () => {
      for (const t of [
        "2025-01-01T00:00:00Z",
        "2024-02-29T23:59:59.999999999-07:30",
        "2025-12-31T00:00:00+00:00",
      ]) {
        assert.deepEqual(errorsFor({ identityRefresh: t, oidcLogin: { lastRefresh: t } }), [], t);
      }
    });
    it("rejects other formats with an example", () => {
      assert.deepEqual(errorsFor({ identityRefresh: "2025-01-01" }), [
        'spec.identityRefresh: Invalid value: "2025-01-01": must be an RFC 3339 date-time such as "2025-01-01T00:00:00Z"',
      ]);
      assert.equal(
        validateSpec({ oidcLogin: { lastRefresh: "yesterday" } })[0]?.field,
        "spec.oidcLogin.lastRefresh",
      );
    });
    it("rejects what Go's time.Parse(time.RFC3339) rejects", () => {
      for (const t of [
        "2025-01-01 00:00:00Z",
        "2025-01-01t00:00:00z",
        "2025-13-01T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "2025-04-31T00:00:00Z",
        "2025-01-00T00:00:00Z",
        "2025-01-01T24:00:00Z",
        "2025-01-01T00:60:00Z",
        "2025-01-01T00:00:60Z",
        "2025-01-01T00:00:00+24:00",
        "2025-01-01T00:00:00+01:60",
        "2025-01-01T00:00:00",
        "2025-01-01T00:00:00.Z",
      ]) {
        assert.equal(isRfc3339(t), false, t);
      }
      assert.equal(isRfc3339("2000-02-29T00:00:00Z"), true);
      assert.equal(isRfc3339("1900-02-29T00:00:00Z"), false);
    });
  });

  describe("base64 []byte fields", () => {
    it("accepts padded standard base64, with line breaks, and the empty string", () => {
      for (const v of ["", "YQ==", "YWI=", "YWJj", "YWJj\nZGVm", "+/+/"]) {
        assert.deepEqual(errorsFor({ identity: { connectorData: v } }), [], v);
      }
    });
    it("rejects other text without echoing it", () => {
      for (const [path, v] of [
        ["connectorData", "not base64!"],
        ["connectorData", "YQ"],
        ["connectorData", "YW-j"],
      ] as const) {
        const errors = validateSpec({ identity: { [path]: v } });
        assert.deepEqual(texts(errors), [
          `spec.identity.${path}: Invalid value: must be a base64-encoded string`,
        ]);
      }
      for (const token of ["idToken", "accessToken", "refreshToken"]) {
        const errors = validateSpec({ oidcLogin: { [token]: "eyJ.a.b" } });
        assert.deepEqual(texts(errors), [
          `spec.oidcLogin.${token}: Invalid value: must be a base64-encoded string`,
        ]);
      }
    });
  });

  it("reports nested scope and rules errors under their paths", () => {
    assert.deepEqual(
      errorsFor({ scope: { projects: [{}] }, rules: [{ requestTargets: ["Nope"] }] }),
      [
        "spec.scope.projects[0].project: Required value",
        'spec.rules[0].requestTargets[0]: Unsupported value: "Nope": supported values: "Management", "Cluster", "ProjectSpace", "ProjectVirtualCluster"',
      ],
    );
  });

  it("never echoes a planted secret in any error text", () => {
    const secret = fc
      .string({ minLength: 8, maxLength: 40 })
      .filter((s) => s.trim().length >= 8)
      .map((s) => `SECRET${s}`);
    const junk = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
    );
    fc.assert(
      fc.property(secret, junk, fc.integer({ min: 0, max: 7 }), (s, other, where) => {
        const placements: unknown[] = [
          { key: s, ttl: other },
          { key: [s], type: other },
          { key: { s }, groups: other },
          { identity: { connectorData: s, email: other } },
          { identity: s },
          { oidcLogin: { idToken: s, accessToken: s, refreshToken: [s], lastRefresh: other } },
          { oidcLogin: [s] },
          [{ key: s }],
        ];
        const spec = placements[where];
        for (const text of texts(validateSpec(spec))) {
          assert.ok(!text.includes(s), `secret leaked in: ${text}`);
          assert.ok(
            !text.includes(JSON.stringify(s).slice(1, -1)),
            `escaped secret leaked in: ${text}`,
          );
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it("reports a wrong-typed secret (the property test is not vacuous)", () => {
    assert.equal(validateSpec({ key: ["SECRETabcdefgh"] }).length, 1);
    assert.equal(validateSpec({ identity: "SECRETabcdefgh" }).length, 1);
    assert.equal(validateSpec({ oidcLogin: { idToken: "SECRET!!" } }).length, 1);
  });
});

/** A deep copy of `obj` with `value` at `path` (numeric steps index arrays). */
function withValue(obj: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(obj) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  path.slice(0, -1).forEach((step) => {
    node = node[step] as Record<string, unknown>;
  });
  node[path[path.length - 1]!] = value;
  return copy;
}
