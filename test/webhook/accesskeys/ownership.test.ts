import assert from "node:assert/strict";
import { describe, it } from "mocha";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { checkOwnership } from "../../../webhook/src/accesskeys/ownership.js";
import type { Operation } from "../../../webhook/src/admission/review.js";
import type { KeyRequest } from "../../../webhook/src/accesskeys/request.js";

const key = (spec: Record<string, unknown>, name = "ci-key"): OwnedAccessKey =>
  ({
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name },
    spec,
  }) as OwnedAccessKey;

const own = key({ user: "alice", type: "User", key: "k" });
const bobs = key({ user: "bob", type: "User", key: "k" });

function request(
  operation: Operation,
  object: OwnedAccessKey | null,
  oldObject: OwnedAccessKey | null,
  overrides: Partial<KeyRequest> = {},
): KeyRequest {
  return {
    operation,
    object,
    oldObject,
    name: "ci-key",
    userInfo: { username: "alice", groups: ["system:authenticated"] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
    ...overrides,
  };
}

const PREFIX = 'ownedaccesskeys.management.loft.sh "ci-key" is forbidden: ';
const BASE = 'user "alice" may only manage access keys whose spec.user is "alice"';

function deniedWith(req: KeyRequest): string {
  const error = checkOwnership(req);
  assert.ok(error, "expected a denial");
  assert.equal(error.code, 403);
  assert.equal(error.reason, "Forbidden");
  assert.deepEqual(error.details, {
    name: error.details?.name,
    group: "management.loft.sh",
    kind: "ownedaccesskeys",
  });
  return error.message;
}

describe("checkOwnership", () => {
  describe("admins", () => {
    const admin = { isAdmin: true, userInfo: { username: "root", groups: ["system:masters"] } };
    it("may create, change and delete any key", () => {
      const team = key({ team: "devs", groups: ["g"], type: "Login" });
      assert.equal(checkOwnership(request("CREATE", team, null, admin)), null);
      assert.equal(checkOwnership(request("UPDATE", team, bobs, admin)), null);
      assert.equal(checkOwnership(request("DELETE", null, team, admin)), null);
      assert.equal(checkOwnership(request("DELETE", null, null, admin)), null);
    });
  });

  describe("CREATE by a non-admin", () => {
    it("allows an own User key", () => {
      assert.equal(checkOwnership(request("CREATE", own, null)), null);
    });
    it("denies a key for another user", () => {
      assert.equal(
        deniedWith(request("CREATE", bobs, null)),
        `${PREFIX}${BASE}; only members of system:masters may manage keys of user "bob"`,
      );
    });
    it("denies a key without spec.user", () => {
      assert.equal(
        deniedWith(request("CREATE", key({ type: "User" }), null)),
        `${PREFIX}${BASE}; only members of system:masters may leave spec.user unset`,
      );
      assert.match(deniedWith(request("CREATE", null, null)), /leave spec.user unset/);
    });
    for (const [field, value] of [
      ["team", "devs"],
      ["subject", "loft:metrics-writer:x"],
      ["groups", ["loft:system:admins"]],
    ] as const) {
      it(`denies spec.${field}`, () => {
        const obj = key({ user: "alice", type: "User", [field]: value });
        assert.equal(
          deniedWith(request("CREATE", obj, null)),
          `${PREFIX}${BASE}; only members of system:masters may set spec.${field}`,
        );
      });
    }
    it("allows empty team, subject and groups", () => {
      const obj = key({ user: "alice", type: "User", team: "", subject: "", groups: [] });
      assert.equal(checkOwnership(request("CREATE", obj, null)), null);
    });
    it("denies other types", () => {
      for (const type of [
        "Login",
        "Other",
        "Reset",
        "OIDCRefreshToken",
        "NetworkPeer",
        "Workspace",
      ]) {
        assert.equal(
          deniedWith(request("CREATE", key({ user: "alice", type }), null)),
          `${PREFIX}user "alice" may only manage access keys of type "User"; only members of system:masters may use type "${type}"`,
        );
      }
      assert.match(
        deniedWith(request("CREATE", key({ user: "alice" }), null)),
        /leave spec.type unset$/,
      );
    });
    it("names every admin group", () => {
      const req = request("CREATE", bobs, null, {
        adminGroups: ["system:masters", "platform-admins"],
      });
      assert.match(deniedWith(req), /only members of system:masters or platform-admins may/);
      assert.match(
        deniedWith(request("CREATE", bobs, null, { adminGroups: [] })),
        /only admins may/,
      );
    });
    it("uses the generateName when there is no name yet", () => {
      const obj = key({ user: "bob" }, "");
      obj.metadata = { generateName: "ci-" };
      const error = checkOwnership(request("CREATE", obj, null, { name: "" }));
      assert.match(error?.message ?? "", /^ownedaccesskeys.management.loft.sh "ci-" is forbidden/);
      assert.equal(error?.details?.name, "ci-");
    });
    it("falls back to the request name, then Unknown", () => {
      const obj = { spec: { user: "bob" } } as OwnedAccessKey;
      assert.equal(
        checkOwnership(request("CREATE", obj, null, { name: "req-name" }))?.details?.name,
        "req-name",
      );
      assert.equal(
        checkOwnership(request("CREATE", obj, null, { name: "" }))?.details?.name,
        "Unknown",
      );
    });
  });

  describe("UPDATE by a non-admin", () => {
    it("allows changing an own key", () => {
      const disabled = key({ user: "alice", type: "User", key: "k", disabled: true });
      assert.equal(checkOwnership(request("UPDATE", disabled, own)), null);
    });
    it("denies changing someone else's key, even into an own one", () => {
      assert.equal(
        deniedWith(request("UPDATE", own, bobs)),
        `${PREFIX}${BASE}; this key belongs to user "bob"; only members of system:masters may change it`,
      );
      const teamKey = key({ team: "devs", type: "User" });
      assert.match(deniedWith(request("UPDATE", own, teamKey)), /this key belongs to team "devs"/);
      assert.match(deniedWith(request("UPDATE", own, key({}))), /this key belongs to no user/);
    });
    it("denies giving an own key away or adding admin-only fields", () => {
      assert.match(deniedWith(request("UPDATE", bobs, own)), /may manage keys of user "bob"$/);
      const withGroups = key({ user: "alice", type: "User", groups: ["admins"] });
      assert.match(deniedWith(request("UPDATE", withGroups, own)), /may set spec.groups$/);
      const login = key({ user: "alice", type: "Login" });
      assert.match(deniedWith(request("UPDATE", login, own)), /may use type "Login"$/);
    });
    it("denies when the stored object is missing (fail closed)", () => {
      assert.match(deniedWith(request("UPDATE", own, null)), /its owner is unknown$/);
    });
  });

  describe("DELETE by a non-admin", () => {
    it("allows deleting an own key of any type (logout deletes Login keys)", () => {
      assert.equal(checkOwnership(request("DELETE", null, own)), null);
      assert.equal(
        checkOwnership(request("DELETE", null, key({ user: "alice", type: "Login" }))),
        null,
      );
    });
    it("denies deleting someone else's key", () => {
      assert.equal(
        deniedWith(request("DELETE", null, bobs)),
        `${PREFIX}${BASE}; this key belongs to user "bob"; only members of system:masters may delete it`,
      );
      assert.match(
        deniedWith(request("DELETE", null, key({ subject: "s" }))),
        /belongs to subject "s"/,
      );
    });
    it("denies when the stored object is missing (fail closed)", () => {
      assert.match(deniedWith(request("DELETE", null, null)), /its owner is unknown$/);
    });
  });

  it("keeps system: users' keys (service accounts, nodes) to admins, even their own", () => {
    for (const username of [
      "system:serviceaccount:ci:bot",
      "system:node:worker-1",
      "system:kube-proxy",
    ]) {
      const mine = key({ user: username, type: "User", key: "k" });
      const as = { userInfo: { username, groups: ["system:authenticated"] } };
      for (const op of ["CREATE", "UPDATE"] as const) {
        const message = deniedWith(request(op, mine, op === "UPDATE" ? mine : null, as));
        assert.match(
          message,
          /only members of system:masters may manage keys of system: users \(service accounts, nodes, components\)$/,
        );
      }
      // It may still delete a key it has (made by an admin).
      assert.equal(checkOwnership(request("DELETE", null, mine, as)), null);
      const admin = { isAdmin: true, userInfo: { username: "root", groups: ["system:masters"] } };
      assert.equal(checkOwnership(request("CREATE", mine, null, admin)), null);
    }
  });

  it("does not judge CONNECT", () => {
    assert.equal(checkOwnership(request("CONNECT", null, null)), null);
  });

  it("is not fooled by inherited or wrong-typed fields", () => {
    const inherited = { spec: Object.create({ user: "alice", type: "User" }) } as OwnedAccessKey;
    assert.ok(checkOwnership(request("CREATE", inherited, null)));
    assert.ok(checkOwnership(request("CREATE", key({ user: ["alice"], type: "User" }), null)));
    assert.ok(
      checkOwnership(request("CREATE", key({ user: "alice", type: "User", team: 5 }), null)),
    );
  });
});
