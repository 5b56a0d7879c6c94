import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import { SandboxPool, type SandboxJob } from "../../../../webhook/src/patches/sandbox/pool.js";
import { PatchError } from "../../../../webhook/src/patches/types.js";
import { annotation, annotationsOf, config, OBJECT, OBJECT_JSON, toHost } from "./helpers.js";

const DEADLINE = 100;
/**
 * Scheduling slack on a loaded, shared 2-CPU machine: replacing a worker costs ~60-100 ms, and CI
 * must not flake. The checks still prove the bound: a runaway alone would run forever.
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

    it("keeps built-in semantics under the allocation guards", async () => {
      const source =
        '[[1, 2, 3].splice(1).join(), [1, 2, 1].lastIndexOf(1), "ab".padStart(4, "-"), "x".repeat(3), ' +
        'Array.from({ length: 3 }, (_, i) => i).join(), Object.keys({ a: 1 }).join(), "a.b".split(".").length, ' +
        '"x".repeat(2 ** 20).length].join("|")';
      await pool.loadConfig("builtins", annotation(source));
      assert.equal(await annotationA(pool, "builtins"), "2,3|2|--ab|xxx|0,1,2|a|2|1048576");
      await pool.loadConfig("over", annotation('"x".repeat(2 ** 20 + 1).length'));
      const err = await rejection(pool.apply("over", toHost));
      assert.match(
        err.message,
        /RangeError: sandbox: String.prototype.repeat is limited to 1048576 elements/,
      );
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

  describe("batches and workers", () => {
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

    it("spreads a batch over every worker", async () => {
      const before = pool.stats().jobsPerWorker;
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      await pool.applyBatch(
        "upper",
        Array.from({ length: 64 }, () => toHost),
      );
      const after = pool.stats().jobsPerWorker;
      assert.equal(after.length, 2);
      after.forEach((n, i) => assert.ok(n > (before[i] ?? 0), `worker ${i} got no job`));
    });

    it("answers many concurrent single requests", async () => {
      await pool.loadConfig("upper", annotation("value.toUpperCase()"));
      const results = await Promise.all(
        Array.from({ length: 200 }, () => pool.apply("upper", toHost)),
      );
      for (const r of results) assert.equal(annotationsOf(r.objectJson)["a"], "HELLO");
      assert.deepEqual(pool.stats().inFlight, 0);
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
    it("contains a memory bomb with resourceLimits and replaces the worker", async () => {
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
        const mainHeapBefore = process.memoryUsage().heapUsed;
        const err = await rejection(roomy.apply("bomb", toHost));
        assert.equal(
          err.message,
          "patches[0] (metadata.annotations.a): expression exceeded the sandbox memory limit (32 MiB heap)",
        );
        assert.equal(roomy.restarts, 1);
        assert.equal(await annotationA(roomy, "ok"), "hello!");
        assert.ok(process.memoryUsage().heapUsed - mainHeapBefore < 32 * 1024 * 1024);
      } finally {
        await roomy.close();
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
