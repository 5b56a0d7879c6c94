import assert from "node:assert/strict";
import fc from "fast-check";
import { BodyBudget, type BodyHold } from "../../../webhook/src/server/body-budget.js";

interface TestHold extends BodyHold {
  name: string;
  shedCount: number;
}

const hold = (name: string): TestHold => ({
  name,
  held: 0,
  shedCount: 0,
  shed() {
    this.shedCount++;
  },
});

describe("BodyBudget", () => {
  it("counts what bodies take and refuses what does not fit", () => {
    const budget = new BodyBudget(100);
    const a = hold("a");
    const b = hold("b");
    budget.open(a);
    budget.open(b);
    assert.equal(budget.take(a, 60), true);
    budget.received(a);
    assert.equal(budget.take(b, 50), false, "a body being answered is never shed");
    assert.equal(b.held, 0);
    assert.equal(budget.bytesInUse, 60);
    budget.release(a);
    budget.release(a);
    assert.equal(budget.bytesInUse, 0, "release is idempotent");
    assert.equal(budget.take(b, 100), true);
  });

  it("sheds the largest body still arriving to make room for a smaller one", () => {
    const budget = new BodyBudget(100);
    const [big, mid, small] = [hold("big"), hold("mid"), hold("small")];
    for (const h of [big, mid, small]) budget.open(h);
    budget.take(big, 60);
    budget.take(mid, 35);
    assert.equal(budget.take(small, 10), true);
    assert.deepEqual([big.shedCount, mid.shedCount], [1, 0]);
    assert.equal(big.held, 0, "the shed body's bytes are back before it hears of it");
    assert.equal(budget.bytesInUse, 45);
  });

  it("never sheds a body of the newcomer's size or smaller, so equals do not push each other out", () => {
    const budget = new BodyBudget(100);
    const holds = [hold("a"), hold("b"), hold("c")];
    for (const h of holds) budget.open(h);
    assert.equal(budget.take(holds[0]!, 50), true);
    assert.equal(budget.take(holds[1]!, 50), true);
    assert.equal(budget.take(holds[2]!, 50), false);
    assert.deepEqual(
      holds.map((h) => h.shedCount),
      [0, 0, 0],
    );
  });

  it("stays within capacity and consistent under any sequence of operations", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("take" as const), i: fc.nat(7), n: fc.nat(400) }),
      fc.record({ kind: fc.constant("received" as const), i: fc.nat(7) }),
      fc.record({ kind: fc.constant("shrink" as const), i: fc.nat(7), n: fc.nat(400) }),
      fc.record({ kind: fc.constant("release" as const), i: fc.nat(7) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const budget = new BodyBudget(1000);
        const holds = Array.from({ length: 8 }, (_, i) => hold(String(i)));
        for (const h of holds) budget.open(h);
        for (const o of ops) {
          const h = holds[o.i]!;
          if (o.kind === "take") {
            const before = h.held;
            const ok = budget.take(h, o.n);
            assert.equal(h.held, ok ? before + o.n : before);
          } else if (o.kind === "received") budget.received(h);
          else if (o.kind === "shrink") budget.shrink(h, o.n);
          else budget.release(h);
          const sum = holds.reduce((s, x) => s + x.held, 0);
          assert.equal(budget.bytesInUse, sum);
          assert.ok(sum <= 1000);
        }
      }),
    );
  });
});
