// A rotated key's previous key within its grace window (spec.previousKey, docs/decisions.md OAK-38),
// in the token and authorization webhooks: real TokenReview and SubjectAccessReview JSON, the
// SubjectAccessReview carrying the user the TokenReview answered with (as kube-apiserver sends it,
// also from its cache of logins). The old key logs in until the deadline and not after; the
// authorization webhook accepts its key-id until the deadline; a disabled key is refused at once.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { KeyIndex } from "../../../webhook/src/auth/key-index.js";
import { builtInRoles } from "../../../webhook/src/auth/roles.js";
import {
  decodeSubjectAccessReview,
  reviewAccess,
  SAR_REASONS,
} from "../../../webhook/src/auth/subject-access-review.js";
import {
  decodeTokenReview,
  reviewToken,
  TOKEN_ERRORS,
} from "../../../webhook/src/auth/token-review.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  MAX_PREVIOUS_KEY_NAMES,
  PREVIOUS_KEY_OTHER,
  previousKeyLabel,
} from "../../../webhook/src/server/metrics.js";
import { accessKey, FakeKeys } from "./fake-keys.js";

const OLD = randomBytes(32).toString("base64url");
const NEW = randomBytes(32).toString("base64url");
const UNTIL = Date.parse("2026-11-29T07:00:00Z");
const BEFORE = UNTIL - 1000;

interface User {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

function rig(spec: Record<string, unknown>) {
  const keys = new FakeKeys();
  const index = new KeyIndex(keys);
  let now = BEFORE;
  const put = (key: OwnedAccessKey) => {
    keys.objects.set("ci", key);
    index.apply("MODIFIED", "ci");
  };
  put(accessKey("ci", spec));
  const login = (token: string) => {
    const body = JSON.parse(
      JSON.stringify({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        metadata: { creationTimestamp: null },
        spec: { token },
        status: { user: {} },
      }),
    );
    return reviewToken(decodeTokenReview(body), {
      index,
      groupDomain: "loft.sh",
      now: () => now,
      localLastActivity: () => undefined,
      recordActivity: () => undefined,
    });
  };
  const authorize = (user: User) =>
    reviewAccess(
      decodeSubjectAccessReview(
        JSON.parse(
          JSON.stringify({
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              resourceAttributes: { namespace: "ns", verb: "get", version: "v1", resource: "pods" },
              user: user.username,
              groups: user.groups,
              uid: user.uid,
              extra: user.extra,
            },
          }),
        ),
      ),
      {
        keys,
        groupDomain: "loft.sh",
        clusterName: "",
        projectLabel: "loft.sh/project",
        virtualClusterLabel: "loft.sh/vcluster-instance-name",
        roles: builtInRoles("loft.sh"),
        namespaces: { synced: () => true, labels: () => undefined },
        now: () => now,
      },
    );
  return { login, authorize, put, setNow: (ms: number) => (now = ms) };
}

const status = (answer: { body: object }) =>
  (answer.body as { status: { authenticated?: boolean; user?: User; error?: string } }).status;
const denied = (answer: { body: object }) =>
  (answer.body as { status: { denied?: boolean; reason?: string } }).status;

