import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import { applyCreateDefaults } from "../../../webhook/src/accesskeys/defaults.js";

const req = { username: "alice", name: "ci-key" };
const key = (): string => "generated-key";
const base = (spec?: unknown): OwnedAccessKey =>
  ({
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name: "ci-key" },
    ...(spec === undefined ? {} : { spec }),
  }) as OwnedAccessKey;

describe("applyCreateDefaults", () => {
  it("fills an empty spec", () => {
    const out = applyCreateDefaults(base({}), req, key);
    assert.deepEqual(out.spec, {
      key: "generated-key",
      user: "alice",
      type: "User",
      displayName: "ci-key",
    });
  });

  it("creates a missing or null spec", () => {
    for (const obj of [base(), base(null)]) {
      assert.deepEqual(applyCreateDefaults(obj, req, key).spec, {
        key: "generated-key",
        user: "alice",
        type: "User",
        displayName: "ci-key",
      });
    }
  });

  it("generates a real key by default", () => {
    const a = applyCreateDefaults(base({}), req).spec?.key;
    const b = applyCreateDefaults(base({}), req).spec?.key;
    assert.match(a ?? "", /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b);
  });

  it("fills empty strings", () => {
    const out = applyCreateDefaults(
      base({ key: "", user: "", type: "", displayName: "" }),
      req,
      key,
    );
    assert.deepEqual(out.spec, {
      key: "generated-key",
      user: "alice",
      type: "User",
      displayName: "ci-key",
    });
  });

  it("never overwrites set values", () => {
    const spec = { key: "mine", user: "bob", type: "Other", displayName: "Mine" };
    assert.deepEqual(applyCreateDefaults(base(spec), req, key).spec, spec);
  });

  it("leaves spec.user alone when team or subject is set", () => {
    assert.equal(applyCreateDefaults(base({ team: "devs" }), req, key).spec?.user, undefined);
    assert.equal(applyCreateDefaults(base({ subject: "loft:x" }), req, key).spec?.user, undefined);
  });

  it("leaves wrong-typed values for validation", () => {
    const spec = { key: 5, team: 7, type: ["User"], displayName: false };
    assert.deepEqual(applyCreateDefaults(base(spec), req, key).spec, spec);
    const notAnObject = applyCreateDefaults(base("text"), req, key);
    assert.equal(notAnObject.spec, "text");
  });

  it("uses the given (possibly generated) name, and skips an empty one", () => {
    assert.equal(
      applyCreateDefaults(base({}), { username: "a", name: "key-x7k2p" }, key).spec?.displayName,
      "key-x7k2p",
    );
    assert.equal(
      Object.hasOwn(
        applyCreateDefaults(base({}), { username: "a", name: "" }, key).spec!,
        "displayName",
      ),
      false,
    );
  });

  it("keeps everything else", () => {
    const obj = base({ ttl: 60, scope: { roles: [{ role: "vcluster" }] } });
    const out = applyCreateDefaults(obj, req, key);
    assert.equal(out.spec?.ttl, 60);
    assert.deepEqual(out.spec?.scope, { roles: [{ role: "vcluster" }] });
    assert.deepEqual(out.metadata, { name: "ci-key" });
    assert.equal(out.apiVersion, "management.loft.sh/v1");
  });

  it("does not follow a JSON __proto__ key", () => {
    const obj = JSON.parse('{"spec": {"__proto__": {"key": "x"}}}') as OwnedAccessKey;
    const out = applyCreateDefaults(obj, req, key);
    assert.equal(out.spec?.key, "generated-key");
    assert.equal(({} as Record<string, unknown>)["key"], undefined);
  });

  it("never mutates its input and shares nothing with it", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const spec = fc.dictionary(
      fc.constantFrom("key", "user", "team", "subject", "type", "displayName", "ttl", "scope"),
      fc.oneof(fc.constant(""), fc.constant(null), fc.string(), json),
    );
    fc.assert(
      fc.property(fc.option(spec, { nil: undefined }), (s) => {
        // As the webhook gets it: parsed JSON (plain prototypes, own "__proto__" keys as data).
        const obj = JSON.parse(JSON.stringify(base(s))) as OwnedAccessKey;
        const before = structuredClone(obj);
        const out = applyCreateDefaults(obj, req, key);
        assert.deepEqual(obj, before);
        assert.notEqual(out, obj);
        if (out.spec && typeof out.spec === "object") assert.notEqual(out.spec, obj.spec);
        // set values survive unchanged
        for (const [k, v] of Object.entries(before.spec ?? {})) {
          if (v !== "" && v !== null) assert.deepEqual((out.spec as Record<string, unknown>)[k], v);
        }
      }),
    );
  });
});
