// The README's `make cluster` block, run as written: `make cluster` in the foreground, then each
// following line in one shell (a folder of its own, the exported KUBECONFIG), each showing what its
// comment promises; then Ctrl-C to the process group, as a terminal sends it, after which the host
// must be as it was before.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { HAVE_NODE, NODE_SKIP_REASON } from "../support/node/cluster-tier.js";
import { diffHostState, hostState } from "../support/node/host-state.js";
import { readmeBlock } from "../support/readme-blocks.js";
import { until } from "../support/until.js";

const lines = readmeBlock(repoFile("README.md"), "make cluster");

(HAVE_NODE ? describe : describe.skip)(
  `README: the make cluster block${NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);

    it("runs as written, and Ctrl-C leaves the host as it was", async () => {
      assert.match(lines[0]!, /^make cluster\b/);
      assert.equal(lines[1], "export KUBECONFIG=$PWD/.cluster/kubeconfig");
      const before = await hostState();
      const make = spawn("make", ["cluster"], {
        cwd: repoRoot,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      make.stdout.on("data", (c: Buffer) => (output += c.toString()));
      make.stderr.on("data", (c: Buffer) => (output += c.toString()));
      const exited = new Promise<string>((r) =>
        make.once("exit", (code, signal) => r(signal ?? String(code))),
      );
      const dir = mkdtempSync(join(tmpdir(), "vgate-make-cluster-"));
      try {
        await until(
          () => output.includes("Ctrl-C stops everything.") || make.exitCode !== null,
          "make cluster ready",
          300_000,
        );
        assert.equal(make.exitCode, null, `make cluster exited early:\n${output}`);
        const kubeconfig = join(repoRoot, ".cluster/kubeconfig");
        assert.ok(existsSync(kubeconfig));
        const env = {
          ...process.env,
          HOME: dir,
          KUBECONFIG: kubeconfig,
          PATH: `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`,
        };
        const script = lines
          .slice(2)
          .map((l, i) => `{\n${l}\n} >"${dir}/out.${i}" 2>&1; echo $? >"${dir}/code.${i}"`)
          .join("\n");
        await new Promise<void>((done) =>
          execFile("bash", ["-c", script], { cwd: dir, env, timeout: 120_000 }, () => done()),
        );
        const { readFileSync } = await import("node:fs");
        lines.slice(2).forEach((line, i) => {
          const out = readFileSync(join(dir, `out.${i}`), "utf8");
          assert.equal(readFileSync(join(dir, `code.${i}`), "utf8").trim(), "0", `${line}\n${out}`);
          const promised = /\s#\s(.*)$/.exec(line)?.[1] ?? "";
          if (promised.startsWith("NAME")) {
            assert.deepEqual(out.split("\n")[0]!.trim().split(/\s+/), promised.split(/\s+/));
            assert.equal((out.match(/^vgate-\S+\s+1\/1\s+Running/gm) ?? []).length, 2, out);
          } else if (promised) {
            assert.equal(out.trim(), promised, line);
          }
        });
      } finally {
        if (make.exitCode === null) process.kill(-make.pid!, "SIGINT");
        rmSync(dir, { recursive: true, force: true });
      }
      assert.match(await exited, /^(0|SIGINT)$/, output);
      assert.match(output, /stopped; the host is as it was/);
      assert.deepEqual(diffHostState(before, await hostState()), []);
    });
  },
);
