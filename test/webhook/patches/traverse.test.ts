import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { parsePath } from "../../../webhook/src/patches/path.js";
import {
  copyJson,
  copyTree,
  deleteMatch,
  findMatches,
  readMatch,
  writeMatch,
} from "../../../webhook/src/patches/traverse.js";
import type { Json } from "../../../webhook/src/patches/types.js";

/** The keys from `root` to each match: the way down to its parent, found by identity, then its key. */
const matched = (root: Json, path: string) =>
  findMatches(root, parsePath(path)).map((m) => [...keysTo(root, m.parent)!, m.key]);

function keysTo(from: Json, target: object): (string | number)[] | undefined {
  if (from === target) return [];
  if (typeof from !== "object" || from === null) return undefined;
  for (const [key, child] of Object.entries(from)) {
    const below = keysTo(child, target);
    if (below !== undefined) return [Array.isArray(from) ? Number(key) : key, ...below];
  }
  return undefined;
}

describe("patches/traverse", () => {
  const doc: Json = {
    subsets: [
      { addresses: [{ ip: "1" }, { ip: "2", hostname: "h" }] },
      { addresses: [{ ip: "3" }] },
    ],
    metadata: { annotations: { "a.b": "x", "0": "zero", c: null } },
    n: null,
    s: "str",
  };

  it("walks wildcards over arrays and objects in order", () => {
    assert.deepEqual(matched(doc, "subsets[*].addresses[*].ip"), [
      ["subsets", 0, "addresses", 0, "ip"],
      ["subsets", 0, "addresses", 1, "ip"],
      ["subsets", 1, "addresses", 0, "ip"],
    ]);
    assert.deepEqual(matched(doc, "metadata.annotations.*").length, 3);
  });

  it("drops wildcard branches that do not resolve", () => {
    assert.deepEqual(matched(doc, "subsets[*].addresses[*].hostname"), [
      ["subsets", 0, "addresses", 1, "hostname"],
    ]);
  });

  it("an out-of-range index skips only that match (docs/reference.md#patch-path-edge-cases item 5)", () => {
    assert.deepEqual(matched(doc, "subsets[*].addresses[1].ip"), [
      ["subsets", 0, "addresses", 1, "ip"],
    ]);
    assert.deepEqual(matched(doc, "subsets[5]"), []);
  });

  it("an index on an object is the key (docs/reference.md#patch-path-edge-cases item 3)", () => {
    assert.deepEqual(matched(doc, "metadata.annotations[0]"), [["metadata", "annotations", "0"]]);
    assert.deepEqual(matched(doc, "metadata.annotations.0"), [["metadata", "annotations", "0"]]);
  });

  it("a key segment on an array matches nothing", () => {
    assert.deepEqual(matched(doc, "subsets.first"), []);
  });

  it("null and scalar intermediates match nothing (docs/reference.md#patch-path-edge-cases item 7)", () => {
    assert.deepEqual(matched(doc, "n.x"), []);
    assert.deepEqual(matched(doc, "s.length"), []);
    assert.deepEqual(matched(doc, "s[*]"), []);
  });

  it("an existing key with a null value matches (docs/reference.md#patch-path-edge-cases item 8)", () => {
    assert.deepEqual(matched(doc, "metadata.annotations.c"), [["metadata", "annotations", "c"]]);
  });

  it("missing keys are never matched (docs/reference.md#patch-path-edge-cases item 11)", () => {
    assert.deepEqual(matched(doc, `metadata.annotations["missing"]`), []);
    assert.deepEqual(matched(doc, `metadata.labels.x`), []);
  });

  it("never follows prototype members", () => {
    assert.deepEqual(matched(doc, "metadata.constructor"), []);
    assert.deepEqual(matched(doc, "metadata.__proto__"), []);
    assert.deepEqual(matched({ a: [] }, "a.length"), []);
  });

  it("the empty path has no parent to match", () => {
    assert.deepEqual(findMatches(doc, []), []);
  });

  it("a match carries the value found, null where that value is null", () => {
    const values = (path: string) => findMatches(doc, parsePath(path)).map((m) => m.value);
    assert.deepEqual(values("subsets[*].addresses[*].ip"), ["1", "2", "3"]);
    assert.deepEqual(values("metadata.annotations.*"), ["zero", "x", null]);
    assert.deepEqual(values("subsets[1]"), [{ addresses: [{ ip: "3" }] }]);
    for (const m of findMatches(doc, parsePath("*"))) assert.equal(m.value, readMatch(m));
  });

  it("reads, writes and deletes through a match", () => {
    const root = copyJson(doc) as { metadata: { annotations: Record<string, Json> } };
    const [m] = findMatches(root, parsePath(`metadata.annotations["a.b"]`));
    assert.equal(readMatch(m!), "x");
    writeMatch(m!, "y");
    assert.equal(root.metadata.annotations["a.b"], "y");
    deleteMatch(m!);
    assert.equal(Object.hasOwn(root.metadata.annotations, "a.b"), false);
  });

  it("a __proto__ key stays an own key when copied and written", () => {
    const parsed = JSON.parse(`{"__proto__": {"polluted": "yes"}, "a": 1}`) as Json;
    const copy = copyJson(parsed) as Record<string, Json>;
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.ok(Object.hasOwn(copy, "__proto__"));
    const [m] = findMatches(copy, parsePath(`["__proto__"].polluted`));
    writeMatch(m!, "changed");
    assert.deepEqual(copy["__proto__"], { polluted: "changed" });
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  });

  describe("copyJson", () => {
    it("copies deeply", () => {
      const copy = copyJson(doc);
      assert.deepEqual(copy, doc);
      assert.notEqual((copy as { subsets: Json }).subsets, (doc as { subsets: Json }).subsets);
    });

    it("follows JSON.stringify's rules for non-JSON values", () => {
      const odd = { u: undefined, f: () => 1, n: NaN, a: [undefined, Infinity] };
      assert.deepEqual(copyJson(odd), JSON.parse(JSON.stringify(odd)));
    });

    it("rejects cycles and bigints", () => {
      const cyclic: Record<string, unknown> = {};
      cyclic["self"] = cyclic;
      assert.throws(() => copyJson(cyclic), TypeError);
      assert.throws(() => copyJson({ b: 1n }), TypeError);
    });

    it("accepts shared (non-cyclic) references", () => {
      const shared = { x: 1 };
      assert.deepEqual(copyJson({ a: shared, b: shared }), { a: { x: 1 }, b: { x: 1 } });
    });

    it("freezes when asked", () => {
      const frozen = copyJson({ a: { b: [1] } }, true) as { a: { b: number[] } };
      assert.ok(
        Object.isFrozen(frozen) && Object.isFrozen(frozen.a) && Object.isFrozen(frozen.a.b),
      );
      assert.ok(!Object.isFrozen(copyJson({ a: {} })));
    });
  });

  describe("copyTree", () => {
    it("copies parsed JSON deeply, as copyJson does, keeping a __proto__ key an own key", () => {
      const text =
        '{"a":[1,-0,{"b":null,"__proto__":{"p":[true]}}],"0":"zero","s":"x","__proto__":[]}';
      const tree = JSON.parse(text) as Json;
      const copy = copyTree(tree);
      assert.deepStrictEqual(copy, copyJson(tree));
      assert.equal(JSON.stringify(copy), JSON.stringify(tree));
      assert.ok(Object.hasOwn(copy as object, "__proto__"));
      assert.equal(Object.getPrototypeOf(copy), Object.prototype);
      const shared = (v: unknown, w: unknown): boolean =>
        typeof v === "object" &&
        v !== null &&
        (v === w || Object.keys(v).some((k) => shared((v as never)[k], (w as never)[k])));
      assert.equal(shared(copy, tree), false);
    });

    it("returns scalars as they are", () => {
      for (const v of ["s", 1, -0, true, null] as Json[]) assert.ok(Object.is(copyTree(v), v));
    });
  });
});
