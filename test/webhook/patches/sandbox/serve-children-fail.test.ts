// What a user of `vgate serve` sees when the sandbox cannot start children: a real server whose
// file descriptors run out (RLIMIT_NOFILE lowered under it with prlimit) while its children die.
// Every replacement spawn fails with EMFILE, the pool breaks after three, and once descriptors
// are back every admission that needs the patches is refused with the pool's error, while the
// server itself keeps serving. Before the pool handled EMFILE the server crashed here.
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import { httpsRequest } from "../../../support/https-client.js";
import { until } from "../../../support/until.js";
import { childrenOf, endpointsUpdate, startPatchServe } from "./serve-patches.js";

const havePrlimit = spawnSync("prlimit", ["--version"]).status === 0;

interface Answer {
  allowed: boolean;
  code: number | undefined;
  message: string;
}

async function admit(url: string): Promise<Answer> {
  const res = await httpsRequest(url, {
    body: JSON.stringify(endpointsUpdate("good", "hello", "old")),
    headers: { "Content-Type": "application/json" },
    timeoutMs: 30_000,
  });
  assert.equal(res.status, 200, res.text);
  const r = res.json<{
    response: { allowed: boolean; status?: { code?: number; message?: string } };
  }>().response;
  return { allowed: r.allowed, code: r.status?.code, message: r.status?.message ?? "" };
}

/** The soft and hard open-file limits of a process. */
function openFileLimits(pid: number): [string, string] {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "latin1"));
  assert.ok(m, "/proc/PID/limits names the open-file limit");
  return [m[1]!, m[2]!];
}

function prlimit(pid: number, soft: string, hard: string): void {
  const r = spawnSync("prlimit", ["--pid", String(pid), `--nofile=${soft}:${hard}`], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
}

describe("vgate serve when its sandbox children fail to start", function () {
  this.timeout(120_000);
  let dir: string | undefined;
  let serve: ChildProcess | undefined;
  let base: string;

  before(async function () {
    // Linux only (/proc), and util-linux's prlimit to change the server's limit.
    if (!existsSync("/proc/self/limits") || !havePrlimit) this.skip();
    dir = mkdtempSync(join(tmpdir(), "vgate-children-fail-"));
    const patches = [{ path: "metadata.annotations.good", reverseExpression: "value + '!'" }];
    const config = { sync: { toHost: { endpoints: { enabled: true, patches } } } };
    writeFileSync(join(dir, "vcluster.yaml"), JSON.stringify(config));
    ({ serve, base } = await startPatchServe(join(dir, "vcluster.yaml"), {
      patchTimeout: "1s",
      workers: 1,
    }));
  });

  after(async () => {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once("exit", r));
      serve.kill("SIGKILL");
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses the admission with the pool's error (400), and keeps serving", async () => {
    const url = `${base}/mutate/endpoints`;
    const pid = serve!.pid!;
    const first = await admit(url);
    assert.ok(first.allowed, `patched while the sandbox works: ${first.message}`);
    const children = childrenOf(pid);
    assert.ok(children.length > 0, "the server has sandbox children");

    const [soft, hard] = openFileLimits(pid);
    // Descriptors 0-2 are always open: the server can open none more.
    prlimit(pid, "3", hard);
    try {
      for (const child of children) process.kill(child, "SIGKILL");
      // Replacements cannot even be spawned: no child comes back.
      await until(() => childrenOf(pid).length === 0, "the children are gone");
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(childrenOf(pid), [], "no child could be started");
    } finally {
      prlimit(pid, soft, hard);
    }
    assert.equal(serve!.exitCode, null, "the server lives on");

    const answer = await admit(url);
    assert.deepEqual(answer, {
      allowed: false,
      code: 400,
      message: `endpoints "default/db": sync patch failed: sandbox children fail to start: spawn ${process.execPath} EMFILE`,
    });
    // The pool stays broken: it starts no child again, and the server still serves.
    assert.deepEqual(childrenOf(pid), []);
    assert.equal((await httpsRequest(`${base}/healthz`, { timeoutMs: 5000 })).status, 200);
  });
});
