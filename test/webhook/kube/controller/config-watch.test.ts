// The config watcher on real files: a rewrite in place, a ConfigMap-style `..data` symlink swap,
// a touch that changes nothing, and a file that goes missing and comes back.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ConfigWatcher } from "../../../../webhook/src/kube/controller/config-watch.js";
import { until } from "../../../support/until.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("config watcher", function () {
  this.timeout(30_000);
  const watchers: ConfigWatcher[] = [];
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "vgate-config-watch-"));
  });

  afterEach(async () => {
    for (const w of watchers.splice(0)) await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function watching(path: string, intervalMs = 60_000): Promise<{ changes: () => number }> {
    let n = 0;
    const w = new ConfigWatcher(path, async () => void n++, { intervalMs, debounceMs: 20 });
    watchers.push(w);
    await w.start();
    return { changes: () => n };
  }

  it("a file rewritten in place is one change; rewriting the same content is none", async () => {
    const file = join(dir, "vcluster.yaml");
    writeFileSync(file, "a: 1\n");
    const seen = await watching(file);
    writeFileSync(file, "a: 2\n");
    await until(() => seen.changes() === 1, "the rewrite is noticed (directory watch)");
    writeFileSync(file, "a: 2\n");
    const now = new Date();
    utimesSync(file, now, now);
    await sleep(300);
    assert.equal(seen.changes(), 1);
  });

  it("a ConfigMap volume's ..data symlink swap is a change", async () => {
    // What the kubelet's AtomicWriter leaves: vcluster.yaml -> ..data/vcluster.yaml, ..data -> ..<ts>.
    mkdirSync(join(dir, "..2026_01"));
    writeFileSync(join(dir, "..2026_01", "vcluster.yaml"), "a: 1\n");
    symlinkSync("..2026_01", join(dir, "..data"));
    symlinkSync(join("..data", "vcluster.yaml"), join(dir, "vcluster.yaml"));
    const seen = await watching(join(dir, "vcluster.yaml"));
    mkdirSync(join(dir, "..2026_02"));
    writeFileSync(join(dir, "..2026_02", "vcluster.yaml"), "a: 2\n");
    symlinkSync("..2026_02", join(dir, "..data_tmp"));
    renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
    rmSync(join(dir, "..2026_01"), { recursive: true });
    await until(() => seen.changes() === 1, "the swap is noticed");
    await sleep(300);
    assert.equal(seen.changes(), 1);
  });

  it("the periodic check notices a change the directory watch did not report", async () => {
    const file = join(dir, "vcluster.yaml");
    writeFileSync(file, "a: 1\n");
    const seen = await watching(file, 200);
    // close() of the directory watch alone: only the timer is left to notice.
    (watchers[0] as unknown as { watcher?: { close(): void } }).watcher?.close();
    writeFileSync(file, "a: 3\n");
    await until(() => seen.changes() === 1, "the periodic check notices the rewrite");
  });

  it("a file that goes missing is a change, and so is its return", async () => {
    const file = join(dir, "vcluster.yaml");
    writeFileSync(file, "a: 1\n");
    const seen = await watching(file);
    rmSync(file);
    await until(() => seen.changes() === 1, "the removal is noticed");
    writeFileSync(file, "a: 1\n");
    await until(() => seen.changes() === 2, "the return is noticed");
  });

  it("a read that fails for want of file descriptors is no change", async function () {
    if (spawnSync("prlimit", ["--version"]).status !== 0) this.skip(); // util-linux's prlimit
    // A process of its own checks the file while this one holds its descriptor limit at 3 (0-2
    // are always open: it can open none), then again with the limit back. The file never
    // changed, so neither check may report a change; each check also says whether it could read.
    const file = join(dir, "vcluster.yaml");
    writeFileSync(file, "a: 1\n");
    const module = fileURLToPath(
      new URL("../../../../webhook/src/kube/controller/config-watch.js", import.meta.url),
    );
    const script = `
      import { readFile } from "node:fs/promises";
      import { createInterface } from "node:readline";
      const { ConfigWatcher } = await import(${JSON.stringify(module)});
      let changes = 0;
      const w = new ConfigWatcher(${JSON.stringify(file)}, async () => void changes++, {
        intervalMs: 600000,
      });
      await w.start();
      console.log("ready");
      for await (const line of createInterface({ input: process.stdin })) {
        await w.check();
        const read = await readFile(${JSON.stringify(file)}).then(() => "ok", (e) => e.code);
        console.log(JSON.stringify({ changes, read }));
      }
      await w.close();
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<string> => String((await lines.next()).value);
    try {
      assert.equal(await next(), "ready");
      const limits = /^Max open files\s+(\S+)\s+(\S+)/m.exec(
        readFileSync(`/proc/${child.pid}/limits`, "latin1"),
      )!;
      const prlimit = (nofile: string) =>
        assert.equal(
          spawnSync("prlimit", ["--pid", String(child.pid), `--nofile=${nofile}`]).status,
          0,
        );
      prlimit(`3:${limits[2]}`);
      child.stdin.write("check\n");
      const starved = JSON.parse(await next()) as { changes: number; read: string };
      prlimit(`${limits[1]}:${limits[2]}`);
      child.stdin.write("check\n");
      const back = JSON.parse(await next()) as { changes: number; read: string };
      assert.deepEqual(starved, { changes: 0, read: "EMFILE" });
      assert.deepEqual(back, { changes: 0, read: "ok" });
    } finally {
      child.stdin.end();
      child.kill();
    }
  });

  it("after close() nothing is reported", async () => {
    const file = join(dir, "vcluster.yaml");
    writeFileSync(file, "a: 1\n");
    const seen = await watching(file, 50);
    await watchers[0]!.close();
    writeFileSync(file, "a: 2\n");
    await sleep(300);
    assert.equal(seen.changes(), 0);
  });
});
