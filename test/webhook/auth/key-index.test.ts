import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { accessKey, FakeKeys } from "./fake-keys.js";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { KeyIndex } from "../../../webhook/src/auth/key-index.js";

function setup() {
  const keys = new FakeKeys();
  const index = new KeyIndex(keys);
  const put = (key: OwnedAccessKey) => {
    const name = key.metadata!.name!;
    const type = keys.objects.has(name) ? "MODIFIED" : "ADDED";
    keys.objects.set(name, key);
    index.apply(type, name);
  };
  const del = (name: string) => {
    keys.objects.delete(name);
    index.apply("DELETED", name);
  };
  return { keys, index, put, del };
}

const names = (r: ReturnType<KeyIndex["findByToken"]>) =>
  r.kind === "found" ? r.key.metadata?.name : r.kind;

describe("KeyIndex", () => {
  it("finds plain and hashed keys by token, and nothing else", () => {
    const { index, put } = setup();
    put(accessKey("plain", { key: "plain-token", user: "alice" }));
    put(accessKey("hashed", { key: hashKey("hashed-token"), user: "bob" }));
    assert.equal(index.size, 2);
    assert.equal(names(index.findByToken("plain-token")), "plain");
    assert.equal(names(index.findByToken("hashed-token")), "hashed");
    // The stored hash is not itself a token.
    assert.equal(index.findByToken(hashKey("hashed-token")).kind, "none");
    for (const near of ["plain-toke", "plain-tokenX", "Plain-token", " plain-token", ""]) {
      assert.equal(index.findByToken(near).kind, "none", near);
    }
  });

  it("follows MODIFIED (rotation) and DELETED", () => {
    const { index, put, del } = setup();
    put(accessKey("k", { key: "old" }));
    put(accessKey("k", { key: "new" }));
    assert.equal(index.findByToken("old").kind, "none");
    assert.equal(names(index.findByToken("new")), "k");
    put(accessKey("k", { key: hashKey("new") }));
    assert.equal(names(index.findByToken("new")), "k");
    assert.equal(index.size, 1);
    del("k");
    assert.equal(index.findByToken("new").kind, "none");
    assert.equal(index.size, 0);
    // A DELETED for an unknown name is harmless.
    index.apply("DELETED", "never-seen");
    assert.equal(index.size, 0);
  });

  it("does not index absent, empty or non-string keys", () => {
    const { index, put } = setup();
    put(accessKey("a", {}));
    put(accessKey("b", { key: "" }));
    put(accessKey("c", { key: 42 }));
    put(accessKey("d", { key: ["x"] }));
    put(JSON.parse('{"metadata":{"name":"e"},"spec":{"__proto__":{"key":"proto"}}}'));
    assert.equal(index.size, 0);
    assert.equal(index.findByToken("proto").kind, "none");
    // A key that loses its value leaves the index.
    put(accessKey("f", { key: "t" }));
    put(accessKey("f", { key: "" }));
    assert.equal(index.findByToken("t").kind, "none");
    assert.equal(index.size, 0);
  });

  it("reports collisions (plain and hashed forms of one key) as ambiguous", () => {
    const { index, put, del } = setup();
    put(accessKey("a", { key: "same" }));
    put(accessKey("b", { key: hashKey("same") }));
    assert.deepEqual(index.findByToken("same"), { kind: "ambiguous", names: ["a", "b"] });
    assert.deepEqual(index.namesWithSameKey("same"), ["a", "b"]);
    assert.deepEqual(index.namesWithSameKey(hashKey("same")), ["a", "b"]);
    del("a");
    assert.equal(names(index.findByToken("same")), "b");
    assert.deepEqual(index.namesWithSameKey("same"), ["b"]);
    assert.deepEqual(index.namesWithSameKey("other"), []);
    assert.deepEqual(index.namesWithSameKey(""), []);
  });

  it("answers none when the cache already holds a newer key than the index saw", () => {
    const { keys, index, put } = setup();
    put(accessKey("k", { key: "old" }));
    keys.objects.set("k", accessKey("k", { key: "rotated" })); // apply() not called yet
    assert.equal(index.findByToken("old").kind, "none");
    keys.objects.delete("k");
    assert.equal(index.findByToken("old").kind, "none");
  });

  it("keys and names that look like object members are ordinary", () => {
    const { index, put } = setup();
    put(accessKey("__proto__", { key: "constructor" }));
    put(accessKey("toString", { key: "__proto__" }));
    assert.equal(names(index.findByToken("constructor")), "__proto__");
    assert.equal(names(index.findByToken("__proto__")), "toString");
    assert.equal(index.findByToken("hasOwnProperty").kind, "none");
    assert.equal(index.size, 2);
  });

  it("synced() delegates to the source", () => {
    const { keys, index } = setup();
    assert.equal(index.synced(), true);
    keys.isSynced = false;
    assert.equal(index.synced(), false);
  });

  it("agrees with a linear scan after any sequence of changes (property)", () => {
    const op = fc.record({
      name: fc.constantFrom("a", "b", "c", "d"),
      token: fc.option(fc.constantFrom("t1", "t2", "t3"), { nil: undefined }),
      hashed: fc.boolean(),
      del: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const { keys, index, put, del } = setup();
        for (const o of ops) {
          if (o.del) del(o.name);
          else {
            const key = o.token === undefined ? undefined : o.hashed ? hashKey(o.token) : o.token;
            put(accessKey(o.name, key === undefined ? {} : { key }));
          }
        }
        for (const token of ["t1", "t2", "t3"]) {
          const holders = [...keys.objects.values()]
            .filter((k) => k.spec?.key === token || k.spec?.key === hashKey(token))
            .map((k) => k.metadata!.name!)
            .sort();
          const got = index.findByToken(token);
          if (holders.length === 0) assert.equal(got.kind, "none");
          else if (holders.length === 1) assert.equal(names(got), holders[0]);
          else assert.deepEqual(got.kind === "ambiguous" && got.names.sort(), holders);
        }
      }),
    );
  });

  it("finds every key through growth, deletes and rotations (tombstones, rehashes)", () => {
    const { index, put, del } = setup();
    for (let i = 0; i < 3000; i++) put(accessKey(`k${i}`, { key: `t${i}` }));
    for (let i = 0; i < 3000; i += 2) del(`k${i}`);
    for (let i = 1; i < 3000; i += 4) put(accessKey(`k${i}`, { key: hashKey(`r${i}`) }));
    for (let i = 0; i < 1000; i++) put(accessKey(`n${i}`, { key: `t${i * 2}` }));
    assert.equal(index.size, 2500);
    for (let i = 0; i < 3000; i++) {
      const rotated = i % 4 === 1;
      assert.equal(
        names(index.findByToken(`t${i}`)),
        i % 2 === 0 ? (i < 2000 ? `n${i / 2}` : "none") : rotated ? "none" : `k${i}`,
      );
      if (rotated) assert.equal(names(index.findByToken(`r${i}`)), `k${i}`);
    }
  });

  it("lookup cost does not grow with the number of keys", function () {
    this.timeout(120_000);
    const time = (index: KeyIndex, tokens: string[]) => {
      const start = process.hrtime.bigint();
      for (const t of tokens) index.findByToken(t);
      return Number(process.hrtime.bigint() - start);
    };
    const build = (n: number) => {
      const { index, put } = setup();
      for (let i = 0; i < n; i++) put(accessKey(`k${i}`, { key: `token-${i}` }));
      return index;
    };
    const small = build(10);
    const large = build(100_000);
    const probes = Array.from({ length: 20_000 }, (_, i) => `token-${i % 10}`);
    time(small, probes.slice(0, 2000));
    time(large, probes.slice(0, 2000));
    // Best of three, to be robust against a noisy shared machine.
    const best = (index: KeyIndex) => Math.min(...[0, 1, 2].map(() => time(index, probes)));
    const ratio = best(large) / best(small);
    assert.ok(ratio < 3, `100k keys took ${ratio.toFixed(2)}× as long as 10 keys`);
    assert.equal(names(large.findByToken("token-99999")), "k99999");
  });
});
