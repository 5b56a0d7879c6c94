import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { PackedStore } from "../../../../webhook/src/kube/controller/packed-store.js";
import { MapStore } from "../../../../webhook/src/kube/controller/watch-cache.js";

type Obj = Record<string, unknown>;

const contents = (store: MapStore<Obj> | PackedStore<Obj>) =>
  new Map([...store.keys()].map((k) => [k, [store.version(k), store.get(k)]]));

describe("PackedStore", () => {
  it("gives back what was set, a copy each time, with its version", () => {
    const store = new PackedStore<Obj>();
    const object = {
      metadata: { name: "a", uid: "ü-\u{1F511}" },
      spec: { key: "k", n: [1, null] },
    };
    store.set("a", object, "7");
    assert.deepEqual(store.get("a"), object);
    assert.equal(store.version("a"), "7");
    const copy = store.get("a")!;
    (copy["spec"] as Obj)["key"] = "changed";
    assert.deepEqual(store.get("a"), object, "a reader's change does not reach the store");
    store.set("a", { replaced: true }, "8");
    assert.deepEqual(store.get("a"), { replaced: true });
    assert.equal(store.version("a"), "8");
    assert.equal(store.size, 1);
    store.delete("a");
    assert.equal(store.get("a"), undefined);
    assert.equal(store.version("a"), undefined);
    assert.equal(store.size, 0);
    store.delete("never");
  });

  it("grows, reuses slots and compacts what deletes and updates leave behind", () => {
    const store = new PackedStore<Obj>();
    const big = "x".repeat(1000);
    for (let i = 0; i < 5000; i++) store.set(`k${i}`, { i, big }, String(i));
    const full = store.byteLength;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5000; i++) store.set(`k${i}`, { i, big, round }, `${round}-${i}`);
    }
    for (let i = 0; i < 4000; i++) store.delete(`k${i}`);
    store.set("new", { big }, "1");
    assert.ok(store.byteLength < full, `compacted: ${store.byteLength} < ${full}`);
    assert.equal(store.size, 1001);
    for (let i = 4000; i < 5000; i++) {
      assert.deepEqual(store.get(`k${i}`), { i, big, round: 2 });
      assert.equal(store.version(`k${i}`), `2-${i}`);
    }
  });

  it("holds what a Map holds, for any sequence of changes", () => {
    const op = fc.oneof(
      fc.record({
        set: fc.constantFrom("a", "b", "c", "d"),
        value: fc.jsonValue({ maxDepth: 3 }),
        version: fc.string(),
      }),
      fc.record({ del: fc.constantFrom("a", "b", "c", "d") }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const packed = new PackedStore<Obj>();
        const map = new MapStore<Obj>();
        for (const o of ops) {
          for (const s of [packed, map]) {
            if ("set" in o) s.set(o.set, { v: o.value } as Obj, o.version);
            else s.delete(o.del);
          }
        }
        // JSON drops -0's sign, as the API server's JSON does.
        assert.deepEqual(
          contents(packed),
          JSON.parse(JSON.stringify([...contents(map)])).reduce(
            (m: Map<string, unknown>, [k, v]: [string, unknown]) => m.set(k, v),
            new Map(),
          ),
        );
        assert.equal(packed.size, map.size);
      }),
    );
  });
});
