// The branch where the sandbox cannot start children: children that die before they are ready
// three times in a row break the pool, and every job then fails with a SandboxUnavailableError
// (reason ChildrenFailToStart) that callers recognise by type. Two real causes: V8 aborting a
// child as it starts (a 1 MiB heap cannot hold Node's startup snapshot), and spawns that fail
// because the server has no file descriptors left (EMFILE), which once threw out of
// SandboxProcess's constructor and crashed the server.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "mocha";
import { SandboxPool } from "../../../../webhook/src/patches/sandbox/pool.js";
import {
  isSandboxUnavailable,
  SandboxUnavailableError,
} from "../../../../webhook/src/patches/sandbox/sandbox-unavailable.js";
import { PatchError } from "../../../../webhook/src/patches/types.js";
import { until } from "../../../support/until.js";
import { annotation, toHost } from "./helpers.js";

const FAIL_TO_START = /^sandbox children fail to start: /;

function assertFailsToStart(err: unknown, detail: RegExp): true {
  assert.ok(isSandboxUnavailable(err), `not a SandboxUnavailableError: ${String(err)}`);
  assert.ok(err instanceof PatchError, "still a PatchError, as every pool failure");
  assert.equal(err.reason, "ChildrenFailToStart");
  assert.equal(err.patchIndex, undefined, "no patch is to blame");
  assert.match(err.message, FAIL_TO_START);
  assert.match(err.message.replace(FAIL_TO_START, ""), detail);
  return true;
}

const havePrlimit = spawnSync("prlimit", ["--version"]).status === 0;
const haveSetsid = spawnSync("setsid", ["--version"]).status === 0;

