// The fuzzer's judge, JSON tree and JSON Patch without a server: what counts as a failure must be
// caught, and what vgate is documented to answer must pass.

import assert from "node:assert/strict";
import { fuzzBases, type Base } from "./bodies.js";
import { IDENTITIES } from "./identities.js";
import { applyJsonPatch, PatchError } from "./json-patch.js";
import { fromJson, Obj, Raw, toText } from "./json-tree.js";
import { keyShowing, knownKeys } from "./key-leaks.js";
import { hashed, LAST_APPLIED, plantedKey, plantKeys, type KeyPlan } from "./keys.js";
import { applyMutation, type FuzzInput } from "./mutations.js";
import { judge, setsNewKey } from "./outcome.js";
import type { Answer } from "../soak/timed-client.js";

const body = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "u-1" },
};
const input = (route: FuzzInput["route"] = "/validate/ownedaccesskeys"): FuzzInput => ({
  from: "test",
  route,
  method: "POST",
  contentType: "application/json",
  body: Buffer.from(JSON.stringify(body)),
  mutations: [],
  target: "plain",
  identity: "kube-apiserver",
  keys: [],
  wellFormed: false,
});
const answer = (status: number, value: unknown): Answer => ({
  status,
  contentType: "application/json",
  text: typeof value === "string" ? value : JSON.stringify(value),
  ms: 1,
});
const REASON: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  405: "MethodNotAllowed",
  409: "AlreadyExists",
  422: "Invalid",
  500: "InternalError",
  503: "ServiceUnavailable",
};
const status = (code: number, message = "m", reason = REASON[code]) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message,
});
const NOT_LOADED = "access keys are not loaded yet; try again";

/** An admission answer to `fuzzed`, echoing its uid. */
function review(fuzzed: FuzzInput, response: Record<string, unknown>): Answer {
  const uid = (JSON.parse(fuzzed.body.toString("utf8")) as { request: { uid: string } }).request
    .uid;
  return answer(200, { kind: "AdmissionReview", response: { uid, ...response } });
}
const denied = (code: number, message = "m", causes: { field: string }[] = []) => ({
  allowed: false,
  status: { ...status(code, message), details: { causes } },
});
const patched = (ops: unknown[]) => ({
  allowed: true,
  patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
  patchType: "JSONPatch",
});

const BASES = new Map(fuzzBases().map((b) => [b.name, b]));
const PLAN: KeyPlan = {
  form: "plain",
  shape: "lower-case",
  old: "same",
  copies: [],
  seed: 7,
  shortLength: 20,
};
const KEY = plantedKey(PLAN);

/** A base with keys planted as `plan` says, unmutated, sent to `target`. */
function planted(
  name: string,
  plan: Partial<KeyPlan> = {},
  target: FuzzInput["target"] = "hashed",
  more: Partial<FuzzInput> = {},
): FuzzInput {
  const base = BASES.get(name) as Base;
  const full = { ...PLAN, ...plan };
  const p = plantKeys(base, full);
  return {
    from: name,
    target,
    identity: "kube-apiserver",
    route: base.route,
    method: "POST",
    contentType: "application/json",
    body: Buffer.from(JSON.stringify(p.body)),
    mutations: [],
    plan: full,
    keys: p.plaintexts,
    wellFormed: true,
    ...more,
  };
}

