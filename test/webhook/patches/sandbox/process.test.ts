// The sandbox's children as processes: they never outlive the process that holds the pool,
// whatever ends it (SIGKILL, exit, SIGTERM), never keep it alive, and `vgate patch` and
// `vgate serve` stop promptly with them. Linux only: the checks read /proc.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "mocha";
import { repoRoot } from "../../../support/fixtures.js";
import { httpsRequest } from "../../../support/https-client.js";
import { until } from "../../../support/until.js";
import {
  childrenOf,
  endpointsUpdate,
  startPatchServe,
  statFields,
  VGATE,
} from "./serve-patches.js";

const HOLD_POOL = join(dirname(fileURLToPath(import.meta.url)), "fixtures/hold-pool.js");
const HAVE_PROC = existsSync("/proc/self/stat");
/**
 * How long a process may take to go once it should: a child killing itself is immediate, but a
 * shared, noisy 2-CPU machine can delay any process by a second or more. A child that outlived
 * its server would stay for ever, so the bound still tells the difference.
 */
const GONE_WITHIN_MS = 5000;
/** `vgate patch` starts node, SES and a child (about 1 s here), then stops at the 100 ms deadline. */
const CLI_WITHIN_MS = 15_000;

/** Alive and not a zombie. */
function running(pid: number): boolean {
  try {
    const state = statFields(pid)[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts hold-pool.js in `mode` and reads the pids it reports. */
async function holdPool(mode: string): Promise<{ child: ChildProcess; pids: number[] }> {
  const child = spawn(process.execPath, [HOLD_POOL, mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const line = await withTimeout(
    new Promise<string>((resolveLine, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolveLine(out.split("\n")[0]!);
      });
      child.once("exit", (code) =>
        reject(new Error(`hold-pool exited (${code}) before reporting`)),
      );
    }),
    20_000,
    "starting hold-pool",
  );
  const { pids } = JSON.parse(line) as { pids: number[] };
  assert.equal(pids.length, 2, "a child and a spare");
  // In the other modes the process, and so the children, may be gone already.
  if (mode === "spin") for (const pid of pids) assert.ok(running(pid), `child ${pid} runs`);
  return { child, pids };
}

describe("patches/sandbox children as processes", function () {
  this.timeout(60_000);
  let dir: string;
  before(function () {
    if (!HAVE_PROC) this.skip();
    dir = mkdtempSync(join(tmpdir(), "vgate-sandbox-proc-"));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("children die with the server when it is killed (SIGKILL) while one spins", async () => {
    const { child, pids } = await holdPool("spin");
    child.kill("SIGKILL");
    await exited(child);
    await until(() => pids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
  });

  it("children die when the server exits while one spins", async () => {
    const { child, pids } = await holdPool("exit");
    assert.deepEqual(await withTimeout(exited(child), GONE_WITHIN_MS, "exit"), {
      code: 0,
      signal: null,
    });
    await until(() => pids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
  });

  it("an idle pool does not keep the server alive", async () => {
    const { child, pids } = await holdPool("idle");
    const how = await withTimeout(exited(child), GONE_WITHIN_MS, "exiting without close()");
    assert.deepEqual(how, { code: 0, signal: null });
    await until(() => pids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
  });

  it("close() keeps the server alive until its children are gone, and no longer", async () => {
    // A race between a child's exit and its pipes closing: run it a few times.
    for (let i = 0; i < 5; i++) {
      const child = spawn(process.execPath, [HOLD_POOL, "close"], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
      const how = await withTimeout(exited(child), 20_000, "close()");
      assert.deepEqual(how, { code: 0, signal: null });
      const [first, second] = out.trim().split("\n");
      assert.equal(second, JSON.stringify({ closed: true }));
      const { pids } = JSON.parse(first!) as { pids: number[] };
      await until(() => pids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
    }
  });

  describe("vgate patch", () => {
    let config: string;
    let input: string;
    before(() => {
      config = join(dir, "spin.yaml");
      writeFileSync(
        config,
        [
          "sync:",
          "  toHost:",
          "    endpoints:",
          "      patches:",
          '        - path: metadata.annotations["owner"]',
          "          expression: 'while (true) {}'",
          "",
        ].join("\n"),
      );
      input = resolve(repoRoot, "webhook/examples/endpoints.yaml");
    });

    const patchArgs = (...extra: string[]): string[] => [
      VGATE,
      "patch",
      "--config",
      config,
      "--direction",
      "toHost",
      "--vcluster-name",
      "vc",
      "--vcluster-namespace",
      "vc-ns",
      ...extra,
      input,
    ];

    it("exits with the deadline's error when an expression never ends", async () => {
      const cli = spawn(process.execPath, patchArgs(), { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      cli.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
      const how = await withTimeout(exited(cli), CLI_WITHIN_MS, "vgate patch");
      assert.equal(how.code, 1, stderr);
      assert.match(stderr, /patches\[0\].*did not finish within 100ms/);
    });

    it("stops at once on SIGTERM, and its children with it", async () => {
      const cli = spawn(process.execPath, patchArgs("--timeout", "60s"), {
        stdio: ["ignore", "ignore", "ignore"],
      });
      let kids: number[] = [];
      // The child and the spare, once the job is inside the loop.
      await until(
        () => {
          kids = childrenOf(cli.pid!);
          return kids.length === 2;
        },
        "vgate patch started its children",
        20_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      cli.kill("SIGTERM");
      await withTimeout(exited(cli), GONE_WITHIN_MS, "vgate patch after SIGTERM");
      await until(() => kids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
    });
  });

  describe("vgate serve", () => {
    it("stops promptly on SIGTERM while an expression spins, and its children with it", async () => {
      const config = join(dir, "spin-virtual.yaml");
      writeFileSync(
        config,
        [
          "sync:",
          "  toHost:",
          "    endpoints:",
          "      patches:",
          '        - path: metadata.annotations["owner"]',
          "          expression: 'value'",
          "          reverseExpression: 'while (true) {}'",
          "",
        ].join("\n"),
      );
      // SIGTERM waits for requests in flight, at most --shutdown-timeout and the admission
      // deadline; both are short here so the spinning request is cut, not waited for.
      const { serve, base } = await startPatchServe(config, {
        patchTimeout: "60s",
        workers: 1,
        more: ["--shutdown-timeout=1s", "--admission-timeout=30s"],
      });
      try {
        const kids = childrenOf(serve.pid!);
        assert.equal(kids.length, 2, "a child and a spare");
        // An update that changes the patched annotation: its reverseExpression spins.
        const review = endpointsUpdate("owner", "new", "old");
        const pending = httpsRequest(`${base}/mutate/endpoints`, {
          body: JSON.stringify(review),
          headers: { "Content-Type": "application/json" },
          timeoutMs: 60_000,
        }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 500));
        serve.kill("SIGTERM");
        await withTimeout(exited(serve), GONE_WITHIN_MS, "vgate serve after SIGTERM");
        await until(() => kids.every((p) => !running(p)), "every child gone", GONE_WITHIN_MS);
        await pending;
      } finally {
        serve.kill("SIGKILL");
      }
    });
  });
});
