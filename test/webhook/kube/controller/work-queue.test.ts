// The work queue's client-go semantics: dedupe, one worker per key, re-processing of keys added
// during processing, delayed and rate-limited adds, shutdown. Delays are a few milliseconds and
// the assertions are about order and counts, never about how long something took; the rate
// limiter's arithmetic is checked with a clock of the test's own.

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  RateLimiter,
  TokenBucket,
  WorkQueue,
} from "../../../../webhook/src/kube/controller/work-queue.js";

/** What a pending promise would have resolved with by now, or "pending". */
async function settled<T>(p: Promise<T>): Promise<T | "pending"> {
  return Promise.race([p, new Promise<"pending">((r) => setImmediate(() => r("pending")))]);
}

describe("WorkQueue", () => {
  it("hands out keys in order, each once however often it was added", async () => {
    const q = new WorkQueue();
    for (const k of ["a", "b", "a", "c", "b"]) q.add(k);
    assert.equal(q.depth, 3);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ["a", "b", "c"]);
    assert.equal(q.depth, 0);
    assert.equal(q.inProgress, 3);
  });

  it("never hands a key to a second worker; one added meanwhile comes back after done()", async () => {
    const q = new WorkQueue();
    q.add("a");
    assert.equal(await q.get(), "a");
    q.add("a");
    q.add("a");
    assert.equal(q.depth, 0, "not queued while being processed");
    const next = q.get();
    assert.equal(await settled(next), "pending");
    q.done("a");
    assert.equal(await next, "a", "processed again, once");
    q.done("a");
    assert.equal(await settled(q.get()), "pending", "nothing more");
  });

  it("does not queue a key again when nothing added it during processing", async () => {
    const q = new WorkQueue();
    q.add("a");
    await q.get();
    q.done("a");
    q.done("a");
    assert.equal(q.depth, 0);
    assert.equal(q.inProgress, 0);
  });

  it("wakes waiting workers in order as keys arrive", async () => {
    const q = new WorkQueue();
    const first = q.get();
    const second = q.get();
    q.add("x");
    q.add("y");
    assert.deepEqual([await first, await second], ["x", "y"]);
  });

  it("addAfter queues later, the earliest requested time winning", async () => {
    const q = new WorkQueue();
    q.addAfter("slow", 60_000);
    q.addAfter("soon", 60_000);
    q.addAfter("soon", 5);
    q.addAfter("soon", 60_000);
    assert.equal(q.depth, 0);
    assert.equal(q.delayed, 2);
    assert.equal(await q.get(), "soon");
    assert.equal(q.delayed, 1);
    q.addAfter("now", 0);
    assert.equal(q.depth, 1, "no delay: queued at once");
    q.shutDown();
    assert.equal(q.delayed, 0, "shutDown drops keys not yet due");
  });

  it("addRateLimited backs off per key until forget()", async () => {
    const q = new WorkQueue({ baseDelayMs: 1 });
    for (let i = 0; i < 4; i++) {
      q.addRateLimited("k");
      assert.equal(await q.get(), "k");
      q.done("k");
    }
    assert.equal(q.numRequeues("k"), 4);
    assert.equal(q.numRequeues("other"), 0);
    q.forget("k");
    assert.equal(q.numRequeues("k"), 0);
  });

  it("after shutDown ignores adds, hands out what is queued, then answers undefined", async () => {
    const q = new WorkQueue();
    const idle = q.get();
    q.add("a");
    assert.equal(await idle, "a");
    q.add("b");
    q.add("a");
    const waiters = [q.get(), q.get()];
    assert.equal(await waiters[0], "b");
    q.shutDown();
    assert.equal(await waiters[1], undefined, "a waiting worker is told to stop");
    q.add("c");
    q.addAfter("d", 1);
    q.addRateLimited("e");
    assert.equal(q.depth, 0);
    q.done("a");
    assert.equal(await q.get(), "a", "a key dirtied before shutdown is still processed");
    assert.equal(await q.get(), undefined);
    assert.equal(q.isShuttingDown(), true);
  });

  it("shutDownWithDrain waits for the keys in progress", async () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("b");
    await q.get();
    await q.get();
    const drained = q.shutDownWithDrain(60_000);
    assert.equal(await settled(drained), "pending");
    q.done("a");
    assert.equal(await settled(drained), "pending");
    q.done("b");
    assert.equal(await drained, true);
    assert.equal(await new WorkQueue().shutDownWithDrain(0), true, "nothing in progress");
  });

  it("shutDownWithDrain gives up after its timeout, or when shutDown() is called", async () => {
    const q = new WorkQueue();
    q.add("a");
    await q.get();
    assert.equal(await q.shutDownWithDrain(5), false);
    const again = q.shutDownWithDrain(60_000);
    q.shutDown();
    assert.equal(await again, false);
  });

  it("property: never two workers on one key, and every add is processed exactly once after it", async () => {
    type Cmd = { add: number } | { get: number } | { done: number };
    const cmd: fc.Arbitrary<Cmd> = fc.oneof(
      fc.record({ add: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ get: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ done: fc.integer({ min: 0, max: 2 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { maxLength: 60 }), async (cmds) => {
        const q = new WorkQueue();
        const workers: (string | undefined)[] = [undefined, undefined, undefined];
        /** Keys added since they were last handed out. */
        const owed = new Set<string>();
        const handOut = (w: number, key: string | undefined) => {
          assert.ok(key !== undefined);
          assert.ok(!workers.includes(key), `${key} handed to two workers`);
          assert.ok(owed.delete(key), `${key} handed out without an add since the last time`);
          workers[w] = key;
        };
        for (const c of cmds) {
          if ("add" in c) {
            q.add(`k${c.add}`);
            owed.add(`k${c.add}`);
          } else if ("get" in c) {
            if (workers[c.get] === undefined && q.depth > 0) handOut(c.get, await q.get());
          } else if (workers[c.done] !== undefined) {
            q.done(workers[c.done]!);
            workers[c.done] = undefined;
          }
        }
        // Finish: every worker completes, then one worker drains the queue.
        for (const key of workers) if (key !== undefined) q.done(key);
        workers.fill(undefined);
        while (q.depth > 0) {
          handOut(0, await q.get());
          q.done(workers[0]!);
          workers[0] = undefined;
        }
        assert.deepEqual([...owed], [], "every add was processed");
        assert.equal(q.inProgress, 0);
      }),
      { numRuns: 300 },
    );
  });

  it("property: concurrent async workers process each key after its last add, one at a time", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 40 }),
        async (adds) => {
          const q = new WorkQueue();
          const busy = new Set<string>();
          const lastAdd = new Map<string, number>();
          const lastStart = new Map<string, number>();
          let tick = 0;
          const worker = async () => {
            for (let key = await q.get(); key !== undefined; key = await q.get()) {
              assert.ok(!busy.has(key), `${key} processed twice at once`);
              busy.add(key);
              lastStart.set(key, ++tick);
              await new Promise((r) => setImmediate(r));
              busy.delete(key);
              q.done(key);
            }
          };
          const running = [worker(), worker(), worker()];
          for (const k of adds) {
            q.add(`k${k}`);
            lastAdd.set(`k${k}`, ++tick);
            if (k % 2 === 0) await new Promise((r) => setImmediate(r));
          }
          for (let i = 0; i < 10_000 && (q.depth > 0 || q.inProgress > 0); i++) {
            await new Promise((r) => setImmediate(r));
          }
          assert.equal(q.depth + q.inProgress, 0, "the queue went idle");
          for (const [key, at] of lastAdd) assert.ok(lastStart.get(key)! > at, `${key} was lost`);
          q.shutDown();
          await Promise.all(running);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("RateLimiter", () => {
  it("doubles each key's delay from the base up to the cap, separately per key", () => {
    const r = new RateLimiter({ baseDelayMs: 5, maxDelayMs: 300_000, burst: 1e9 });
    const delays = Array.from({ length: 20 }, () => r.when("a"));
    assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
    assert.equal(delays[16], 300_000, "5 ms * 2^16 is past the 300 s cap");
    assert.equal(delays[19], 300_000);
    assert.equal(r.when("b"), 5, "another key starts afresh");
    assert.equal(r.numRequeues("a"), 20);
    r.forget("a");
    assert.equal(r.when("a"), 5);
  });

  it("defaults to client-go's 5 ms base and our 300 s cap", () => {
    const r = new RateLimiter();
    assert.equal(r.when("a"), 5);
    for (let i = 0; i < 100; i++) r.when("b");
    assert.equal(r.when("b"), 300_000);
  });

  it("is slowed by the shared token bucket once its burst is spent", () => {
    let now = 0;
    const r = new RateLimiter({ baseDelayMs: 1, qps: 10, burst: 3 }, () => now);
    const keys = ["a", "b", "c", "d", "e"];
    assert.deepEqual(
      keys.map((k) => r.when(k)),
      [1, 1, 1, 100, 200],
      "three from the burst, then one per 100 ms (10 qps), reserved in turn",
    );
    now = 10_000;
    assert.equal(r.when("f"), 1, "the bucket refilled");
  });
});

describe("TokenBucket", () => {
  it("refills at qps up to burst", () => {
    let now = 1000;
    const b = new TokenBucket(2, 2, () => now);
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 500]);
    now += 500;
    assert.equal(b.reserve(), 500, "the token reserved earlier is spent; the next is 500 ms out");
    now += 60_000;
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 500]);
  });

  it("cancel() gives the last token back (a try that did not take one)", () => {
    const b = new TokenBucket(1, 1, () => 0);
    assert.equal(b.reserve(), 0);
    assert.equal(b.reserve(), 1000);
    b.cancel();
    assert.equal(b.reserve(), 1000, "still one second away, not two");
  });
});
