import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, it } from "mocha";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import { KubeError } from "../../../webhook/src/shared/status.js";
import type { KeysByName, NamespaceLabels } from "../../../webhook/src/auth/contracts.js";
import { builtInRoles } from "../../../webhook/src/auth/roles.js";
import {
  decodeSubjectAccessReview,
  MAX_LIST_ITEMS,
  MAX_STRING_BYTES,
  reviewAccess,
  SAR_REASONS,
  type ReviewDeps,
} from "../../../webhook/src/auth/subject-access-review.js";

const EXTRA = "accesskey.loft.sh/name";
const ID_EXTRA = "accesskey.loft.sh/key-id";
const SECRET = "s3cr3t-key-value-never-shown-0123456789";
/** The key-id a login with SECRET carries: the first 16 hex digits of its SHA-256. */
const SECRET_ID = createHash("sha256").update(SECRET).digest("hex").slice(0, 16);

/** A SubjectAccessReview as kube-apiserver's webhook authorizer sends it (v1). */
function v1Review(spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: "SubjectAccessReview",
    apiVersion: "authorization.k8s.io/v1",
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: { namespace: "team-a", verb: "list", version: "v1", resource: "pods" },
      user: "alice",
      groups: ["ci", "system:authenticated"],
      extra: { [EXTRA]: ["ci"] },
      uid: "u-ci",
      ...spec,
    },
    status: { allowed: false },
  };
}

/** The same as v1beta1 sends it: `group`, not `groups`. */
function v1beta1Review(spec: Record<string, unknown> = {}): Record<string, unknown> {
  const body = v1Review(spec);
  const s = { ...(body.spec as Record<string, unknown>) };
  s.group = s.groups;
  delete s.groups;
  return { ...body, apiVersion: "authorization.k8s.io/v1beta1", spec: s };
}

function badRequest(body: unknown): string {
  try {
    decodeSubjectAccessReview(body);
  } catch (err) {
    assert.ok(err instanceof KubeError, String(err));
    assert.equal(err.code, 400);
    assert.equal(err.reason, "BadRequest");
    assert.ok(err.message.startsWith("SubjectAccessReview: "), err.message);
    return err.message;
  }
  assert.fail("expected a 400");
}