describe("fuzz judge", () => {
  it("accepts a review of the route's kind echoing the uid, and a 4xx metav1.Status", () => {
    const ok = {
      kind: "AdmissionReview",
      response: { uid: "u-1", ...denied(403) },
    };
    assert.equal(judge(input(), answer(200, ok)).problem, undefined);
    assert.deepEqual(judge(input(), answer(400, status(400))), { outcome: "400 Status" });
    const tr = { kind: "TokenReview", status: { authenticated: false } };
    assert.equal(judge(input("/authenticate"), answer(200, tr)).problem, undefined);
  });

  it("flags 5xx, a wrong uid or kind, a 4xx that is no Status, non-JSON and hangs", () => {
    const problems = [
      judge(input(), answer(500, status(500))),
      judge(input(), answer(503, status(503))),
      judge(
        input(),
        answer(200, { kind: "AdmissionReview", response: { uid: "u-2", allowed: true } }),
      ),
      judge(input(), answer(200, { kind: "TokenReview", status: { authenticated: false } })),
      judge(
        input(),
        answer(200, { kind: "AdmissionReview", response: { uid: "u-1", ...denied(500) } }),
      ),
      // A denial without a status, and one whose code is no refusal.
      judge(
        input(),
        answer(200, { kind: "AdmissionReview", response: { uid: "u-1", allowed: false } }),
      ),
      judge(
        input(),
        answer(200, { kind: "AdmissionReview", response: { uid: "u-1", ...denied(200) } }),
      ),
      judge(input(), answer(400, { ...status(400), code: 404 })),
      judge(input(), answer(400, "Bad Request")),
      judge(input(), { ...answer(0, ""), error: "TIMEOUT" }),
      judge(input(), { ...answer(0, ""), error: "ECONNRESET" }),
    ];
    for (const p of problems) assert.ok(p.problem, JSON.stringify(p));
  });

  it("flags a Status whose reason is not the one kube gives its code", () => {
    assert.match(
      judge(input(), answer(422, status(422, "m", "BadRequest"))).problem ?? "",
      /code 422 with reason "BadRequest", not Invalid/,
    );
    assert.ok(
      judge(
        input(),
        answer(200, {
          kind: "AdmissionReview",
          response: { uid: "u-1", allowed: false, status: status(409, "m", "Invalid") },
        }),
      ).problem,
    );
    assert.equal(judge(input(), answer(409, status(409))).problem, undefined);
  });
});

describe("fuzz judge: client certificates", () => {
  const strangers = IDENTITIES.filter((i) => i !== "kube-apiserver");
  const tokenReview = { kind: "TokenReview", status: { authenticated: false } };

  it("requires 401 Unauthorized on the review routes from every caller but kube-apiserver", () => {
    for (const identity of strangers) {
      for (const route of ["/authenticate", "/authorize"] as const) {
        const fuzzed = { ...input(route), identity };
        const refused = judge(fuzzed, answer(401, status(401)));
        assert.equal(refused.problem, undefined);
        assert.deepEqual(refused.tags, [`certificate refused: ${identity}`]);
        assert.equal(refused.outcome, `401 Status, ${identity}`);
        // A review, a refusal of the body, an error, or 401 with another reason: all wrong.
        for (const wrong of [
          answer(200, tokenReview),
          answer(400, status(400)),
          answer(415, status(415, "m", "UnsupportedMediaType")),
          answer(503, status(503, NOT_LOADED)),
          answer(401, status(401, "m", "Forbidden")),
        ]) {
          assert.match(judge(fuzzed, wrong).problem ?? "", /not 401 Unauthorized/, wrong.text);
        }
      }
    }
  });

  it("accepts 405 only for another method, and a reset connection, never a hang", () => {
    const stranger = { ...input("/authenticate"), identity: "expired" as const };
    assert.ok(judge(stranger, answer(405, status(405))).problem);
    assert.equal(
      judge({ ...stranger, method: "GET" }, answer(405, status(405))).problem,
      undefined,
    );
    for (const error of ["ECONNRESET", "EPIPE"]) {
      const reset = { ...answer(0, ""), error };
      assert.deepEqual(judge(stranger, reset), {
        outcome: "connection reset, expired",
        tags: ["reset instead of 401"],
      });
      // kube-apiserver's own certificate, and the admission routes, get no such allowance.
      assert.ok(judge({ ...stranger, identity: "kube-apiserver" }, reset).problem);
      assert.ok(judge({ ...stranger, route: "/validate/ownedaccesskeys" }, reset).problem);
    }
    for (const error of ["TIMEOUT", "ECONNREFUSED", "EPROTO"]) {
      assert.ok(judge(stranger, { ...answer(0, ""), error }).problem, error);
    }
    // Node's TLS layer drops a look-alike CA's connection now and then, whatever the route.
    const lookAlike = { ...input(), identity: "look-alike CA" as const };
    assert.deepEqual(judge(lookAlike, { ...answer(0, ""), error: "ECONNRESET" }).tags, [
      "reset by TLS: look-alike CA",
    ]);
    assert.ok(judge(lookAlike, { ...answer(0, ""), error: "TIMEOUT" }).problem);
  });

  it("judges admission routes as usual whatever the certificate", () => {
    const fuzzed = { ...input(), identity: "no certificate" as const };
    const ok = { kind: "AdmissionReview", response: { uid: "u-1", allowed: true } };
    assert.deepEqual(judge(fuzzed, answer(200, ok)), {
      outcome: "200 AdmissionReview allowed",
      tags: [],
    });
  });
});

