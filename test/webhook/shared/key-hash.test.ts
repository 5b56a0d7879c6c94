import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  HASH_PREFIX,
  digestsEqual,
  hashKey,
  isStoredHash,
  storedDigest,
  tokenDigest,
} from "../../../webhook/src/shared/key-hash.js";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");

describe("key-hash", () => {
  it("hashKey is sha256:<hex of SHA-256 of the UTF-8 token>", () => {
    assert.equal(HASH_PREFIX, "sha256:");
    // Known vector: SHA-256("abc").
    assert.equal(
      hashKey("abc"),
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    assert.equal(hashKey("ключ"), `sha256:${sha("ключ")}`);
  });

  it("isStoredHash is exact: 64 lowercase hex after the prefix", () => {
    const hex = sha("x");
    assert.equal(isStoredHash(`sha256:${hex}`), true);
    for (const notHash of [
      hex,
      `sha256:${hex.toUpperCase()}`,
      `sha256:${hex.slice(1)}`,
      `sha256:${hex}0`,
      `SHA256:${hex}`,
      `sha256:${hex}\n`,
      ` sha256:${hex}`,
      `sha256:${hex.slice(1)}g`,
      "sha256:",
      "",
    ]) {
      assert.equal(isStoredHash(notHash), false, JSON.stringify(notHash));
    }
  });

  it("a stored hash and its plain key stand for the same digest", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (token) => {
        const plain = storedDigest(token);
        const hashed = storedDigest(hashKey(token));
        assert.equal(plain.length, 32);
        assert.ok(digestsEqual(plain, hashed));
        assert.ok(digestsEqual(tokenDigest(token), hashed));
      }),
    );
  });

  it("a malformed sha256: value is a plain key (its digest is the hash of the whole string)", () => {
    const malformed = `sha256:${sha("x").toUpperCase()}`;
    assert.equal(storedDigest(malformed).toString("hex"), sha(malformed));
    assert.ok(!digestsEqual(storedDigest(malformed), tokenDigest("x")));
  });

  it("digestsEqual compares content and refuses different lengths without throwing", () => {
    const a = tokenDigest("a");
    assert.equal(digestsEqual(a, Buffer.from(a)), true);
    const flipped = Buffer.from(a);
    flipped[31] = flipped[31]! ^ 1;
    assert.equal(digestsEqual(a, flipped), false);
    assert.equal(digestsEqual(a, a.subarray(0, 31)), false);
    assert.equal(digestsEqual(Buffer.alloc(0), Buffer.alloc(0)), true);
  });
});