describe("decodeSubjectAccessReview", () => {
  it("reads a v1 resource review", () => {
    const body = v1Review();
    (body.spec as Record<string, Record<string, unknown>>).resourceAttributes!.fieldSelector = {
      requirements: [{ key: "spec.nodeName", operator: "In", values: ["n1"] }],
    };
    assert.deepEqual(decodeSubjectAccessReview(body), {
      apiVersion: "authorization.k8s.io/v1",
      user: "alice",
      groups: ["ci", "system:authenticated"],
      uid: "u-ci",
      extra: { [EXTRA]: ["ci"] },
      resourceAttributes: {
        namespace: "team-a",
        verb: "list",
        group: "",
        version: "v1",
        resource: "pods",
        subresource: "",
        name: "",
      },
    });
  });

  it("reads v1beta1 groups from spec.group", () => {
    const decoded = decodeSubjectAccessReview(v1beta1Review());
    assert.equal(decoded.apiVersion, "authorization.k8s.io/v1beta1");
    assert.deepEqual(decoded.groups, ["ci", "system:authenticated"]);
    const v1WithGroup = v1Review({ groups: undefined, group: ["x"] });
    assert.deepEqual(decodeSubjectAccessReview(v1WithGroup).groups, []);
  });

  it("reads a non-resource review, with omitted fields as empty", () => {
    const decoded = decodeSubjectAccessReview({
      kind: "SubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      spec: { nonResourceAttributes: { path: "/healthz", verb: "get" }, user: "ユーザー" },
    });
    assert.deepEqual(decoded, {
      apiVersion: "authorization.k8s.io/v1",
      user: "ユーザー",
      groups: [],
      uid: "",
      extra: {},
      nonResourceAttributes: { path: "/healthz", verb: "get" },
    });
  });

  it("accepts null for omitted fields and extra values", () => {
    const decoded = decodeSubjectAccessReview(
      v1Review({ groups: null, uid: null, extra: { a: null }, nonResourceAttributes: null }),
    );
    assert.deepEqual(decoded.groups, []);
    assert.deepEqual(decoded.extra, { a: [] });
  });

  const hostile: [string, unknown, RegExp][] = [
    ["a string body", "x", /the body must be a JSON object/],
    ["an array body", [], /the body must be a JSON object/],
    ["null", null, /the body must be a JSON object/],
    [
      "another apiVersion",
      { ...v1Review(), apiVersion: "authorization.k8s.io/v1alpha1" },
      /apiVersion must be one of/,
    ],
    [
      "a TokenReview apiVersion",
      { ...v1Review(), apiVersion: "authentication.k8s.io/v1" },
      /apiVersion/,
    ],
    [
      "another kind",
      { ...v1Review(), kind: "SelfSubjectAccessReview" },
      /kind must be SubjectAccessReview/,
    ],
    ["no kind", { ...v1Review(), kind: undefined }, /kind/],
    ["no spec", { ...v1Review(), spec: undefined }, /spec must be an object/],
    ["spec an array", { ...v1Review(), spec: [] }, /spec must be an object/],
    ["neither attributes", v1Review({ resourceAttributes: undefined }), /exactly one of/],
    [
      "both attributes",
      v1Review({ nonResourceAttributes: { path: "/", verb: "get" } }),
      /exactly one of/,
    ],
    [
      "attributes a string",
      v1Review({ resourceAttributes: "pods" }),
      /spec.resourceAttributes must be an object/,
    ],
    [
      "a number verb",
      v1Review({ resourceAttributes: { verb: 1 } }),
      /spec.resourceAttributes.verb must be a string/,
    ],
    [
      "a number path",
      v1Review({ resourceAttributes: undefined, nonResourceAttributes: { path: 1 } }),
      /nonResourceAttributes.path must be a string/,
    ],
    ["user an object", v1Review({ user: {} }), /spec.user must be a string/],
    ["groups a string", v1Review({ groups: "ci" }), /spec.groups must be an array of strings/],
    ["a number group", v1Review({ groups: ["ci", 1] }), /spec.groups\[1\] must be a string/],
    [
      "v1beta1 group a string",
      v1beta1Review({ groups: "x" }),
      /spec.group must be an array of strings/,
    ],
    ["extra an array", v1Review({ extra: [] }), /spec.extra must be an object/],
    [
      "an extra value a string",
      v1Review({ extra: { [EXTRA]: "ci" } }),
      /spec.extra key #1 must be an array of strings/,
    ],
    [
      "an extra item a number",
      v1Review({ extra: { [EXTRA]: [1] } }),
      /spec.extra key #1\[0\] must be a string/,
    ],
    [
      "deep nesting in extra",
      v1Review({ extra: { a: [JSON.parse("[".repeat(5000) + "]".repeat(5000))] } }),
      /must be a string/,
    ],
    [
      "too many groups",
      v1Review({ groups: Array(MAX_LIST_ITEMS + 1).fill("g") }),
      /must not have more than 1000 items/,
    ],
    [
      "too many extra keys",
      v1Review({
        extra: Object.fromEntries(
          Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, i) => [`k${i}`, []]),
        ),
      }),
      /spec.extra must not have more than 1000 keys/,
    ],
    [
      "too many extra values",
      v1Review({ extra: { a: Array(MAX_LIST_ITEMS + 1).fill("v") } }),
      /must not have more than 1000 items/,
    ],
    [
      "a huge user",
      v1Review({ user: "u".repeat(MAX_STRING_BYTES + 1) }),
      /spec.user must not be longer than 65536 bytes/,
    ],
    [
      "a huge multi-byte user",
      v1Review({ user: "é".repeat(MAX_STRING_BYTES / 2 + 1) }),
      /spec.user must not be longer/,
    ],
    [
      "a huge extra key",
      v1Review({ extra: { ["k".repeat(MAX_STRING_BYTES + 1)]: [] } }),
      /spec.extra key #1 must not be longer/,
    ],
    [
      "a huge resource name",
      v1Review({ resourceAttributes: { name: "n".repeat(MAX_STRING_BYTES + 1) } }),
      /resourceAttributes.name must not be longer/,
    ],
  ];
  for (const [name, body, pattern] of hostile) {
    it(`rejects ${name} with 400`, () => {
      const message = badRequest(body);
      assert.match(message, pattern);
      assert.ok(message.length < 200, "messages never echo input");
    });
  }

  it("accepts strings of exactly the limit and lists of exactly 1,000", () => {
    const decoded = decodeSubjectAccessReview(
      v1Review({ user: "u".repeat(MAX_STRING_BYTES), groups: Array(MAX_LIST_ITEMS).fill("g") }),
    );
    assert.equal(decoded.groups.length, MAX_LIST_ITEMS);
  });

  it("keeps __proto__ and constructor extra keys as plain data", () => {
    const body = JSON.parse(
      JSON.stringify(v1Review()).replace(
        '"extra":{',
        '"extra":{"__proto__":["p"],"constructor":["c"],',
      ),
    );
    const { extra } = decodeSubjectAccessReview(body);
    assert.ok(Object.hasOwn(extra, "__proto__"));
    assert.deepEqual(Object.getOwnPropertyDescriptor(extra, "__proto__")?.value, ["p"]);
    assert.deepEqual(extra.constructor, ["c"]);
    assert.equal(Object.getPrototypeOf(extra), Object.prototype);
    assert.deepEqual(Object.keys(extra), ["__proto__", "constructor", EXTRA]);
    assert.equal(({} as Record<string, unknown>)[0], undefined);
  });
});