describe("fuzz judge: keys", () => {
  it("flags an answer that shows a key vgate knows, whole or a piece of 16 characters", () => {
    const fuzzed = planted("validate CREATE (alice)", {}, "plain");
    assert.deepEqual(fuzzed.keys, [KEY]);
    const message = (text: string) => review(fuzzed, denied(422, text));
    assert.match(judge(fuzzed, message(`bad ${KEY}`)).problem ?? "", /shows planted key 1/);
    assert.match(
      judge(fuzzed, message(`bad ${KEY.slice(5, 21)}`)).problem ?? "",
      /shows characters 6-21 of planted key 1/,
    );
    assert.equal(judge(fuzzed, message(`bad ${KEY.slice(5, 20)}`)).problem, undefined);
    assert.ok(!(judge(fuzzed, message(KEY)).problem ?? "").includes(KEY), "never the key itself");
  });

  it("knows a copy of spec.key's key by its hash only with hashed storage", () => {
    const copied: Partial<KeyPlan> = { form: "hashed", copies: ["label name"] };
    const body = JSON.parse(
      planted("validate CREATE (alice)", copied).body.toString("utf8"),
    ) as unknown;
    assert.deepEqual(knownKeys("hashed", [KEY], body), [KEY]);
    assert.deepEqual(knownKeys("plain", [KEY], body), []);
    // By its hash vgate looks for keys of 32 characters or more only.
    const short = KEY.slice(0, 31);
    const withShort = { request: { object: { spec: { key: hashed(short) } } } };
    assert.deepEqual(knownKeys("hashed", [short], withShort), []);
    assert.deepEqual(
      knownKeys("hashed", [KEY], { request: { object: { spec: { key: hashed(KEY) } } } }),
      [KEY],
    );
    const leak = planted("mutate CREATE (alice)", copied);
    const refusal = review(leak, denied(422, `metadata.labels[${KEY}]: Forbidden`));
    assert.match(judge(leak, refusal).problem ?? "", /shows planted key 1/);
    assert.equal(
      judge({ ...leak, target: "plain", wellFormed: false }, refusal).problem,
      undefined,
    );
  });

  it("knows the plaintext key of last-applied-configuration with hashed storage", () => {
    const other = plantedKey(PLAN, 2);
    const fuzzed = planted("mutate CREATE (admin)", {
      form: "hashed",
      copies: ["last-applied, another key"],
    });
    const body = JSON.parse(fuzzed.body.toString("utf8")) as unknown;
    assert.deepEqual(knownKeys("hashed", fuzzed.keys, body), [other]);
    assert.deepEqual(knownKeys("unsynced", fuzzed.keys, body), []);
  });

  it("requires a patch to apply, and follows an admitted /mutate with the /validate kube-apiserver sends", () => {
    const fuzzed = planted("mutate CREATE (admin)", {}, "plain", { wellFormed: false });
    const bad = judge(fuzzed, review(fuzzed, patched([{ op: "remove", path: "/spec/nothing" }])));
    assert.match(bad.problem ?? "", /patch does not apply.*does not exist/);
    const ok = judge(
      fuzzed,
      review(fuzzed, patched([{ op: "add", path: "/spec/displayName", value: "x" }])),
    );
    assert.equal(ok.problem, undefined);
    const next = ok.next!;
    assert.equal(next.route, "/validate/ownedaccesskeys");
    assert.equal(next.admitted, true);
    const sent = JSON.parse(next.body.toString("utf8")) as {
      request: { uid: string; object: { spec: { displayName: string; key: string } } };
    };
    assert.equal(sent.request.object.spec.displayName, "x");
    assert.equal(sent.request.object.spec.key, KEY);
    // Nothing follows a DELETE, or a denial.
    const del = planted("mutate DELETE", {}, "plain", { wellFormed: false });
    assert.equal(judge(del, review(del, { allowed: true })).next, undefined);
    assert.equal(judge(fuzzed, review(fuzzed, denied(422))).next, undefined);
  });

  it("with hashed storage, fails an admitted object that still holds the key", () => {
    const fuzzed = planted("mutate CREATE (admin)", { copies: ["annotation"] }, "hashed", {
      wellFormed: false,
    });
    // A /mutate that hashes spec.key but leaves the copy: fine only if /validate then refuses.
    const keep = judge(
      fuzzed,
      review(fuzzed, patched([{ op: "replace", path: "/spec/key", value: hashed(KEY) }])),
    );
    assert.equal(keep.problem, undefined);
    assert.deepEqual(keep.tags, ["plaintext key left for /validate"]);
    const next = keep.next!;
    assert.equal(judge(next, review(next, denied(422))).problem, undefined);
    assert.match(
      judge(next, review(next, { allowed: true })).problem ?? "",
      /hashed storage admitted an object that holds planted key 1/,
    );
    // The same answers from plain storage are no failure: it keeps keys as they are.
    const plain = { ...next, target: "plain" as const };
    assert.equal(judge(plain, review(plain, { allowed: true })).problem, undefined);
  });
});

