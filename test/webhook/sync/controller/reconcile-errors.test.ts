// reconcileEndpoints when patches fail: a SyncError naming the object, `patches[i] (path)` and the
// direction; a hostile expression (endless loop, memory bomb, reaching for process, require or
// Function) fails only the objects it hits, while another key still plans its create. The real
// sandbox runner, with a short deadline.

import assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import { SandboxPool } from "../../../../webhook/src/patches/sandbox/pool.js";
import { isSandboxUnavailable } from "../../../../webhook/src/patches/sandbox/sandbox-unavailable.js";
import { PatchError } from "../../../../webhook/src/patches/types.js";
import { until } from "../../../support/until.js";
import {
  SyncError,
  type ReconcileDeps,
} from "../../../../webhook/src/sync/controller/contracts.js";
import {
  hostKeyFor,
  reconcileEndpoints,
} from "../../../../webhook/src/sync/controller/reconcile.js";
import {
  editAnnotations,
  service,
  startRunner,
  virtualEndpoints,
  World,
} from "./reconcile-fixtures.js";

// Only objects whose `mode` annotation asks for it are hit.
const HOSTILE = [
  'value === "throw" ? (() => { throw new Error("boom") })()',
  'value === "spin" ? (() => { while (true) {} })()',
  'value === "bomb" ? (() => { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); })()',
  'value === "process" ? process.exit(1)',
  'value === "require" ? require("node:fs").readFileSync("/etc/passwd", "utf8")',
  'value === "function" ? (function () {}).constructor("return process")().exit(1)',
  'value === "number" ? 42',
].join(" : ");

const PATCHES = [
  {
    path: 'metadata.annotations["mode"]',
    expression: `${HOSTILE} : value`,
    reverseExpression: 'value === "throw-back" ? (() => { throw new Error("back") })() : value',
  },
];

type Runner = Awaited<ReturnType<typeof startRunner>>;