describe("patches/sandbox/pool: children that fail to start", function () {
  this.timeout(60_000);

  describe("V8 aborts every child as it starts (a 1 MiB heap)", () => {
    let pool: SandboxPool;
    let loading: Promise<void>;
    before(() => {
      pool = new SandboxPool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 1 } });
      loading = pool.loadConfig("upper", annotation("value.toUpperCase()"));
    });
    after(() => pool.close());

    it("loadConfig fails; three failures in a row break the pool, which starts no child again", async () => {
      // Which error the load itself gets is a race of the children's deaths: a child that dies
      // with the load queued counts as a failed compile, unless the pool broke first.
      await assert.rejects(loading, PatchError);
      await until(() => pool.restarts >= 3, "three startup failures");
      assert.equal(pool.restarts, 3);
      assert.deepEqual(pool.stats().pids, []);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(pool.restarts, 3, "a broken pool spawns no more children");
    });

    it("every job then fails with ChildrenFailToStart, saying how the last child ended", async () => {
      // V8 reports the abort on stderr; the signal or exit code is the machine's.
      await assert.rejects(pool.apply("upper", toHost), (err) =>
        assertFailsToStart(err, /^(signal SIG\w+|exit code \d+)/),
      );
    });

    it("every later job fails the same way, apply and applyBatch alike, and nothing waits", async () => {
      await assert.rejects(pool.apply("upper", toHost), (err) => assertFailsToStart(err, /./));
      const results = await pool.applyBatch("upper", [toHost, toHost]);
      for (const r of results) {
        assert.equal(r.ok, false);
        if (!r.ok) assertFailsToStart(r.error, /./);
      }
      assert.equal(pool.stats().queued, 0);
      // A new load is refused at once too.
      await assert.rejects(pool.loadConfig("again", annotation("value")), SandboxUnavailableError);
    });

    it("close() is quick and then says closed, by type", async () => {
      await pool.close();
      await assert.rejects(pool.apply("upper", toHost), (err) => {
        assert.ok(isSandboxUnavailable(err));
        assert.equal(err.reason, "Closed");
        assert.equal(err.message, "the sandbox pool is closed");
        return true;
      });
    });
  });

  describe("spawns fail for want of file descriptors (EMFILE)", () => {
    it("the pool breaks with the spawn error, and the process lives on", function () {
      if (!havePrlimit) this.skip(); // util-linux's prlimit sets this process's RLIMIT_NOFILE.
      // A process of its own: it lowers its file descriptor limit and fills its table.
      const poolModule = fileURLToPath(
        new URL("../../../../webhook/src/patches/sandbox/pool.js", import.meta.url),
      );
      const script = `
        import { execFileSync } from "node:child_process";
        import { openSync } from "node:fs";
        const { SandboxPool } = await import(${JSON.stringify(poolModule)});
        execFileSync("prlimit", ["--pid", String(process.pid), "--nofile=64:64"]);
        const held = [];
        try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
        const pool = new SandboxPool({ size: 1 });
        const config = { patches: [], vcluster: { name: "vc", namespace: "vc-ns", config: {} } };
        const out = { held: held.length };
        try { await pool.loadConfig("k", config); } catch (err) {
          Object.assign(out, { type: err.constructor.name, reason: err.reason, message: err.message });
        }
        Object.assign(out, { restarts: pool.restarts, pids: pool.stats().pids });
        await pool.close();
        console.log(JSON.stringify(out));
      `;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        encoding: "utf8",
        timeout: 30_000,
      });
      assert.equal(r.status, 0, `the process died: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.ok(Number(out.held) > 0, "the file descriptor table was full");
      assert.deepEqual(
        { type: out.type, reason: out.reason, message: out.message },
        {
          type: "SandboxUnavailableError",
          reason: "ChildrenFailToStart",
          message: `sandbox children fail to start: spawn ${process.execPath} EMFILE`,
        },
      );
      assert.equal(out.restarts, 3);
      assert.deepEqual(out.pids, []);
    });

    it("a child whose spawn failed is never signalled: the process group lives on", function () {
      if (!havePrlimit || !haveSetsid) this.skip(); // util-linux's prlimit and setsid
      // Node keeps a failed spawn's handle with pid 0; its kill() is then kill(0, SIGKILL), which
      // once killed the whole process group, make and CI's shell included (EPS-35). So this runs
      // in a process group of its own, beside a sleeping process that must outlive it: the
      // child is stopped at once, before Node reports the spawn error, and again at exit.
      const childModule = fileURLToPath(
        new URL("../../../../webhook/src/patches/sandbox/child-process.js", import.meta.url),
      );
      const script = `
        import { execFileSync } from "node:child_process";
        import { openSync } from "node:fs";
        const { SandboxProcess } = await import(${JSON.stringify(childModule)});
        execFileSync("prlimit", ["--pid", String(process.pid), "--nofile=64:64"]);
        const held = [];
        try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
        const exits = [];
        const child = new SandboxProcess({}, 1024, {
          message() {},
          exit(info) { exits.push(info); },
        });
        child.kill(new Error("stopped"));
        await new Promise((r) => setTimeout(r, 200));
        console.log(JSON.stringify({ held: held.length, pid: child.pid, exits: exits.length }));
      `;
      const group = [
        "sleep 30 & sentinel=$!",
        `${JSON.stringify(process.execPath)} --input-type=module -e "$SCRIPT"; rc=$?`,
        'kill -0 "$sentinel" && echo "sentinel alive"; kill "$sentinel"; exit $rc',
      ].join("\n");
      const r = spawnSync("setsid", ["-w", "bash", "-c", group], {
        encoding: "utf8",
        timeout: 30_000,
        env: { ...process.env, SCRIPT: script },
      });
      assert.equal(r.signal, null, `the process group was killed: ${r.stderr}`);
      assert.equal(r.status, 0, `the process died: ${r.stderr}`);
      const [json, alive] = r.stdout.trim().split("\n");
      const out = JSON.parse(json!) as Record<string, unknown>;
      assert.ok(Number(out.held) > 0, "the file descriptor table was full");
      assert.equal(out.pid, -1, "the spawn failed: the child has no process id");
      assert.equal(out.exits, 1, "the failed spawn ends the child once");
      assert.equal(alive, "sentinel alive");
    });
  });
});