describe("fuzz judge: keys shorter than 32 characters", () => {
  it("does not count a copy of the stored short key in what hashed storage admits, but a new one", () => {
    const copy: Partial<KeyPlan> = { form: "short", copies: ["annotation"] };
    const kept = planted("mutate UPDATE", { ...copy, old: "same" }, "hashed", {
      wellFormed: false,
    });
    const admitted = judge(kept, review(kept, { allowed: true })).next!;
    assert.equal(judge(admitted, review(admitted, { allowed: true })).problem, undefined);
    // A new short key stored with its copy is a leak (and a weak key): both are looked for.
    const fresh = planted("mutate UPDATE", { ...copy, old: "rotated" }, "hashed", {
      wellFormed: false,
    });
    const next = judge(fresh, review(fresh, { allowed: true })).next!;
    assert.match(
      judge(next, review(next, { allowed: true })).problem ?? "",
      /admitted an object that holds planted key 1 \(20 characters\)/,
    );
  });
});

describe("fuzz judge: an unsynced key cache", () => {
  const unsynced = (f: FuzzInput): FuzzInput => ({ ...f, target: "unsynced", wellFormed: false });

  it("accepts the documented 503 from the unsynced vgate only, and nothing that lets a key in", () => {
    const login = unsynced(input("/authenticate"));
    assert.deepEqual(judge(login, answer(503, status(503, NOT_LOADED))), {
      outcome: "503 Status",
      tags: ["not loaded (503)"],
    });
    for (const [fuzzed, res] of [
      [{ ...login, target: "plain" }, answer(503, status(503, NOT_LOADED))],
      [login, answer(503, status(503, "etcd is down"))],
      [login, answer(500, status(500, NOT_LOADED))],
      [login, answer(200, { kind: "TokenReview", status: { authenticated: true } })],
      [
        unsynced(input("/authorize")),
        answer(200, { kind: "SubjectAccessReview", status: { allowed: true } }),
      ],
    ] as const) {
      assert.ok(judge(fuzzed, res).problem, `${fuzzed.target} ${res.text}`);
    }
    assert.equal(
      judge(login, answer(200, { kind: "TokenReview", status: { authenticated: false } })).problem,
      undefined,
    );
  });

  it("fails /validate admitting a new key, and accepts its 503 denial", () => {
    const create = unsynced(planted("validate CREATE (admin)", {}, "unsynced"));
    assert.match(
      judge(create, review(create, { allowed: true })).problem ?? "",
      /new key admitted while the access keys are not loaded/,
    );
    assert.deepEqual(judge(create, review(create, denied(503, NOT_LOADED))).tags, [
      "new key refused (503)",
    ]);
    assert.ok(
      judge({ ...create, target: "hashed" }, review(create, denied(503, NOT_LOADED))).problem,
    );
    // An UPDATE that keeps its key (hashed or not) is no new key; a rotation is.
    const same = unsynced(planted("validate UPDATE", { old: "same" }, "unsynced"));
    assert.equal(judge(same, review(same, { allowed: true })).problem, undefined);
    const rotated = unsynced(planted("validate UPDATE", { old: "rotated" }, "unsynced"));
    assert.ok(judge(rotated, review(rotated, { allowed: true })).problem);
  });

  it("tells a new key by its digest: a key and its sha256:<hex> are one key", () => {
    const update = (key: unknown, old: unknown) => ({
      operation: "UPDATE",
      object: { spec: { key } },
      oldObject: { spec: { key: old } },
    });
    assert.equal(setsNewKey(update(KEY, hashed(KEY))), false);
    assert.equal(setsNewKey(update(hashed(KEY), KEY)), false);
    assert.equal(setsNewKey(update(KEY, hashed(`${KEY}x`))), true);
    assert.equal(setsNewKey(update("", KEY)), false);
    assert.equal(setsNewKey(update(5, KEY)), false);
    assert.equal(setsNewKey({ operation: "CREATE", object: { spec: { key: KEY } } }), true);
    assert.equal(setsNewKey({ operation: "DELETE", object: { spec: { key: KEY } } }), false);
  });
});

