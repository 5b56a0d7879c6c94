// What the server makes of a sandbox child's result (wire-result.ts): the patched object comes as
// UTF-8 bytes, all of one message's in one buffer, is decoded only when read, and anything
// malformed fails that one object.
import assert from "node:assert/strict";
import { deserialize, serialize } from "node:v8";
import { describe, it } from "mocha";
import { fromWire, type BatchResult } from "../../../../webhook/src/patches/sandbox/wire-result.js";

const OBJECT = { metadata: { name: "db", annotations: { note: "naïve ☃ 🚀" } } };

/** A results message as it travels (V8 serialization, both ways), and what the server makes of it. */
function receive(results: unknown[], bytes: unknown = Buffer.alloc(0)): BatchResult[] {
  const m = deserialize(serialize({ results, bytes })) as { results: unknown[]; bytes: Uint8Array };
  return fromWire(m.results, m.bytes);
}

/** One result, alone in its message. */
const one = (result: unknown, bytes?: unknown): BatchResult => receive([result], bytes)[0]!;

describe("patches/sandbox wire results", () => {
  it("decodes each patched object's UTF-8 bytes, multi-byte characters included", () => {
    const first = Buffer.from(JSON.stringify(OBJECT), "utf8");
    const second = Buffer.from(JSON.stringify({ kind: "Other" }), "utf8");
    const [a, failed, b] = receive(
      [
        { ok: true, end: first.length, warnings: ["w"] },
        { ok: false, error: { message: "boom" } },
        { ok: true, end: first.length + second.length },
      ],
      Buffer.concat([first, second]),
    );
    assert.ok(a?.ok && b?.ok && failed && !failed.ok);
    assert.deepEqual(JSON.parse(a.value.objectJson), OBJECT);
    assert.equal(a.value.objectJson, a.value.objectJson, "decoded once, the same string after");
    assert.deepEqual(a.value.warnings, ["w"]);
    assert.deepEqual(JSON.parse(b.value.objectJson), { kind: "Other" });
    assert.deepEqual([b.value.explain, b.value.warnings, b.value.references], [[], [], []]);
  });

  it("refuses an object whose end is missing, out of order or past the bytes", () => {
    const bytes = Buffer.from('{"a":1}{"b":2}', "utf8");
    for (const bad of [undefined, "7", 1.5, -1, 15, null]) {
      const r = one({ ok: true, end: bad }, bytes);
      assert.ok(!r.ok, `end ${String(bad)}`);
      assert.equal(r.error.message, "the sandbox returned a malformed result");
    }
    const [first, backwards] = receive(
      [
        { ok: true, end: 7 },
        { ok: true, end: 3 },
      ],
      bytes,
    );
    assert.ok(first?.ok && backwards && !backwards.ok);
    assert.equal(first.value.objectJson, '{"a":1}');
  });

  it("refuses results that are not objects, lists that are not lists, and errors without a message", () => {
    const bytes = Buffer.from("{}", "utf8");
    for (const bad of [
      null,
      1,
      "x",
      { ok: "yes", end: 2 },
      { ok: true, end: 2, warnings: [7] },
      { ok: true, end: 2, explain: "x" },
      { ok: true, end: 2, references: {} },
      { ok: true, end: 2, explain: null },
      { ok: false },
      { ok: false, error: {} },
    ]) {
      const r = one(bad, bytes);
      assert.ok(!r.ok, JSON.stringify(bad));
      assert.equal(r.error.message, "the sandbox returned a malformed result");
    }
  });

  it("keeps an error's message, patch index and path, and nothing else", () => {
    const r = one({
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
    const r = one({ ok: false, error: { ...named, detail: "boom" } });
    assert.ok(!r.ok);
    assert.equal(r.error.detail, "boom");
    const odd = one({ ok: false, error: { ...named, detail: 7 } });
    assert.ok(!odd.ok);
    assert.equal(odd.error.detail, named.message, "no detail: the message");
  });
});
