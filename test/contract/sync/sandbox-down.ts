// What a user of `vgate sync` sees when the sandbox cannot start children: the controller's file
// descriptors run out (RLIMIT_NOFILE lowered under it with prlimit) while its sandbox children
// die, so every replacement spawn fails with EMFILE and the pool breaks. That is the controller's
// trouble, not an object's: the key is retried with backoff and logged ("reconcile failed;
// retrying", with the pool's error), no SyncError Event is recorded on the object, nothing is
// written, and the process keeps running and healthy.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import type { SyncContext } from "./sync-context.js";

const CONFIG = `sync:
  toHost:
    endpoints:
      enabled: true
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: value.toUpperCase()
`;

const havePrlimit = spawnSync("prlimit", ["--version"]).status === 0;

/** Processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(+entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

function prlimit(pid: number, nofile: string): void {
  const r = spawnSync("prlimit", ["--pid", String(pid), `--nofile=${nofile}`], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
}

interface LogLine {
  msg?: string;
  endpoints?: string;
  err?: string;
  retries?: number;
}

function logLines(text: string): LogLine[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}

export function sandboxDownTests(ctx: SyncContext): void {
  let proc: SyncProcess | undefined;
  before(async function () {
    if (!havePrlimit) this.skip(); // util-linux's prlimit changes the controller's limit.
    await ctx.stopMain();
    proc = await ctx.controller("sandbox-down", CONFIG);
  });
  after(() => proc?.stop());

  it("retries the key and logs the pool's error, with no SyncError Event, and stays healthy", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "before", { annotations: { "example.com/owner": "ann" } });
    await ctx.waitForHost(
      ns,
      "before",
      (h) => h.metadata.annotations?.["example.com/owner"] === "ANN",
    );

    const pid = proc!.pid()!;
    const children = childrenOf(pid);
    assert.ok(children.length > 0, "the controller has sandbox children");
    const limits = /^Max open files\s+(\S+)\s+(\S+)/m.exec(
      readFileSync(`/proc/${pid}/limits`, "latin1"),
    )!;
    // Descriptors 0-2 are always open: the controller can open none more. Kept short: its Lease
    // is renewed over connections it already has, but not for ever.
    prlimit(pid, `3:${limits[2]}`);
    try {
      for (const child of childrenOf(pid)) {
        try {
          process.kill(child, "SIGKILL");
        } catch {
          // Replaced meanwhile (a child retired after a batch).
        }
      }
      await until(() => childrenOf(pid).length === 0, "the children are gone", 5000);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      prlimit(pid, `${limits[1]}:${limits[2]}`);
    }
    assert.deepEqual(childrenOf(pid), [], "no child could be started, and none is again");

    const logStart = (await proc!.log()).length;
    await ctx.syncable(ns, "after", { annotations: { "example.com/owner": "bob" } });
    const key = `${ns}/after`;
    let failures: LogLine[] = [];
    await until(
      async () => {
        failures = logLines((await proc!.log()).slice(logStart)).filter(
          (l) => l.msg === "reconcile failed; retrying" && l.endpoints === key,
        );
        return failures.length >= 2;
      },
      `two logged retries of ${key}`,
      60_000,
    );
    const expected = `sandbox children fail to start: spawn ${process.execPath} EMFILE`;
    for (const f of failures) assert.equal(f.err, expected);
    // Requeued with backoff: the count of retries grows.
    assert.ok(failures[1]!.retries! > failures[0]!.retries!, JSON.stringify(failures));
    assert.deepEqual(await ctx.syncErrors(ns, "after"), [], "no Event: not the object's fault");
    // Nothing is written while the pool is broken, and nothing unpatched ever: a new config (a
    // reload) would bring a new pool, and its write would carry the patch.
    const host = await ctx.getHost(ns, "after");
    assert.ok(
      host === null || host.metadata?.annotations?.["example.com/owner"] === "BOB",
      `written unpatched: ${JSON.stringify(host?.metadata?.annotations)}`,
    );
    assert.ok(!proc!.exited());
    assert.equal((await proc!.get("/healthz")).status, 200);
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "after", namespace: ns },
    });
  });
}