for (const storage of ["plain", "hashed"] as const) {
  const stored = (k: string) => (storage === "hashed" ? hashKey(k) : k);
  const windowSpec = {
    user: "ci-bot",
    key: stored(NEW),
    previousKey: { key: hashKey(OLD), until: "2026-11-29T07:00:00Z" },
  };

  describe(`a previous key in its grace window, ${storage} storage`, () => {
    it("both keys log in and are authorized until the deadline; after it only the new one", () => {
      const r = rig(windowSpec);
      const old = r.login(OLD);
      assert.equal(status(old).authenticated, true);
      assert.equal(old.log.previousKey, true);
      assert.equal(old.log.key, "ci");
      assert.match(
        old.log.reason ?? "",
        /previous key \(rotated\), valid until 2026-11-29T07:00:00Z/,
      );
      assert.ok(!JSON.stringify(old).includes(OLD), "the answer and its log never hold the key");
      const fresh = r.login(NEW);
      assert.equal(status(fresh).authenticated, true);
      assert.equal(fresh.log.previousKey, undefined);
      const oldUser = status(old).user!;
      const newUser = status(fresh).user!;
      // Each login names the value it used, so authorization tells them apart.
      assert.notDeepEqual(
        oldUser.extra["accesskey.loft.sh/key-id"],
        newUser.extra["accesskey.loft.sh/key-id"],
      );
      assert.equal(denied(r.authorize(oldUser)).denied, undefined);
      assert.equal(denied(r.authorize(newUser)).denied, undefined);

      r.setNow(UNTIL);
      // A new login with the old key: no such key any more.
      const late = r.login(OLD);
      assert.equal(status(late).authenticated, false);
      assert.equal(status(late).error, TOKEN_ERRORS.invalid);
      // A login kube-apiserver still has cached: refused by its key-id.
      assert.equal(denied(r.authorize(oldUser)).reason, SAR_REASONS.rotated);
      assert.equal(status(r.login(NEW)).authenticated, true);
      assert.equal(denied(r.authorize(newUser)).denied, undefined);
    });

    it("a disabled key is refused at once, old and new key alike", () => {
      const r = rig(windowSpec);
      const oldUser = status(r.login(OLD)).user!;
      const newUser = status(r.login(NEW)).user!;
      r.put(accessKey("ci", { ...windowSpec, disabled: true }));
      for (const key of [OLD, NEW]) {
        assert.equal(status(r.login(key)).error, TOKEN_ERRORS.disabled);
      }
      assert.equal(denied(r.authorize(oldUser)).reason, SAR_REASONS.disabled);
      assert.equal(denied(r.authorize(newUser)).reason, SAR_REASONS.disabled);
    });

    it("an expired key (ttl) is refused, old and new key alike", () => {
      const r = rig({ ...windowSpec, ttl: 60 });
      for (const key of [OLD, NEW]) {
        assert.equal(status(r.login(key)).error, TOKEN_ERRORS.expired);
      }
    });

    it("a rotation without a window, or a later one, stops the old key", () => {
      const r = rig(windowSpec);
      const oldUser = status(r.login(OLD)).user!;
      const third = randomBytes(32).toString("base64url");
      r.put(accessKey("ci", { user: "ci-bot", key: stored(third) }));
      assert.equal(status(r.login(OLD)).error, TOKEN_ERRORS.invalid);
      assert.equal(denied(r.authorize(oldUser)).reason, SAR_REASONS.rotated);
      // A malformed previousKey opens no window.
      r.put(accessKey("ci", { ...windowSpec, previousKey: { key: hashKey(OLD), until: "soon" } }));
      assert.equal(status(r.login(OLD)).error, TOKEN_ERRORS.invalid);
      assert.equal(denied(r.authorize(oldUser)).reason, SAR_REASONS.rotated);
    });
  });
}

describe("the key index with previous keys", () => {
  it("finds a key by its previous digest, forgets it when the window goes, and stays one entry a name", () => {
    const keys = new FakeKeys();
    const index = new KeyIndex(keys);
    const tokens: string[] = [];
    for (let i = 0; i < 300; i++) {
      const [old, cur] = [
        randomBytes(32).toString("base64url"),
        randomBytes(32).toString("base64url"),
      ];
      tokens.push(old, cur);
      keys.objects.set(
        `k${i}`,
        accessKey(`k${i}`, {
          user: "u",
          key: cur,
          previousKey: { key: hashKey(old), until: "2026-11-29T07:00:00Z" },
        }),
      );
      index.apply("ADDED", `k${i}`);
    }
    assert.equal(index.size, 300);
    tokens.forEach((t, i) => {
      const found = index.findByToken(t);
      assert.equal(found.kind, "found");
      assert.equal(found.kind === "found" && found.previous, i % 2 === 0);
      assert.equal(found.kind === "found" && found.key.metadata?.name, `k${Math.floor(i / 2)}`);
    });
    assert.deepEqual(index.namesWithSameKey(hashKey(tokens[0]!)), ["k0"]);
    for (let i = 0; i < 300; i++) {
      keys.objects.set(`k${i}`, accessKey(`k${i}`, { user: "u", key: tokens[2 * i + 1]! }));
      index.apply("MODIFIED", `k${i}`);
    }
    tokens.forEach((t, i) =>
      assert.equal(index.findByToken(t).kind, i % 2 === 0 ? "none" : "found"),
    );
  });
});

describe("vgate_access_key_previous_key_logins_total's name label", () => {
  it("names at most MAX_PREVIOUS_KEY_NAMES keys; later ones are counted together", () => {
    const seen = new Set<string>();
    for (let i = 0; i < MAX_PREVIOUS_KEY_NAMES; i++)
      assert.equal(previousKeyLabel(seen, `k${i}`), `k${i}`);
    assert.equal(previousKeyLabel(seen, "late"), PREVIOUS_KEY_OTHER);
    assert.equal(previousKeyLabel(seen, "k0"), "k0", "a name seen first keeps its series");
    assert.equal(seen.size, MAX_PREVIOUS_KEY_NAMES);
  });
});
