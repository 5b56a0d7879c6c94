// What the server makes of a sandbox child's result (wire-result.ts): the patched object comes as
// UTF-8 bytes, is decoded only when read, and anything malformed fails that one object.
import assert from "node:assert/strict";
import { deserialize, serialize } from "node:v8";
import { describe, it } from "mocha";
import { fromWire } from "../../../../webhook/src/patches/sandbox/wire-result.js";

const OBJECT = { metadata: { name: "db", annotations: { note: "naïve ☃ 🚀" } } };

function wire(objectUtf8: unknown): unknown {
  // As it travels: V8 serialization, both ways.
  return deserialize(
    serialize({ ok: true, objectUtf8, explain: [], warnings: ["w"], references: [] }),
  );
}

describe("patches/sandbox wire results", () => {
  it("decodes the patched object's UTF-8 bytes, multi-byte characters included", () => {
    const r = fromWire(wire(Buffer.from(JSON.stringify(OBJECT), "utf8")));
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.value.objectJson), OBJECT);
    assert.equal(r.value.objectJson, r.value.objectJson, "decoded once, the same string after");
    assert.deepEqual(r.value.warnings, ["w"]);
  });

  it("refuses an object sent as a string, a number or nothing", () => {
    for (const bad of [JSON.stringify(OBJECT), 42, undefined, null, { length: 3 }]) {
      const r = fromWire(wire(bad));
      assert.ok(!r.ok);
      assert.equal(r.error.message, "the sandbox returned a malformed result");
    }
  });

  it("refuses results that are not objects, and errors without a message", () => {
    for (const bad of [null, 1, "x", { ok: "yes" }, { ok: false }, { ok: false, error: {} }]) {
      const r = fromWire(bad);
      assert.ok(!r.ok);
      assert.equal(r.error.message, "the sandbox returned a malformed result");
    }
  });

  it("keeps an error's message, patch index and path, and nothing else", () => {
    const r = fromWire({
      ok: false,
      error: { message: "boom", patchIndex: 2, path: "a.b", stack: "/host/path.js:1" },
    });
    assert.ok(!r.ok);
    assert.equal(r.error.message, "boom");
    assert.equal(r.error.patchIndex, 2);
    assert.equal(r.error.path, "a.b");
    assert.ok(!JSON.stringify(r.error).includes("/host/path.js"));
  });

  it("keeps the detail (the message without the words naming the patch), a string only", () => {
    const named = { message: 'patches[2] at "a.b": boom', patchIndex: 2, path: "a.b" };
    const r = fromWire({ ok: false, error: { ...named, detail: "boom" } });
    assert.ok(!r.ok);
    assert.equal(r.error.detail, "boom");
    const odd = fromWire({ ok: false, error: { ...named, detail: 7 } });
    assert.ok(!odd.ok);
    assert.equal(odd.error.detail, named.message, "no detail: the message");
  });
});
