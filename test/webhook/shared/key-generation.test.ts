import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { generateAccessKey } from "../../../webhook/src/shared/key-generation.js";

describe("generateAccessKey", () => {
  it("carries at least 256 bits", () => {
    const key = generateAccessKey();
    assert.ok(Buffer.from(key, "base64url").length * 8 >= 256, key);
    assert.equal(key.length, 43);
  });

  it("uses only URL-safe characters and no padding", () => {
    for (let i = 0; i < 200; i++) assert.match(generateAccessKey(), /^[A-Za-z0-9_-]{43}$/);
  });

  it("never repeats", () => {
    const keys = new Set(Array.from({ length: 10_000 }, generateAccessKey));
    assert.equal(keys.size, 10_000);
  });

  it("uses the whole alphabet (the bytes are random, not a fixed pattern)", () => {
    const seen = new Set(Array.from({ length: 200 }, generateAccessKey).join(""));
    assert.ok(seen.size >= 60, `only ${seen.size} distinct characters`);
  });
});