describe("fuzz judge: what the README says a well-formed request gets", () => {
  it("unsynced: 503 for a login and a key's SubjectAccessReview", () => {
    const login = planted("TokenReview v1", {}, "unsynced");
    assert.deepEqual(judge(login, answer(503, status(503, NOT_LOADED))).tags, [
      "not loaded (503)",
      "login refused until loaded",
    ]);
    const tr = { kind: "TokenReview", status: { authenticated: false } };
    assert.match(judge(login, answer(200, tr)).problem ?? "", /expected a 503/);
    const sar = planted("SubjectAccessReview v1 (key)", {}, "unsynced");
    assert.match(
      judge(sar, answer(200, { kind: "SubjectAccessReview", status: { allowed: false } }))
        .problem ?? "",
      /expected a 503/,
    );
  });

  it("hashed: /mutate hashes spec.key and last-applied's key, and refuses a copy elsewhere", () => {
    const fuzzed = planted("mutate CREATE (admin)", { copies: ["last-applied"] });
    const lastApplied = JSON.parse(
      (
        JSON.parse(fuzzed.body.toString("utf8")) as {
          request: { object: { metadata: { annotations: Record<string, string> } } };
        }
      ).request.object.metadata.annotations[LAST_APPLIED]!,
    ) as { spec: { key: string } };
    assert.equal(lastApplied.spec.key, KEY);
    const hashedText = JSON.stringify({
      ...lastApplied,
      spec: { ...lastApplied.spec, key: hashed(KEY) },
    });
    const path = `/metadata/annotations/${LAST_APPLIED.replace("/", "~1")}`;
    const good = judge(
      fuzzed,
      review(
        fuzzed,
        patched([
          { op: "replace", path: "/spec/key", value: hashed(KEY) },
          { op: "replace", path, value: hashedText },
        ]),
      ),
    );
    assert.equal(good.problem, undefined);
    assert.ok(good.tags?.includes("key hashed"));
    const halfway = judge(
      fuzzed,
      review(fuzzed, patched([{ op: "replace", path: "/spec/key", value: hashed(KEY) }])),
    );
    assert.match(halfway.problem ?? "", /last-applied-configuration with spec.key "[a-z]{40}"/);
    const copied = planted("mutate UPDATE", { form: "hashed", copies: ["description"] });
    assert.match(
      judge(copied, review(copied, { allowed: true })).problem ?? "",
      /expected a denial 422 Invalid \(key shown elsewhere refused\)/,
    );
    assert.equal(judge(copied, review(copied, denied(422))).problem, undefined);
  });

  it("every storage: a new key shorter than 32 characters is refused on spec.key", () => {
    const short = planted("validate CREATE (alice)", { form: "short" }, "plain");
    assert.ok(
      judge(short, review(short, denied(422, "m", [{ field: "spec.key" }]))).tags?.includes(
        "short key refused",
      ),
    );
    assert.match(
      judge(short, review(short, denied(422, "m", [{ field: "metadata.name" }]))).problem ?? "",
      /no cause on spec.key/,
    );
    assert.ok(judge(short, review(short, { allowed: true })).problem);
    // Too busy says nothing about the request: it is retried.
    assert.equal(judge(short, answer(429, status(429, "m", "TooManyRequests"))).problem, undefined);
  });
});

