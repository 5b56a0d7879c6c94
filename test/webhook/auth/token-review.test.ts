import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { accessKey, FakeKeys } from "./fake-keys.js";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import { KubeError } from "../../../webhook/src/shared/status.js";
import { accessKeyExtra } from "../../../webhook/src/auth/contracts.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { KeyIndex } from "../../../webhook/src/auth/key-index.js";
import {
  decodeTokenReview,
  reviewToken,
  type TokenReviewDeps,
  type TokenReviewRequest,
} from "../../../webhook/src/auth/token-review.js";

const V1 = "authentication.k8s.io/v1";
const V1BETA1 = "authentication.k8s.io/v1beta1";
const NOW = Date.parse("2026-03-10T00:00:00Z");
const TOKEN = "Zk9xTnR2d0pQbGJ4Q0VhR3NkRmVuUHJ1S3ZhWWx3bUk";
const EXTRA = accessKeyExtra("loft.sh");
/** The key-id of TOKEN: the first 16 hex digits of its SHA-256. */
const TOKEN_ID = hashKey(TOKEN).slice("sha256:".length, "sha256:".length + 16);

/** The body kube-apiserver's webhook token authenticator posts. */
function wire(token: string, audiences?: string[], apiVersion = V1): unknown {
  const spec: Record<string, unknown> = { token };
  if (audiences) spec.audiences = audiences;
  return JSON.parse(
    JSON.stringify({
      apiVersion,
      kind: "TokenReview",
      metadata: { creationTimestamp: null },
      spec,
      status: { user: {} },
    }),
  );
}

function setup(keys: OwnedAccessKey[], overrides: Partial<TokenReviewDeps> = {}) {
  const source = new FakeKeys();
  const index = new KeyIndex(source);
  for (const key of keys) {
    source.objects.set(key.metadata!.name!, key);
    index.apply("ADDED", key.metadata!.name!);
  }
  const recorded: { name: string; at: number }[] = [];
  const local = new Map<string, number>();
  const deps: TokenReviewDeps = {
    index,
    groupDomain: "loft.sh",
    now: () => NOW,
    localLastActivity: (name) => local.get(name),
    recordActivity: (key, at) => recorded.push({ name: key.metadata!.name!, at }),
    ...overrides,
  };
  const review = (token: string, audiences?: string[], apiVersion = V1) =>
    reviewToken(decodeTokenReview(wire(token, audiences, apiVersion)), deps);
  return { source, index, deps, recorded, local, review };
}

const status = (answer: { body: object }) =>
  (answer.body as { status: Record<string, unknown> }).status;