// ---------------------------------------------------------------- reviewAccess

const KEY: OwnedAccessKey = {
  apiVersion: "management.loft.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name: "ci", uid: "u-ci" },
  spec: { user: "alice", key: SECRET, scope: { projects: [{ project: "a" }] } },
};

function keys(list: OwnedAccessKey[], synced = true): KeysByName {
  return {
    synced: () => synced,
    get: (name) => list.find((k) => k.metadata?.name === name),
  };
}

function namespaces(synced = true): NamespaceLabels {
  const table: Record<string, Record<string, string>> = {
    "team-a": { "loft.sh/project": "a" },
    "team-b": {},
  };
  return {
    synced: () => synced,
    labels: (name) => (Object.hasOwn(table, name) ? table[name] : undefined),
  };
}

function deps(more: Partial<ReviewDeps> = {}): ReviewDeps {
  return {
    groupDomain: "loft.sh",
    clusterName: "",
    projectLabel: "loft.sh/project",
    virtualClusterLabel: "loft.sh/vcluster-instance-name",
    roles: builtInRoles("loft.sh"),
    namespaces: namespaces(),
    keys: keys([KEY]),
    ...more,
  };
}

const review = (body: Record<string, unknown>, d = deps()) =>
  reviewAccess(decodeSubjectAccessReview(body), d);

const inNamespace = (namespace: string) => ({
  resourceAttributes: { namespace, verb: "list", version: "v1", resource: "pods" },
});