describe("fuzz JSON Patch", () => {
  it("applies add, remove, replace, move, copy and test to a copy", () => {
    const doc = { a: { b: [1, 2] }, "x/y": 1 };
    const out = applyJsonPatch(doc, [
      { op: "add", path: "/a/b/1", value: 9 },
      { op: "remove", path: "/a/b/0" },
      { op: "replace", path: "/x~1y", value: 2 },
      { op: "copy", from: "/a/b", path: "/c" },
      { op: "move", from: "/c", path: "/d" },
      { op: "add", path: "/a/b/-", value: 3 },
      { op: "test", path: "/d", value: [9, 2] },
    ]);
    assert.deepEqual(out, { a: { b: [9, 2, 3] }, "x/y": 2, d: [9, 2] });
    assert.deepEqual(doc, { a: { b: [1, 2] }, "x/y": 1 });
    assert.throws(
      () => applyJsonPatch(doc, [{ op: "replace", path: "/nope", value: 1 }]),
      PatchError,
    );
    assert.throws(() => applyJsonPatch(doc, [{ op: "add", path: "/a/b/5", value: 1 }]), PatchError);
    assert.throws(() => applyJsonPatch(doc, [{ op: "test", path: "/x~1y", value: 2 }]), PatchError);
  });

  it("treats __proto__ as a key and never touches a prototype", () => {
    const doc = JSON.parse('{"__proto__":{"a":1}}') as Record<string, unknown>;
    const out = applyJsonPatch(doc, [
      { op: "add", path: "/__proto__/polluted", value: true },
      { op: "add", path: "/x", value: {} },
      { op: "add", path: "/x/__proto__", value: { polluted: true } },
    ]) as Record<string, Record<string, unknown>>;
    assert.equal(
      JSON.stringify(out),
      '{"__proto__":{"a":1,"polluted":true},"x":{"__proto__":{"polluted":true}}}',
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(out.x), Object.prototype);
  });
});

describe("fuzz keys", () => {
  it("plants keys where the plan says, and reports every plaintext it put in", () => {
    const fuzzed = planted("mutate UPDATE", {
      form: "hashed",
      old: "same, plaintext",
      copies: ["label name", "last-applied, another key"],
    });
    const sent = JSON.parse(fuzzed.body.toString("utf8")) as {
      request: {
        object: { spec: { key: string }; metadata: Record<string, Record<string, string>> };
        oldObject: { spec: { key: string } };
      };
    };
    const { object, oldObject } = sent.request;
    assert.equal(object.spec.key, hashed(KEY));
    assert.equal(oldObject.spec.key, KEY);
    assert.equal(object.metadata.labels![KEY], "x");
    const applied = JSON.parse(object.metadata.annotations![LAST_APPLIED]!) as {
      spec: { key: string };
      metadata: Record<string, unknown>;
    };
    assert.equal(applied.spec.key, plantedKey(PLAN, 2));
    assert.deepEqual(Object.keys(applied.metadata).sort(), ["labels", "name"]);
    assert.deepEqual(fuzzed.keys.sort(), [KEY, plantedKey(PLAN, 2)].sort());
    assert.equal(keyShowing(JSON.stringify(object), [KEY]), "planted key 1 (40 characters)");
  });

  it("makes keys from the seed alone: random base64url of 43, or 40 lower-case letters", () => {
    const random = plantedKey({ seed: 1, shape: "random" });
    assert.match(random, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(plantedKey({ seed: 1, shape: "random" }), random);
    assert.match(plantedKey({ seed: 1, shape: "lower-case" }), /^[a-z]{40}$/);
    assert.notEqual(plantedKey({ seed: 1, shape: "random" }, 1), random);
  });
});

describe("fuzz JSON tree", () => {
  it("prints duplicate keys, __proto__ and raw numbers that JSON.stringify cannot", () => {
    const tree = fromJson({ a: [1, "x"] }) as Obj;
    tree.entries.push(["a", new Raw("1e400")], ["__proto__", new Obj([["polluted", true]])]);
    assert.equal(toText(tree), '{"a":[1,"x"],"a":1e400,"__proto__":{"polluted":true}}');
  });

  it("mutates a copy of generated values, never the values themselves", () => {
    const value = new Obj([]);
    const root = fromJson({ a: { b: 1 } });
    const { root: out, what } = applyMutation(root, { kind: "retype", pick: 1, value });
    assert.equal(what, "retype at 0");
    assert.equal(toText(out), '{"a":{}}');
    applyMutation(out, { kind: "__proto__", pick: 1, value: "__proto__" });
    assert.equal(value.entries.length, 0);
  });
});
