// SandboxPool: results, batches, configs, deadlines, memory and scheduling, on real child
// processes. The process-level guarantees (children die with the server, `vgate patch` exits,
// SIGTERM) are in process.test.ts; attacks are in hostile.test.ts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "mocha";
import { SandboxPool, type SandboxJob } from "../../../../webhook/src/patches/sandbox/pool.js";
import { PatchError } from "../../../../webhook/src/patches/types.js";
import { annotation, annotationsOf, config, OBJECT, OBJECT_JSON, toHost } from "./helpers.js";

const DEADLINE = 100;
/**
 * Scheduling slack on a loaded, shared 2-CPU machine, where starting a replacement child costs
 * ~300 ms of CPU, and CI must not flake. The checks still prove the bound: a runaway alone would
 * run forever.
 */
const SLACK = 900;

async function rejection(promise: Promise<unknown>): Promise<PatchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PatchError, `expected a PatchError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

async function annotationA(
  pool: SandboxPool,
  key: string,
  job: SandboxJob = toHost,
): Promise<unknown> {
  return annotationsOf((await pool.apply(key, job)).objectJson)["a"];
}

describe("patches/sandbox/pool", function () {
  this.timeout(20_000);
  let pool: SandboxPool;
  before(() => {
    pool = new SandboxPool({ size: 2, deadlineMs: DEADLINE });
  });
  after(() => pool.close());

  describe("results", () => {
    it("runs an expression and returns the patched object", async () => {
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const result = await pool.apply("upper", toHost);
      const object = JSON.parse(result.objectJson) as typeof OBJECT;
      assert.equal(object.metadata.annotations.a, "HELLO");
      assert.equal(object.metadata.annotations.b, "world");
      assert.deepEqual(object.subsets, OBJECT.subsets);
    });

    it("uses expression toHost and reverseExpression toVirtual", async () => {
      await pool.loadConfig(
        "both",
        config({
          path: "metadata.annotations.a",
          expression: '"h-" + value',
          reverseExpression: '"v-" + value',
        }),
      );
      assert.equal(await annotationA(pool, "both"), "h-hello");
      assert.equal(
        await annotationA(pool, "both", { objectJson: OBJECT_JSON, direction: "toVirtual" }),
        "v-hello",
      );
    });

    it("returns the completion value of the source text (docs/decisions.md EPS-8)", async () => {
      const cases: [string, unknown][] = [
        ["value + '!';", "hello!"],
        ["value + '!' ;; \n", "hello!"],
        ["let x = value.length; x * 2", 10],
        ["if (value === 'hello') 'yes'; else 'no'", "yes"],
        ["{ 'block'; }", "block"],
        ["// leading comment\nvalue.at(-1) // trailing", "o"],
        ["`${value}-${context.vcluster.name}`", "hello-vc"],
        ["value?.length ?? 0", 5],
      ];
      for (const [source, expected] of cases) {
        await pool.loadConfig("completion", annotation(source));
        assert.deepEqual(await annotationA(pool, "completion"), expected, source);
      }
    });

    it("offers btoa, atob and virtualToHostDNS", async () => {
      await pool.loadConfig(
        "helpers",
        annotation(
          '[btoa("my-value"), atob("aGk="), virtualToHostDNS("nginx.default.svc.cluster.local")].join(" ")',
        ),
      );
      assert.equal(
        await annotationA(pool, "helpers"),
        "bXktdmFsdWU= hi nginx-x-default-x-vc.vc-ns.svc.cluster.local",
      );
      await pool.loadConfig("bad-btoa", annotation('btoa("€")'));
      const err = await rejection(pool.apply("bad-btoa", toHost));
      assert.match(
        err.message,
        /patches\[0\] at "metadata.annotations.a": the expression threw InvalidCharacterError: btoa/,
      );
    });

    it("passes context: path, vcluster, hostObject and virtualObject", async () => {
      await pool.loadConfig(
        "ctx",
        config({
          path: "subsets[*].addresses[*].ip",
          expression:
            "[context.path, context.vcluster.namespace, context.hostObject.kind, context.virtualObject].join('|')",
        }),
      );
      const result = await pool.apply("ctx", { ...toHost, hostObjectJson: '{"kind":"Endpoints"}' });
      const object = JSON.parse(result.objectJson) as typeof OBJECT;
      assert.equal(
        object.subsets[0]!.addresses[1]!.ip,
        "subsets.0.addresses.1.ip|vc-ns|Endpoints|",
      );
    });

    it("gives each call a private copy of value and a frozen context", async () => {
      await pool.loadConfig(
        "private",
        config(
          {
            path: "subsets[0].addresses",
            expression: "(value.reverse(), value.push({ ip: 'x' }), value)",
          },
          {
            path: "metadata.annotations.a",
            expression: "context.virtualObject.subsets[0].addresses.map(a => a.ip).join()",
          },
          {
            path: "metadata.annotations.b",
            expression:
              "(() => { try { context.virtualObject.metadata.name = 'x'; return 'mutated' } catch (e) { return e.name } })()",
          },
        ),
      );
      const result = await pool.apply("private", { ...toHost, virtualObjectJson: OBJECT_JSON });
      const object = JSON.parse(result.objectJson) as typeof OBJECT;
      assert.deepEqual(object.subsets[0]!.addresses, [
        { ip: "10.0.0.2" },
        { ip: "10.0.0.1" },
        { ip: "x" },
      ]);
      assert.equal(object.metadata.annotations.a, "10.0.0.1,10.0.0.2");
      assert.equal(object.metadata.annotations.b, "TypeError");
    });

    it("keeps built-ins as they are: the process is the wall, not length guards", async () => {
      const source =
        '[[1, 2, 3].splice(1).join(), [1, 2, 1].lastIndexOf(1), "ab".padStart(4, "-"), "x".repeat(3), ' +
        'Array.from({ length: 3 }, (_, i) => i).join(), Object.keys({ a: 1 }).join(), "a.b".split(".").length, ' +
        '"x".repeat(2 ** 20 + 1).length, Array.from({ length: 2 ** 20 + 1 }).length].join("|")';
      // Its own pool with room to work: building a 2^20-element array costs tens of milliseconds
      // of CPU, and on a loaded machine it once passed the shared pool's deadline.
      const roomy = new SandboxPool({ size: 1, deadlineMs: 5_000 });
      try {
        await roomy.loadConfig("builtins", annotation(source));
        assert.equal(
          await annotationA(roomy, "builtins"),
          "2,3|2|--ab|xxx|0,1,2|a|2|1048577|1048577",
        );
      } finally {
        await roomy.close();
      }
    });

    it("refuses a patched object over the size limit", async () => {
      const small = new SandboxPool({ size: 1, resultLimits: { maxObjectBytes: 200 } });
      try {
        await small.loadConfig(
          "grow",
          config(
            { path: "metadata.annotations.a", expression: "value.repeat(20)" },
            { path: "metadata.annotations.b", expression: "value.repeat(20)" },
          ),
        );
        const err = await rejection(small.apply("grow", toHost));
        assert.equal(err.message, "the patched object is larger than 200 bytes as JSON");
        await small.loadConfig("ok", annotation("value"));
        assert.equal(await annotationA(small, "ok"), "hello");
      } finally {
        await small.close();
      }
    });

    it("deletes a key on null or undefined and keeps explain entries", async () => {
      await pool.loadConfig(
        "delete",
        config(
          { path: "metadata.annotations.a", expression: "undefined" },
          { path: "metadata.annotations.b", expression: "null" },
        ),
      );
      const result = await pool.apply("delete", { ...toHost, explain: true });
      assert.deepEqual(annotationsOf(result.objectJson), {});
      assert.deepEqual(
        result.explain.map((e) => [e.patchIndex, e.action]),
        [
          [0, "expression"],
          [1, "expression"],
        ],
      );
    });

    it("fails only the object whose JSON is invalid", async () => {
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const results = await pool.applyBatch("upper", [
        toHost,
        { objectJson: "{", direction: "toHost" },
        { objectJson: "[]", direction: "toHost" },
        toHost,
      ]);
      assert.deepEqual(
        results.map((r) => r.ok),
        [true, false, false, true],
      );
      const [, bad, notObject] = results;
      assert.ok(bad !== undefined && !bad.ok && notObject !== undefined && !notObject.ok);
      assert.match(bad.error.message, /objectJson is not valid JSON/);
      assert.match(notObject.error.message, /must be a JSON object/);
    });
  });

  describe("batches and children", () => {
    it("patches a batch of different objects, in order", async () => {
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const jobs = Array.from({ length: 300 }, (_, i) => ({
        objectJson: JSON.stringify({ metadata: { annotations: { a: `v${i}` } } }),
        direction: "toHost" as const,
      }));
      const results = await pool.applyBatch("upper", jobs);
      assert.equal(results.length, 300);
      results.forEach((r, i) => {
        assert.ok(r.ok);
        assert.equal(annotationsOf(r.value.objectJson)["a"], `V${i}`);
      });
    });

    it("spreads a batch over every child", async () => {
      const before = pool.stats().jobsPerWorker;
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      await pool.applyBatch(
        "upper",
        Array.from({ length: 64 }, () => toHost),
      );
      const after = pool.stats().jobsPerWorker;
      assert.equal(after.length, 2);
      after.forEach((n, i) => assert.ok(n > (before[i] ?? 0), `child ${i} got no job`));
    });

    it("answers many concurrent single requests", async () => {
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const results = await Promise.all(
        Array.from({ length: 200 }, () => pool.apply("upper", toHost)),
      );
      for (const r of results) assert.equal(annotationsOf(r.objectJson)["a"], "HELLO");
      assert.deepEqual(pool.stats().inFlight, 0);
    });

    it("runs every child as its own process, with its own V8 limits", async () => {
      const limited = new SandboxPool({
        size: 1,
        resourceLimits: {
          maxOldGenerationSizeMb: 48,
          maxYoungGenerationSizeMb: 12,
          stackSizeMb: 2,
        },
      });
      try {
        await limited.loadConfig("ok", annotation("value"));
        const { pids } = limited.stats();
        assert.equal(pids.length, 2, "one child and a spare");
        for (const pid of pids) {
          assert.notEqual(pid, process.pid);
          const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
          assert.ok(argv.includes("--max-old-space-size=48"), argv.join(" "));
          assert.ok(argv.includes("--max-semi-space-size=4"), argv.join(" "));
          assert.ok(argv.includes("--stack-size=2048"), argv.join(" "));
          // Nothing of this process's environment (which may hold credentials) is passed on.
          assert.equal(readFileSync(`/proc/${pid}/environ`, "latin1"), "");
        }
      } finally {
        await limited.close();
      }
    });
  });

  describe("scheduling", () => {
    it("gives a job only to an idle child, never behind a busy one", async () => {
      // A long deadline: every good request must be answered while the runaway still runs.
      const patient = new SandboxPool({ size: 2, deadlineMs: 3000 });
      try {
        await patient.loadConfig("loop", annotation("for (;;);"));
        await patient.loadConfig("upper", annotation("value.toUpperCase()"));
        let runawayDone = false;
        const runaway = rejection(patient.apply("loop", toHost)).finally(() => {
          runawayDone = true;
        });
        for (let i = 0; i < 20; i++) {
          assert.equal(
            annotationsOf((await patient.apply("upper", toHost)).objectJson)["a"],
            "HELLO",
          );
        }
        const batch = await patient.applyBatch(
          "upper",
          Array.from({ length: 50 }, () => toHost),
        );
        assert.ok(batch.every((r) => r.ok));
        assert.equal(runawayDone, false, "good requests waited for the runaway");
        assert.match((await runaway).message, /did not finish within 3000ms/);
      } finally {
        await patient.close();
      }
    });

    it("keeps a warm spare: after a kill, the next request runs on it at once", async () => {
      const single = new SandboxPool({ size: 1, deadlineMs: DEADLINE });
      try {
        await single.loadConfig("loop", annotation("for (;;);"));
        await single.loadConfig("ok", annotation("value + '!'"));
        const [, spare] = single.stats().pids;
        const runaway = rejection(single.apply("loop", toHost));
        // Only one child, and it is busy: this request waits for the kill, and no longer.
        const start = performance.now();
        const good = await single.apply("ok", toHost);
        const waited = performance.now() - start;
        assert.equal(annotationsOf(good.objectJson)["a"], "hello!");
        assert.match((await runaway).message, /did not finish within 100ms/);
        const [serving, nextSpare] = single.stats().pids;
        assert.equal(serving, spare, "the spare took over");
        assert.ok(nextSpare !== undefined && nextSpare !== spare, "a new spare is on its way");
        assert.ok(waited < DEADLINE + SLACK, `waited ${waited.toFixed(0)} ms`);
      } finally {
        await single.close();
      }
    });

    it("times each job of a batch on its own", async () => {
      // A job that takes about a quarter of the deadline, measured here, in a batch of eight: the
      // batch takes twice the deadline, and no job is stopped.
      const measure = new SandboxPool({ size: 1, deadlineMs: 10_000 });
      let jobMs: number;
      const busy =
        "(() => { let n = 0; for (let i = 0; i < 2e7; i++) n += i % 7; return value })()";
      try {
        await measure.loadConfig("busy", annotation(busy));
        await measure.apply("busy", toHost);
        const start = performance.now();
        await measure.apply("busy", toHost);
        jobMs = performance.now() - start;
      } finally {
        await measure.close();
      }
      const timed = new SandboxPool({ size: 1, deadlineMs: Math.ceil(jobMs * 4) });
      try {
        await timed.loadConfig("busy", annotation(busy));
        const results = await timed.applyBatch(
          "busy",
          Array.from({ length: 8 }, () => toHost),
        );
        assert.deepEqual(
          results.map((r) => (r.ok ? "ok" : r.error.message)),
          Array.from({ length: 8 }, () => "ok"),
        );
        assert.equal(timed.restarts, 0);
      } finally {
        await timed.close();
      }
    });
  });

  describe("configs", () => {
    it("reloads a config under the same key", async () => {
      await pool.loadConfig("reload", annotation('"first"'));
      assert.equal(await annotationA(pool, "reload"), "first");
      await pool.loadConfig("reload", annotation('"second"'));
      assert.equal(await annotationA(pool, "reload"), "second");
    });

    it("rejects a compile error naming patches[i] and keeps the previous config", async () => {
      await pool.loadConfig("reload", annotation('"kept"'));
      const err = await rejection(
        pool.loadConfig(
          "reload",
          config(
            { path: "metadata.annotations.a", expression: "1" },
            { path: "metadata.annotations.b", expression: "value +" },
          ),
        ),
      );
      assert.match(err.message, /^patches\[1\]\.expression: SyntaxError/);
      assert.equal(err.patchIndex, 1);
      assert.equal(await annotationA(pool, "reload"), "kept");
    });

    it("rejects a path syntax error naming patches[i]", async () => {
      const err = await rejection(
        pool.loadConfig("bad-path", config({ path: "a[", expression: "1" })),
      );
      assert.match(err.message, /patches\[0\]\.path/);
      await rejection(pool.apply("bad-path", toHost));
    });

    it("fails requests for unknown or unloaded configs", async () => {
      assert.match(
        (await rejection(pool.apply("nope", toHost))).message,
        /no patch config "nope" is loaded/,
      );
      await pool.loadConfig("gone", annotation("1"));
      pool.unloadConfig("gone");
      await rejection(pool.apply("gone", toHost));
    });
  });

  describe("deadline", () => {
    it("kills a runaway expression within the deadline and names the patch", async () => {
      await pool.loadConfig(
        "loop",
        config(
          { path: "metadata.annotations.b", expression: "1" },
          { path: "subsets[*].addresses[*].ip", expression: "while (true) {}" },
        ),
      );
      const restarts = pool.restarts;
      const start = performance.now();
      const err = await rejection(pool.apply("loop", toHost));
      const elapsed = performance.now() - start;
      assert.equal(
        err.message,
        "patches[1] (subsets[*].addresses[*].ip): expression did not finish within 100ms",
      );
      assert.equal(err.patchIndex, 1);
      assert.equal(err.path, "subsets[*].addresses[*].ip");
      assert.ok(elapsed >= DEADLINE - 5 && elapsed < DEADLINE + SLACK, `took ${elapsed} ms`);
      assert.equal(pool.restarts, restarts + 1);
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      assert.equal(await annotationA(pool, "upper"), "HELLO");
    });

    it("does not delay concurrent requests beyond the deadline", async () => {
      await pool.loadConfig("loop", annotation("for (;;);"));
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const start = performance.now();
      const runaway = rejection(pool.apply("loop", toHost));
      const others = Array.from({ length: 40 }, async () => {
        const r = await pool.apply("upper", toHost);
        return { a: annotationsOf(r.objectJson)["a"], at: performance.now() - start };
      });
      const done = await Promise.all(others);
      for (const d of done) {
        assert.equal(d.a, "HELLO");
        assert.ok(d.at < DEADLINE + SLACK, `a concurrent request took ${d.at} ms`);
      }
      assert.match((await runaway).message, /did not finish within 100ms/);
    });

    it("fails only the runaway job of a batch and re-dispatches the others", async () => {
      await pool.loadConfig(
        "maybe-loop",
        annotation('value === "loop" ? (() => { for (;;); })() : value + "!"'),
      );
      const jobs = ["a", "b", "loop", "c", "d"].map((v) => ({
        objectJson: JSON.stringify({ metadata: { annotations: { a: v } } }),
        direction: "toHost" as const,
      }));
      const results = await pool.applyBatch("maybe-loop", jobs);
      assert.deepEqual(
        results.map((r) => (r.ok ? annotationsOf(r.value.objectJson)["a"] : r.error.message)),
        [
          "a!",
          "b!",
          "patches[0] (metadata.annotations.a): expression did not finish within 100ms",
          "c!",
          "d!",
        ],
      );
    });

    it("fails a job whose asynchronous work never settles, not the next one", async () => {
      await pool.loadConfig(
        "async-loop",
        annotation('(Promise.resolve().then(() => { for (;;); }), "returned")'),
      );
      const err = await rejection(pool.apply("async-loop", toHost));
      assert.match(
        err.message,
        /^patches\[0\] \(metadata.annotations.a\): asynchronous work left by the expression did not finish within 100ms$/,
      );
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      assert.equal(await annotationA(pool, "upper"), "HELLO");
    });

    it("honours a configured deadline", async () => {
      const quick = new SandboxPool({ size: 1, deadlineMs: 30 });
      try {
        await quick.loadConfig("loop", annotation("while (true) {}"));
        await quick.loadConfig("ok", annotation("value"));
        assert.match((await rejection(quick.apply("loop", toHost))).message, /within 30ms/);
        assert.equal(await annotationA(quick, "ok"), "hello");
      } finally {
        await quick.close();
      }
    });
  });

  describe("memory", () => {
    const job = (a: string): SandboxJob => ({
      objectJson: JSON.stringify({ metadata: { annotations: { a } } }),
      direction: "toHost",
    });

    it("contains a heap bomb: V8 aborts the child at its heap limit, the pool replaces it", async () => {
      const roomy = new SandboxPool({
        size: 1,
        deadlineMs: 5000,
        resourceLimits: { maxOldGenerationSizeMb: 32 },
      });
      try {
        await roomy.loadConfig(
          "bomb",
          annotation("(() => { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)); })()"),
        );
        await roomy.loadConfig("ok", annotation("value + '!'"));
        const rssBefore = process.memoryUsage.rss();
        const err = await rejection(roomy.apply("bomb", toHost));
        assert.equal(
          err.message,
          "patches[0] (metadata.annotations.a): expression exceeded the sandbox memory limit (32 MiB heap)",
        );
        assert.equal(roomy.restarts, 1);
        assert.equal(await annotationA(roomy, "ok"), "hello!");
        assert.ok(process.memoryUsage.rss() - rssBefore < 32 * 1024 * 1024);
      } finally {
        await roomy.close();
      }
    });

    it("kills a child whose memory outside the V8 heap passes its resident limit", async () => {
      // A regular expression's compiler allocates outside the heap; the heap limit never sees it.
      const pool2 = new SandboxPool({
        size: 1,
        deadlineMs: 20_000,
        resourceLimits: { maxResidentMb: 160 },
      });
      try {
        await pool2.loadConfig(
          "native",
          annotation('new RegExp("(?:" + "ab|".repeat(2e6) + "c)").test("c")'),
        );
        await pool2.loadConfig("ok", annotation("value + '!'"));
        const rssBefore = process.memoryUsage.rss();
        const err = await rejection(pool2.apply("native", toHost));
        assert.equal(
          err.message,
          "patches[0] (metadata.annotations.a): expression exceeded the sandbox memory limit (160 MiB resident)",
        );
        assert.equal(await annotationA(pool2, "ok"), "hello!");
        assert.ok(process.memoryUsage.rss() - rssBefore < 32 * 1024 * 1024);
      } finally {
        await pool2.close();
      }
    });

    it("re-runs each open job of a batch alone when its child dies without saying which", async () => {
      const patient = new SandboxPool({ size: 1, deadlineMs: 5000 });
      try {
        await patient.loadConfig(
          "maybe-bomb",
          annotation(
            'value === "bomb" ? (() => { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); })() : value + "!"',
          ),
        );
        const results = await patient.applyBatch("maybe-bomb", ["a", "b", "bomb", "c"].map(job));
        assert.deepEqual(
          results.map((r) => (r.ok ? annotationsOf(r.value.objectJson)["a"] : r.error.message)),
          [
            "a!",
            "b!",
            "patches[0] (metadata.annotations.a): expression exceeded the sandbox memory limit (64 MiB heap)",
            "c!",
          ],
        );
        // Once in the batch, once alone.
        assert.equal(patient.restarts, 2);
      } finally {
        await patient.close();
      }
    });

    it("replaces a child that holds most of its resident limit after a job", async () => {
      // A limit just above what an idle child holds here: after any job it is over 3/4 of it.
      const probe = new SandboxPool({ size: 1 });
      let residentMb: number;
      try {
        await probe.loadConfig("ok", annotation("value"));
        await probe.apply("ok", toHost);
        const status = readFileSync(`/proc/${probe.stats().pids[0]}/status`, "latin1");
        residentMb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
      } finally {
        await probe.close();
      }
      const tight = new SandboxPool({
        size: 1,
        resourceLimits: { maxResidentMb: Math.ceil(residentMb / 0.85) },
      });
      try {
        await tight.loadConfig("ok", annotation("value + '!'"));
        const [first] = tight.stats().pids;
        assert.equal(await annotationA(tight, "ok"), "hello!");
        const [now] = tight.stats().pids;
        assert.notEqual(now, first, "the child was retired");
        assert.equal(tight.restarts, 0, "a retirement is not a failure");
        assert.equal(await annotationA(tight, "ok"), "hello!");
      } finally {
        await tight.close();
      }
    });

    it("replaces a child whose heap an expression left nearly full", async () => {
      const small = new SandboxPool({
        size: 1,
        deadlineMs: 5000,
        resourceLimits: { maxOldGenerationSizeMb: 24 },
      });
      try {
        // Registered symbols are never collected: 12 MiB of them outlive the evaluation.
        await small.loadConfig(
          "leak",
          annotation(
            '(() => { for (let i = 0; i < 1.2e5; i++) Symbol.for("leak-" + i + "-".repeat(40)); return value })()',
          ),
        );
        const [first] = small.stats().pids;
        const r = await small.apply("leak", toHost);
        assert.equal(annotationsOf(r.objectJson)["a"], "hello");
        const [now] = small.stats().pids;
        assert.notEqual(now, first, "the child was retired");
        assert.equal(small.restarts, 0, "a retirement is not a failure");
      } finally {
        await small.close();
      }
    });
  });

  describe("close", () => {
    it("rejects pending and later requests", async () => {
      const closing = new SandboxPool({ size: 1 });
      await closing.loadConfig("ok", annotation("value"));
      // The pending job either finishes before close or is rejected; it is never left hanging.
      const pending = closing.apply("ok", toHost).then(
        () => "done",
        (err: unknown) => String(err),
      );
      await closing.close();
      assert.match(await pending, /^done$|closed/);
      assert.match((await rejection(closing.apply("ok", toHost))).message, /closed/);
      await rejection(closing.loadConfig("x", annotation("1")));
    });
  });
});