describe("token-review", () => {
  describe("decodeTokenReview", () => {
    it("reads v1 and v1beta1 as kube-apiserver sends them", () => {
      assert.deepEqual(decodeTokenReview(wire("t", ["https://kubernetes.default.svc"])), {
        apiVersion: V1,
        token: "t",
        audiences: ["https://kubernetes.default.svc"],
      });
      assert.deepEqual(decodeTokenReview(wire("t", undefined, V1BETA1)), {
        apiVersion: V1BETA1,
        token: "t",
        audiences: [],
      });
      const nullAuds = {
        apiVersion: V1,
        kind: "TokenReview",
        spec: { token: "t", audiences: null },
      };
      assert.deepEqual(decodeTokenReview(nullAuds).audiences, []);
    });

    const secret = "s3cr3t-t0ken-value";
    const cases: [string, unknown, RegExp][] = [
      ["not an object", "x", /must be a JSON object/],
      ["an array", [], /must be a JSON object/],
      ["null", null, /must be a JSON object/],
      [
        "wrong apiVersion",
        { ...(wire(secret) as object), apiVersion: "authentication.k8s.io/v2" },
        /apiVersion/,
      ],
      [
        "wrong kind",
        { ...(wire(secret) as object), kind: "SubjectAccessReview" },
        /kind must be TokenReview/,
      ],
      ["no spec", { apiVersion: V1, kind: "TokenReview" }, /spec must be an object/],
      [
        "spec an array",
        { apiVersion: V1, kind: "TokenReview", spec: [secret] },
        /spec must be an object/,
      ],
      [
        "no token",
        { apiVersion: V1, kind: "TokenReview", spec: {} },
        /spec.token must be a string/,
      ],
      ["token a number", { apiVersion: V1, kind: "TokenReview", spec: { token: 1 } }, /spec.token/],
      [
        "token an array",
        { apiVersion: V1, kind: "TokenReview", spec: { token: [secret] } },
        /spec.token/,
      ],
      [
        "audiences a string",
        wire(secret) && {
          apiVersion: V1,
          kind: "TokenReview",
          spec: { token: secret, audiences: "a" },
        },
        /spec.audiences must be an array/,
      ],
      [
        "audience a number",
        { apiVersion: V1, kind: "TokenReview", spec: { token: secret, audiences: ["a", 2] } },
        /spec.audiences\[1\] must be a string/,
      ],
      [
        "too many audiences",
        wire(
          secret,
          Array.from({ length: 101 }, (_, i) => `a${i}`),
        ),
        /more than 100/,
      ],
      [
        "a huge audience",
        wire(secret, ["x".repeat(1025)]),
        /audiences\[0\] must not be longer than 1024 bytes/,
      ],
      ["a multibyte audience over 1 KiB", wire(secret, ["é".repeat(513)]), /1024 bytes/],
      [
        "token under __proto__",
        JSON.parse(
          `{"apiVersion":"${V1}","kind":"TokenReview","spec":{"__proto__":{"token":"${secret}"}}}`,
        ),
        /spec.token must be a string/,
      ],
      [
        "spec under __proto__",
        JSON.parse(
          `{"apiVersion":"${V1}","kind":"TokenReview","__proto__":{"spec":{"token":"${secret}"}}}`,
        ),
        /spec must be an object/,
      ],
      [
        "kind under __proto__",
        JSON.parse(
          `{"apiVersion":"${V1}","__proto__":{"kind":"TokenReview"},"spec":{"token":"${secret}"}}`,
        ),
        /kind must be TokenReview/,
      ],
    ];
    for (const [what, body, message] of cases) {
      it(`400 BadRequest for ${what}, never quoting the token`, () => {
        assert.throws(
          () => decodeTokenReview(body),
          (err: unknown) => {
            assert.ok(err instanceof KubeError);
            assert.equal(err.code, 400);
            assert.equal(err.reason, "BadRequest");
            assert.match(err.message, message);
            assert.ok(!err.message.includes(secret));
            assert.ok(!JSON.stringify(err.toStatus()).includes(secret));
            return true;
          },
        );
      });
    }

    it("accepts exactly 100 audiences of 1 KiB and deeply nested junk elsewhere", () => {
      let deep: unknown = {};
      for (let i = 0; i < 10_000; i++) deep = { a: deep };
      const body = wire(
        "t",
        Array.from({ length: 100 }, () => "x".repeat(1024)),
      ) as Record<string, unknown>;
      body.metadata = deep;
      assert.equal(decodeTokenReview(body).audiences.length, 100);
    });

    it("never throws anything but a KubeError (property)", () => {
      fc.assert(
        fc.property(fc.anything(), (body) => {
          try {
            decodeTokenReview(body);
          } catch (err) {
            assert.ok(err instanceof KubeError);
          }
        }),
      );
      fc.assert(
        fc.property(fc.anything(), (spec) => {
          try {
            decodeTokenReview({ apiVersion: V1, kind: "TokenReview", spec });
          } catch (err) {
            assert.ok(err instanceof KubeError);
          }
        }),
      );
    });
  });

  describe("reviewToken", () => {
    const alice = accessKey("alice-ci", {
      key: TOKEN,
      user: "alice",
      groups: ["dev", "ops", "dev", 7],
    });

    it("a valid key authenticates as its owner, with the key named in extra", () => {
      const { review, recorded } = setup([alice]);
      const answer = review(TOKEN);
      assert.deepEqual(answer.body, {
        apiVersion: V1,
        kind: "TokenReview",
        status: {
          authenticated: true,
          user: {
            username: "alice",
            uid: "uid-alice-ci",
            groups: ["dev", "ops"],
            extra: {
              [EXTRA]: ["alice-ci"],
              "accesskey.loft.sh/key-id": [TOKEN_ID],
              "authentication.kubernetes.io/credential-id": [`ACCESSKEYID=${TOKEN_ID}`],
            },
          },
        },
      });
      assert.deepEqual(answer.log, {
        key: "alice-ci",
        user: "alice",
        decision: "authenticated",
        login: "authenticated",
      });
      assert.deepEqual(recorded, [{ name: "alice-ci", at: NOW }]);
    });

    it("mirrors the request's apiVersion (v1beta1)", () => {
      const { review } = setup([alice]);
      const body = review(TOKEN, undefined, V1BETA1).body as Record<string, unknown>;
      assert.equal(body.apiVersion, V1BETA1);
      assert.equal(body.kind, "TokenReview");
      assert.equal(status({ body }).authenticated, true);
    });

    it("hashed keys authenticate with the token they were made from", () => {
      const { review } = setup([accessKey("h", { key: hashKey(TOKEN), user: "bob" })]);
      assert.equal(status(review(TOKEN)).authenticated, true);
      assert.equal(status(review(hashKey(TOKEN))).authenticated, false);
    });

    it("username forms: user, team:<team>, subject verbatim; no owner fails", () => {
      const cases: [Record<string, unknown>, string | undefined][] = [
        [{ user: "alice", team: "t", subject: "s" }, "alice"],
        [{ team: "platform", subject: "s" }, "team:platform"],
        [{ user: "", team: "platform" }, "team:platform"],
        [{ subject: "system:serviceaccount:ci:deployer" }, "system:serviceaccount:ci:deployer"],
        [{ user: 5, team: ["x"], subject: "" }, undefined],
        [{}, undefined],
      ];
      for (const [owner, username] of cases) {
        const { review, recorded } = setup([accessKey("k", { key: TOKEN, ...owner })]);
        const s = status(review(TOKEN));
        if (username === undefined) {
          assert.deepEqual(s, { authenticated: false, error: "access key has no owner" });
          assert.equal(recorded.length, 0);
        } else {
          assert.equal((s.user as { username: string }).username, username, JSON.stringify(owner));
        }
      }
    });

    it("extra holds only the key name, key-id (under the configured group domain) and kube's credential-id", () => {
      const { review } = setup([alice], { groupDomain: "example.com" });
      const user = status(review(TOKEN)).user as { extra: object; groups: string[] };
      assert.deepEqual(user.extra, {
        "accesskey.example.com/name": ["alice-ci"],
        "accesskey.example.com/key-id": [TOKEN_ID],
        "authentication.kubernetes.io/credential-id": [`ACCESSKEYID=${TOKEN_ID}`],
      });
      // The same key stored hashed has the same key-id.
      const hashed = setup([accessKey("alice-ci", { key: hashKey(TOKEN), user: "alice" })], {
        groupDomain: "example.com",
      });
      const hashedUser = status(hashed.review(TOKEN)).user as { extra: Record<string, string[]> };
      assert.deepEqual(hashedUser.extra["accesskey.example.com/key-id"], [TOKEN_ID]);
      const none = setup([accessKey("k", { key: TOKEN, user: "u", groups: "dev" })]);
      assert.deepEqual((status(none.review(TOKEN)).user as { groups: string[] }).groups, []);
    });

    it("unknown, near-miss, malformed and ambiguous tokens get byte-identical answers", () => {
      const { review, source, index } = setup([alice]);
      source.objects.set("twin-a", accessKey("twin-a", { key: "twin-token", user: "a" }));
      source.objects.set("twin-b", accessKey("twin-b", { key: hashKey("twin-token"), user: "b" }));
      index.apply("ADDED", "twin-a");
      index.apply("ADDED", "twin-b");
      const expected = JSON.stringify(review("no-such-key").body);
      const hostile = [
        TOKEN.slice(0, -1),
        `${TOKEN}x`,
        TOKEN.toLowerCase(),
        ` ${TOKEN}`,
        `${TOKEN}\n`,
        "",
        "x".repeat(8193),
        "x".repeat(1_000_000),
        `${TOKEN.slice(0, -1)}é`,
        "ключ",
        "\u0000",
        "twin-token",
        hashKey(TOKEN),
      ];
      for (const token of hostile) {
        const answer = review(token);
        assert.equal(JSON.stringify(answer.body), expected, JSON.stringify(token.slice(0, 40)));
        assert.equal(answer.log.decision, "unauthenticated");
        assert.equal(answer.log.key, undefined);
      }
      assert.deepEqual(JSON.parse(expected), {
        apiVersion: V1,
        kind: "TokenReview",
        status: { authenticated: false, error: "invalid access key" },
      });
      assert.equal(review("twin-token").log.reason, "ambiguous: twin-a, twin-b");
      assert.equal(review("nope").log.reason, "unknown");
      assert.equal(review("").log.reason, "malformed");
    });

    it("a token up to 8 KiB of printable ASCII can be a key", () => {
      const long = "~".repeat(8192);
      const { review } = setup([accessKey("long", { key: long, user: "u" })]);
      assert.equal(status(review(long)).authenticated, true);
    });

    it("fails closed until the cache has synced: 503, so kube-apiserver refuses the login", () => {
      const { review, source, recorded } = setup([alice]);
      source.isSynced = false;
      assert.throws(
        () => review(TOKEN),
        (err: unknown) =>
          err instanceof KubeError &&
          err.code === 503 &&
          err.reason === "ServiceUnavailable" &&
          err.message === "access keys are not loaded yet; try again",
      );
      assert.equal(recorded.length, 0);
    });

    it("disabled, expired and deleting keys are refused with their reason", () => {
      const cases: [OwnedAccessKey, string][] = [
        [accessKey("d", { key: TOKEN, user: "u", disabled: true }), "access key disabled"],
        [accessKey("e", { key: TOKEN, user: "u", ttl: 3600 }), "access key expired"],
        [
          accessKey(
            "x",
            { key: TOKEN, user: "u" },
            { metadata: { deletionTimestamp: "2026-03-09T00:00:00Z" } },
          ),
          "access key is being deleted",
        ],
      ];
      for (const [key, error] of cases) {
        const { review, recorded } = setup([key]);
        const answer = review(TOKEN);
        assert.deepEqual(status(answer), { authenticated: false, error });
        assert.equal(answer.log.reason, error);
        assert.equal(answer.log.key, key.metadata!.name);
        assert.equal(recorded.length, 0);
      }
      const { review } = setup([
        accessKey("ok", { key: TOKEN, user: "u", disabled: false, ttl: 30 * 86400 }),
      ]);
      assert.equal(status(review(TOKEN)).authenticated, true);
    });

    it("ttlAfterLastActivity counts from the later of status and the recorder's activity", () => {
      const key = accessKey(
        "idle",
        { key: TOKEN, user: "u", ttl: 3600, ttlAfterLastActivity: true },
        { status: { lastActivity: "2026-03-09T22:30:00Z" } },
      );
      const { review, local } = setup([key]);
      assert.equal(status(review(TOKEN)).error, "access key expired");
      local.set("idle", NOW - 60_000);
      assert.equal(status(review(TOKEN)).authenticated, true);
    });

    describe("audiences, as kube-apiserver's webhook authenticator expects", () => {
      const API = "https://kubernetes.default.svc";

      it("audience-agnostic without --audiences: no status.audiences", () => {
        const { review } = setup([alice]);
        const s = status(review(TOKEN, [API, "other"]));
        assert.equal(s.authenticated, true);
        assert.equal(Object.hasOwn(s, "audiences"), false);
      });

      it("with --audiences: own audiences when none requested, else the intersection", () => {
        const { review } = setup([alice], { audiences: [API, "vgate"] });
        assert.deepEqual(status(review(TOKEN)).audiences, [API, "vgate"]);
        assert.deepEqual(status(review(TOKEN, ["x", "vgate", API])).audiences, ["vgate", API]);
      });

      it("an empty intersection is refused with kube's service-account wording", () => {
        const { review, recorded } = setup([alice], { audiences: [API] });
        const answer = review(TOKEN, ["https://other", 'q"uote']);
        assert.deepEqual(status(answer), {
          authenticated: false,
          error:
            'token audiences ["https://kubernetes.default.svc"] is invalid for the target audiences ["https://other" "q\\"uote"]',
        });
        assert.equal(recorded.length, 0);
        // An unknown token still gets the plain answer.
        assert.equal(status(review("nope", ["https://other"])).error, "invalid access key");
      });
    });

    it("never puts the token or spec.key in a body or log (property)", () => {
      // Tokens carry a marker that nothing else in an answer contains.
      const secret = fc
        .string({ minLength: 1, maxLength: 64 })
        .map((s) => `SECRET-${Buffer.from(s).toString("base64url")}`);
      fc.assert(
        fc.property(
          secret,
          fc.boolean(),
          fc.constantFrom("ok", "disabled", "expired", "noOwner"),
          (token, hashed, state) => {
            const spec: Record<string, unknown> = { key: hashed ? hashKey(token) : token };
            if (state !== "noOwner") spec.user = "u";
            if (state === "disabled") spec.disabled = true;
            if (state === "expired") spec.ttl = 1;
            const { review } = setup([accessKey("k", spec)]);
            const hex = hashKey(token).slice("sha256:".length);
            for (const probe of [token, `${token}!`, `${token.slice(0, -1)}é`]) {
              const text = JSON.stringify(review(probe, ["aud"]));
              assert.ok(!text.includes("SECRET-"), text);
              assert.ok(!text.includes(hex), text);
            }
          },
        ),
      );
    });

    it("does one index lookup for every well-formed token, known or not", () => {
      let lookups = 0;
      const { deps } = setup([alice]);
      const counting: TokenReviewDeps = {
        ...deps,
        index: {
          synced: () => true,
          findByToken: (t) => {
            lookups++;
            return deps.index.findByToken(t);
          },
        },
      };
      const req = (token: string): TokenReviewRequest => ({ apiVersion: V1, token, audiences: [] });
      for (const token of [TOKEN, "unknown", TOKEN.slice(1)]) reviewToken(req(token), counting);
      assert.equal(lookups, 3);
      reviewToken(req("x".repeat(10_000)), counting);
      assert.equal(lookups, 3);
    });
  });
});