describe("sync/controller/reconcile: patch errors and hostile expressions", function () {
  this.timeout(60_000);
  let runner: Runner;
  before(async () => {
    runner = await startRunner(PATCHES, 300);
  });
  after(async () => {
    await runner?.close();
  });

  function world(keys: Record<string, string>): World {
    const w = new World();
    for (const [name, mode] of Object.entries(keys)) {
      w.virtual.put(virtualEndpoints("team", name, { annotations: { mode } }));
      w.virtual.put(service("team", name));
    }
    return w;
  }

  const reconcile = (w: World, name: string) =>
    reconcileEndpoints(w.state({ namespace: "team", name }, runner.vcluster), w.deps(runner));

  it("a throwing expression is a SyncError naming the object, patches[i] (path) and the direction", async () => {
    const w = world({ a: "throw" });
    await assert.rejects(reconcile(w, "a"), (err: unknown) => {
      assert.ok(err instanceof SyncError);
      assert.equal(err.direction, "toHost");
      assert.match(
        err.message,
        /^endpoints team\/a: patches\[0\] \(metadata\.annotations\.mode\) failed going toHost \(expression\): the expression threw Error: boom$/,
      );
      return true;
    });
  });

  it("a throwing reverseExpression fails the host → virtual step, direction toVirtual", async () => {
    const w = world({ a: "fine" });
    w.apply(await reconcile(w, "a"));
    const hostKey = hostKeyFor({ namespace: "team", name: "a" }, runner.vcluster);
    const host = w.host.endpoints(hostKey.namespace, hostKey.name)!;
    editAnnotations(host, { mode: "throw-back" });
    w.host.put(host);
    await assert.rejects(reconcile(w, "a"), (err: unknown) => {
      assert.ok(err instanceof SyncError);
      assert.equal(err.direction, "toVirtual");
      assert.match(
        err.message,
        /patches\[0\] \(metadata\.annotations\.mode\) failed going toVirtual \(reverseExpression\): .*back/,
      );
      return true;
    });
  });

  it("a patch that makes an annotation value a non-string is a SyncError, not a write the API server would refuse", async () => {
    const w = world({ n: "number" });
    await assert.rejects(
      reconcile(w, "n"),
      (err: unknown) =>
        err instanceof SyncError &&
        err.message ===
          'endpoints team/n: the patches going toHost made annotation "mode" a number; annotation and label values must be strings',
    );
  });

  it("a closed sandbox pool is not the object's fault: a plain error (retried without an Event)", async () => {
    const closed = await startRunner(PATCHES);
    await closed.close();
    const w = world({ a: "fine" });
    await assert.rejects(
      reconcileEndpoints(
        w.state({ namespace: "team", name: "a" }, closed.vcluster),
        w.deps(closed),
      ),
      (err: unknown) =>
        isSandboxUnavailable(err) &&
        !(err instanceof SyncError) &&
        err.reason === "Closed" &&
        err.message === "the sandbox pool is closed",
    );
  });

  it("a pool whose children fail to start is not the object's fault either: its own error, by type", async () => {
    // A real broken pool: a 1 MiB heap cannot hold Node's startup snapshot, so V8 aborts every
    // child as it starts (test/webhook/patches/sandbox/pool-startup.test.ts).
    const pool = new SandboxPool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 1 } });
    try {
      const config = { patches: PATCHES, vcluster: runner.vcluster };
      await assert.rejects(pool.loadConfig("vcluster", config), PatchError);
      await until(() => pool.restarts >= 3, "the pool breaks after three startup failures");
      const broken = {
        vcluster: runner.vcluster,
        run: (job: Parameters<ReconcileDeps["run"]>[0]) => pool.apply("vcluster", job),
      };
      const w = world({ a: "fine" });
      await assert.rejects(
        reconcileEndpoints(
          w.state({ namespace: "team", name: "a" }, broken.vcluster),
          w.deps(broken),
        ),
        (err: unknown) => {
          // Not a SyncError: the controller retries the key and records no Event on it.
          assert.ok(!(err instanceof SyncError), `a SyncError: ${String(err)}`);
          assert.ok(isSandboxUnavailable(err));
          assert.equal(err.reason, "ChildrenFailToStart");
          assert.match(
            err.message,
            /^sandbox children fail to start: (signal SIG\w+|exit code \d+)/,
          );
          return true;
        },
      );
    } finally {
      await pool.close();
    }
  });

  for (const [mode, expected] of [
    ["spin", /did not finish within 300ms/],
    // Whichever wall it reaches first on this machine: a memory limit, or the deadline.
    ["bomb", /memory limit|did not finish within 300ms/],
    ["process", /threw TypeError: Cannot read properties of undefined|process is not defined/],
    ["require", /require is not (defined|a function)/],
    ["function", /process|Function|not a function|constructor/],
  ] as const) {
    it(`a hostile expression (${mode}) fails only its object; another key still plans its create`, async () => {
      const w = world({ hostile: mode, good: "fine" });
      const [bad, good] = await Promise.allSettled([reconcile(w, "hostile"), reconcile(w, "good")]);
      assert.equal(bad.status, "rejected");
      const err = (bad as PromiseRejectedResult).reason as unknown;
      assert.ok(err instanceof SyncError, String(err));
      assert.match(
        err.message,
        /^endpoints team\/hostile: patches\[0\] \(metadata\.annotations(\.mode|\["mode"\])\) failed going toHost \(expression\): (?!patches)/,
      );
      assert.match(err.message, expected);
      assert.equal(good.status, "fulfilled");
      const plan = (good as PromiseFulfilledResult<Awaited<ReturnType<typeof reconcile>>>).value;
      assert.deepEqual(
        plan.actions.map((a) => `${a.type} ${a.side}`),
        ["create host"],
      );
      // And the runner keeps working for the next object.
      const after = await reconcile(w, "good");
      assert.equal(after.actions.length, 1);
    });
  }
});
