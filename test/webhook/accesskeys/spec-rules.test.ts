import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import type { Operation } from "../../../webhook/src/admission/review.js";
import type { KeyRequest } from "../../../webhook/src/accesskeys/request.js";
import { keyWarnings, validateKeySpec } from "../../../webhook/src/accesskeys/spec-rules.js";

const key = (extra: Record<string, unknown>): OwnedAccessKey =>
  ({
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name: "ci-key" },
    spec: { user: "alice", type: "User" },
    ...extra,
  }) as OwnedAccessKey;

function request(
  operation: Operation,
  object: OwnedAccessKey | null,
  oldObject: OwnedAccessKey | null = null,
): KeyRequest {
  return {
    operation,
    object,
    oldObject,
    name: "ci-key",
    userInfo: { username: "alice", groups: [] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
  };
}

const bad = key({ apiVersion: "management.loft.sh/v2", spec: { type: "Bogus", ttl: -1 } });

describe("validateKeySpec", () => {
  it("requires a ttl of a key that logs in as a service account, on CREATE and UPDATE", () => {
    const sa = "system:serviceaccount:ci:bot";
    for (const spec of [
      { user: sa },
      { subject: sa },
      { user: sa, ttl: 0 },
      { subject: sa, ttl: "1d" },
    ]) {
      for (const op of ["CREATE", "UPDATE"] as const) {
        const errors = validateKeySpec(request(op, key({ spec: { type: "User", ...spec } }))).map(
          fieldErrorText,
        );
        assert.ok(
          errors.includes(
            "spec.ttl: Required value: a key that logs in as a service account must expire: set spec.ttl (seconds), e.g. 86400",
          ),
          JSON.stringify([spec, errors]),
        );
      }
    }
    assert.deepEqual(
      validateKeySpec(request("CREATE", key({ spec: { user: sa, ttl: 3600 } }))),
      [],
    );
    // Other system: users and people need none.
    assert.deepEqual(
      validateKeySpec(request("CREATE", key({ spec: { user: "system:node:w1" } }))),
      [],
    );
    assert.deepEqual(validateKeySpec(request("CREATE", key({ spec: { user: "alice" } }))), []);
  });

  it("accepts a valid object on CREATE and UPDATE", () => {
    assert.deepEqual(validateKeySpec(request("CREATE", key({}))), []);
    assert.deepEqual(validateKeySpec(request("UPDATE", key({}), key({}))), []);
  });

  it("reports type meta and spec errors on CREATE and UPDATE", () => {
    const expected = [
      'apiVersion: Unsupported value: "management.loft.sh/v2": supported values: "management.loft.sh/v1"',
      "spec.ttl: Invalid value: -1: must be greater than or equal to 0",
      'spec.type: Unsupported value: "Bogus": supported values: "Login", "User", "Other", "Reset", "OIDCRefreshToken", "NetworkPeer", "Workspace"',
    ];
    assert.deepEqual(validateKeySpec(request("CREATE", bad)).map(fieldErrorText), expected);
    assert.deepEqual(
      validateKeySpec(request("UPDATE", bad, key({}))).map(fieldErrorText),
      expected,
    );
  });

  it("does not check DELETE or CONNECT, nor a missing object", () => {
    assert.deepEqual(validateKeySpec(request("DELETE", null, bad)), []);
    assert.deepEqual(validateKeySpec(request("CONNECT", bad)), []);
    assert.deepEqual(validateKeySpec(request("CREATE", null)), []);
  });

  it("checks the spec as a whole", () => {
    const errors = validateKeySpec(request("CREATE", key({ spec: "x" })));
    assert.deepEqual(errors.map(fieldErrorText), ["spec: Invalid value: must be of type object"]);
  });
});

describe("keyWarnings", () => {
  it("says nothing for a key without deprecated fields or unknown roles", () => {
    const obj = key({ spec: { user: "alice", scope: { roles: [{ role: "vcluster" }] } } });
    assert.deepEqual(keyWarnings(request("CREATE", obj)), []);
  });

  it("collects deprecation and scope warnings", () => {
    const obj = key({ spec: { rules: [{}], scope: { roles: [{ role: "superuser" }] } } });
    assert.deepEqual(keyWarnings(request("UPDATE", obj, key({}))), [
      "spec.rules is deprecated; use spec.scope instead",
      'spec.scope.roles[0].role: unknown role "superuser"; built-in roles include vcluster, loft-cli, agent',
    ]);
  });

  it("has nothing to say on DELETE or without an object", () => {
    const obj = key({ spec: { parent: "p" } });
    assert.deepEqual(keyWarnings(request("DELETE", null, obj)), []);
    assert.deepEqual(keyWarnings(request("CREATE", null)), []);
    assert.deepEqual(keyWarnings(request("CREATE", key({ spec: 5 }))), []);
  });
});