describe("reviewAccess", () => {
  it("has no opinion on requests not made with an access key", () => {
    const answer = review(v1Review({ extra: { "other.io/x": ["ci"] } }));
    assert.deepEqual(answer, {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        status: { allowed: false },
      },
      log: { user: "alice", decision: "no-opinion" },
    });
    assert.equal(review(v1Review({ extra: undefined })).log.decision, "no-opinion");
  });

  it("has no opinion on a key of another group domain", () => {
    const answer = review(v1Review(), deps({ groupDomain: "example.com" }));
    assert.equal(answer.log.decision, "no-opinion");
  });

  it("has no opinion inside the key's scope, in the request's apiVersion", () => {
    for (const make of [v1Review, v1beta1Review]) {
      const body = make(inNamespace("team-a"));
      const answer = review(body);
      assert.deepEqual(answer.body, {
        apiVersion: body.apiVersion,
        kind: "SubjectAccessReview",
        status: { allowed: false },
      });
      assert.deepEqual(answer.log, { user: "alice", key: "ci", decision: "no-opinion" });
    }
  });

  it("denies outside the key's scope, with the reason", () => {
    const answer = review(v1beta1Review(inNamespace("team-b")));
    const reason = `access key "ci" does not allow "list" "pods" in namespace "team-b": outside the key's scope`;
    assert.deepEqual(answer.body, {
      apiVersion: "authorization.k8s.io/v1beta1",
      kind: "SubjectAccessReview",
      status: { allowed: false, denied: true, reason },
    });
    assert.deepEqual(answer.log, { user: "alice", key: "ci", decision: "denied", reason });
  });

  const denials: [string, Record<string, unknown>, Partial<ReviewDeps>, string][] = [
    [
      "namespaces not synced",
      v1Review(inNamespace("team-a")),
      { namespaces: namespaces(false) },
      SAR_REASONS.notLoaded,
    ],
    ["an unknown key", v1Review({ extra: { [EXTRA]: ["other"] } }), {}, SAR_REASONS.notFound],
    [
      "another uid (a key recreated under the same name)",
      v1Review({ uid: "u-old" }),
      {},
      SAR_REASONS.notFound,
    ],
    ["no uid", v1Review({ uid: undefined }), {}, SAR_REASONS.notFound],
    ["an empty name list", v1Review({ extra: { [EXTRA]: [] } }), {}, SAR_REASONS.notFound],
    ["an empty name", v1Review({ extra: { [EXTRA]: [""] } }), {}, SAR_REASONS.notFound],
    ["two names", v1Review({ extra: { [EXTRA]: ["ci", "ci"] } }), {}, SAR_REASONS.ambiguous],
    [
      "a disabled key",
      v1Review(inNamespace("team-a")),
      { keys: keys([{ ...KEY, spec: { ...KEY.spec, disabled: true } }]) },
      SAR_REASONS.disabled,
    ],
    [
      "a key being deleted",
      v1Review(inNamespace("team-a")),
      {
        keys: keys([
          { ...KEY, metadata: { ...KEY.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } },
        ]),
      },
      SAR_REASONS.deleting,
    ],
    [
      "an expired key",
      v1Review(inNamespace("team-a")),
      {
        keys: keys([
          {
            ...KEY,
            metadata: { ...KEY.metadata, creationTimestamp: "2026-01-01T00:00:00Z" },
            spec: { ...KEY.spec, ttl: 60 },
          },
        ]),
        now: () => Date.parse("2026-01-01T00:01:00Z"),
      },
      SAR_REASONS.expired,
    ],
    [
      "the old value of a rotated key (another key-id)",
      v1Review({
        ...inNamespace("team-a"),
        extra: { [EXTRA]: ["ci"], [ID_EXTRA]: ["0123456789abcdef"] },
      }),
      {},
      SAR_REASONS.rotated,
    ],
    [
      "two key-ids",
      v1Review({
        ...inNamespace("team-a"),
        extra: { [EXTRA]: ["ci"], [ID_EXTRA]: [SECRET_ID, SECRET_ID] },
      }),
      {},
      SAR_REASONS.rotated,
    ],
  ];
  for (const [name, body, more, reason] of denials) {
    it(`denies ${name}`, () => {
      const answer = review(body, deps(more));
      assert.deepEqual((answer.body as { status: unknown }).status, {
        allowed: false,
        denied: true,
        reason,
      });
      assert.equal(answer.log.decision, "denied");
      assert.equal(answer.log.reason, reason);
    });
  }

  it("an expired key with ttlAfterLastActivity lives on from a use not yet written to status", () => {
    const used: OwnedAccessKey = {
      ...KEY,
      metadata: { ...KEY.metadata, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { ...KEY.spec, ttl: 60, ttlAfterLastActivity: true },
    };
    const at = Date.parse("2026-01-01T00:01:30Z");
    const answer = review(
      v1Review({ ...inNamespace("team-a"), extra: { [EXTRA]: ["ci"], [ID_EXTRA]: [SECRET_ID] } }),
      deps({
        keys: keys([used]),
        now: () => at,
        localLastActivity: (name) => (name === "ci" ? at - 10_000 : undefined),
      }),
    );
    assert.equal(answer.log.decision, "no-opinion");
  });

  it("does not need the namespaces when the key is unrestricted", () => {
    const open = { ...KEY, spec: { user: "alice" } };
    const answer = review(v1Review(), deps({ keys: keys([open]), namespaces: namespaces(false) }));
    assert.equal(answer.log.decision, "no-opinion");
  });

  it("finds only own extra keys: a key named like an Object member is not found", () => {
    for (const name of ["__proto__", "constructor", "toString"]) {
      assert.equal(
        review(v1Review({ extra: { [EXTRA]: [name] } })).log.reason,
        SAR_REASONS.notFound,
      );
    }
  });

  it("never shows the key in the body or the log, and bounds logged names", () => {
    const long = "x".repeat(10_000);
    for (const body of [
      v1Review(inNamespace("team-b")),
      v1Review({ extra: { [EXTRA]: [long] } }),
    ]) {
      const text = JSON.stringify(review(body));
      assert.ok(!text.includes(SECRET));
      assert.ok(text.length < 1000, String(text.length));
    }
  });

  it("answers 503 ServiceUnavailable for a key request until the key cache has synced", () => {
    assert.throws(
      () => review(v1Review(inNamespace("team-a")), deps({ keys: keys([KEY], false) })),
      (err: unknown) =>
        err instanceof KubeError &&
        err.code === 503 &&
        err.reason === "ServiceUnavailable" &&
        err.message === SAR_REASONS.notLoaded,
    );
    // A request made without a key still gets no opinion: it does not depend on the cache.
    const plain = review(v1Review({ extra: {} }), deps({ keys: keys([KEY], false) }));
    assert.equal(plain.log.decision, "no-opinion");
  });

  it("never answers allowed (property)", () => {
    const arbitraryBody = fc.record({
      namespace: fc.constantFrom("", "team-a", "team-b", "__proto__"),
      verb: fc.constantFrom("get", "list", "create"),
      group: fc.constantFrom("", "management.loft.sh", "authorization.k8s.io"),
      resource: fc.constantFrom("pods", "selfsubjectaccessreviews", "projects"),
      names: fc.array(fc.constantFrom("ci", "open", "nope", "__proto__"), { maxLength: 2 }),
      uid: fc.constantFrom("u-ci", "u-open", ""),
      beta: fc.boolean(),
      synced: fc.boolean(),
    });
    const open: OwnedAccessKey = {
      metadata: { name: "open", uid: "u-open" },
      spec: { user: "bob" },
    };
    fc.assert(
      fc.property(arbitraryBody, (b) => {
        const spec = {
          resourceAttributes: {
            namespace: b.namespace,
            verb: b.verb,
            group: b.group,
            resource: b.resource,
          },
          extra: { [EXTRA]: b.names },
          uid: b.uid,
        };
        const body = b.beta ? v1beta1Review(spec) : v1Review(spec);
        let answer;
        try {
          answer = review(
            body,
            deps({ keys: keys([KEY, open], b.synced), namespaces: namespaces(b.synced) }),
          );
        } catch (err) {
          // Fail closed: only a key request before the key cache has synced, and only as a 503.
          assert.ok(err instanceof KubeError && err.code === 503, String(err));
          assert.equal(b.synced, false);
          return;
        }
        const status = (answer.body as { status: { allowed: boolean; denied?: boolean } }).status;
        assert.equal(status.allowed, false);
        assert.equal(answer.log.decision, status.denied ? "denied" : "no-opinion");
      }),
    );
  });
});
