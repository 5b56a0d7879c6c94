// SandboxPool: the error of an object whose child was killed names the patch that ran, even when
// the config has several expressions and the child's monitor could not answer in time (a loaded
// machine, a busy server, a child dying as it is asked): the pool then runs that object once more,
// alone, and asks again. Real pools, real children, real hostile expressions.
import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import {
  SandboxPool,
  type BatchResult,
  type SandboxJob,
} from "../../../../webhook/src/patches/sandbox/pool.js";
import { annotationsOf, config } from "./helpers.js";

const DEADLINE_MS = 100;

const SPIN = "(() => { while (true) {} })()";
/** Grows slowly enough (cons strings) that the deadline or the resident limit stops it first. */
const BOMB = "(() => { const a = []; for (;;) a.push(value.repeat(1 << 20) + a.length); })()";
/** Reaches V8's heap limit in a few steps: V8 aborts the child, which cannot say what it ran. */
const HEAP_BOMB = "(() => { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); })()";

/** Each patch applies only to objects with its annotation. */
const HOSTILE = config(
  { path: 'metadata.annotations["example.com/owner"]', expression: "value.toUpperCase()" },
  { path: 'metadata.annotations["example.com/spin"]', expression: SPIN },
  { path: 'metadata.annotations["example.com/bomb"]', expression: BOMB },
  { path: 'metadata.annotations["example.com/heap"]', expression: HEAP_BOMB },
);

function job(name: "owner" | "spin" | "bomb" | "heap"): SandboxJob {
  return {
    objectJson: JSON.stringify({
      metadata: { name, annotations: { [`example.com/${name}`]: "x" } },
    }),
    direction: "toHost",
  };
}

function named(patch: number, name: string, reason: string): RegExp {
  return new RegExp(
    `^patches\\[${patch}\\] \\(metadata\\.annotations\\["example\\.com/${name}"\\]\\): expression ${reason}$`,
  );
}

/** The spin loop is stopped by its deadline. */
const SPIN_ERROR = named(1, "spin", `did not finish within ${DEADLINE_MS}ms`);
/** The bomb by its deadline or a memory limit, whichever comes first on this machine. */
const BOMB_ERROR = named(
  2,
  "bomb",
  `(did not finish within ${DEADLINE_MS}ms|exceeded the sandbox memory limit \\(\\d+ MiB (resident|heap)\\))`,
);

function message(result: BatchResult | undefined): string {
  assert.ok(result !== undefined);
  return result.ok
    ? String(annotationsOf(result.value.objectJson)["example.com/owner"])
    : result.error.message;
}

/** Asserts a match, saying what it saw. */
function matches(actual: string, expected: RegExp, what: string): void {
  assert.match(actual, expected, `${what}: ${JSON.stringify(actual)}`);
}

async function one(pool: SandboxPool, name: "owner" | "spin" | "bomb" | "heap"): Promise<string> {
  const [result] = await pool.applyBatch("hostile", [job(name)]);
  return message(result);
}

/**
 * Keeps this process's event loop busy in 80 ms stretches, as a server parsing large objects
 * would be: a monitor's answer then arrives while the pool cannot read it, and the grace's timer
 * is due before the pool reads its sockets again.
 */
function keepBusy(): { stop(): void } {
  let stopped = false;
  const stretch = (): void => {
    if (stopped) return;
    const until = performance.now() + 80;
    while (performance.now() < until);
    setImmediate(stretch);
  };
  setImmediate(stretch);
  return {
    stop: () => {
      stopped = true;
    },
  };
}

describe("patches/sandbox/pool: naming the patch that killed a child", function () {
  this.timeout(60_000);

  describe("with the default limits", () => {
    let pool: SandboxPool;
    before(async () => {
      pool = new SandboxPool({ size: 2, deadlineMs: DEADLINE_MS });
      await pool.loadConfig("hostile", HOSTILE);
    });
    after(() => pool.close());

    it("names patches[2] in every error of a memory bomb run again and again", async () => {
      for (let i = 0; i < 8; i++) matches(await one(pool, "bomb"), BOMB_ERROR, `run ${i}`);
    });

    it("names the patch when this process is too busy to read the monitor's answer in time", async () => {
      const busy = keepBusy();
      try {
        for (let i = 0; i < 2; i++) {
          matches(await one(pool, "spin"), SPIN_ERROR, `spin, run ${i}`);
          matches(await one(pool, "bomb"), BOMB_ERROR, `bomb, run ${i}`);
        }
      } finally {
        busy.stop();
      }
      assert.equal(await one(pool, "owner"), "X");
    });
  });

  it("names the patch in every error while good objects run alongside, at the resident limit", async () => {
    // A resident limit the bomb reaches before its deadline: the memory path, with its grace.
    const pool = new SandboxPool({
      size: 2,
      deadlineMs: DEADLINE_MS,
      resourceLimits: { maxResidentMb: 100 },
    });
    try {
      await pool.loadConfig("hostile", HOSTILE);
      for (let i = 0; i < 8; i++) {
        const [batch, spin, owner] = await Promise.all([
          pool.applyBatch("hostile", [job("owner"), job("bomb"), job("owner")]),
          pool.applyBatch("hostile", [job("spin")]),
          pool.applyBatch("hostile", [job("owner")]),
        ]);
        const seen = [...batch, ...spin, ...owner].map(message);
        const [first, bomb, last, spun, alongside] = seen;
        const round = `round ${i}: ${JSON.stringify(seen)}`;
        assert.ok(first === "X" && last === "X" && alongside === "X", round);
        // The resident limit, usually; the deadline on a machine too loaded to let the bomb grow.
        assert.match(bomb!, BOMB_ERROR, round);
        assert.match(spun!, SPIN_ERROR, round);
      }
    } finally {
      await pool.close();
    }
  });

  it("runs a job once more to name its patch, then blames it with what is known", async () => {
    // V8 aborts a child at its heap limit before anything can ask it which patch ran; with four
    // expressions in the config, the pool cannot tell which one it was, the second time either.
    const pool = new SandboxPool({ size: 1, deadlineMs: 5000 });
    try {
      await pool.loadConfig("hostile", HOSTILE);
      const unnamed = "patching exceeded the sandbox memory limit (64 MiB heap)";
      assert.equal(await one(pool, "heap"), unnamed);
      assert.equal(pool.restarts, 2, "the first run and one more, not MAX_ATTEMPTS");

      // In a batch: the child dies under three jobs, each runs alone, the bomb once more.
      const results = await pool.applyBatch("hostile", [job("owner"), job("heap"), job("owner")]);
      assert.deepEqual(results.map(message), ["X", unnamed, "X"]);
      assert.equal(pool.restarts, 2 + 3);

      // With a single expression the patch is known without a monitor: no run more.
      await pool.loadConfig("heap-only", config(HOSTILE.patches[3]!));
      const [only] = await pool.applyBatch("heap-only", [job("heap")]);
      assert.equal(
        message(only),
        'patches[0] (metadata.annotations["example.com/heap"]): expression exceeded the sandbox memory limit (64 MiB heap)',
      );
      assert.equal(pool.restarts, 2 + 3 + 1);
    } finally {
      await pool.close();
    }
  });
});
