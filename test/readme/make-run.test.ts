// docs/development.md's quick start, run as written: `make run` in the foreground, then the two
// curl blocks, each printing what its comment line shows (`...` stands for text left out). They
// run inside a network namespace of their own (unshare -rn), so the fixed port 8443 never meets
// another process of this machine and nothing leaves it; `make run` is then stopped by its
// process group.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { docBlock } from "../support/readme-blocks.js";

const run = docBlock("make run");
const allowed = docBlock("curl -sk --data @webhook/examples/admission-review.json");
const denied = docBlock("curl -sk --data @webhook/examples/admission-review-denied.json");

const NETNS = spawnSync("unshare", ["-rn", "true"]).status === 0;
const WHY = NETNS ? "" : " (skipped: unshare -rn cannot make a network namespace here)";

/** A block's command (its lines up to the first comment-only line) and that comment, `# ` cut. */
function commandAndOutput(lines: readonly string[]): { command: string; shown: string } {
  const at = lines.findIndex((l) => l.startsWith("# "));
  assert.ok(at > 0, `no "# output" line after the command:\n${lines.join("\n")}`);
  return { command: lines.slice(0, at).join("\n"), shown: lines[at]!.slice(2) };
}

/** `text` holds the pieces of `shown` between its `...`s, in order. */
function showsAsElided(text: string, shown: string): void {
  let from = 0;
  for (const piece of shown.split("...").filter((p) => p !== "")) {
    const at = text.indexOf(piece, from);
    assert.ok(at >= 0, `missing ${JSON.stringify(piece)} in ${text}`);
    from = at + piece.length;
  }
}

describe("docs: the make run quick start", function () {
  it("is one line, make run, and the curl blocks each show an answer", () => {
    assert.equal(run.length, 1);
    assert.match(run[0]!, /^make run\b/);
    for (const block of [allowed, denied]) assert.ok(commandAndOutput(block).shown);
  });

  (NETNS ? it : it.skip)(`runs as written, and curl gets what the page shows${WHY}`, function () {
    this.timeout(240_000);
    const dir = mkdtempSync(join(tmpdir(), "vgate-make-run-"));
    const blocks = [allowed, denied].map(commandAndOutput);
    blocks.forEach((b, i) => writeFileSync(join(dir, `curl.${i}.sh`), b.command));
    // In the namespace: loopback up, make run in a process group of its own, wait for it to serve,
    // run each curl block from the checkout, then stop the group.
    const script = [
      "ip link set lo up",
      `set -m; { ${run[0]!.replace(/\s#.*$/, "")} ; } >"${dir}/run.log" 2>&1 & pid=$!; set +m`,
      `for _ in $(seq 1 900); do grep -q 'serving on' "${dir}/run.log" && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done`,
      ...blocks.map(
        (_, i) => `bash "${dir}/curl.${i}.sh" >"${dir}/out.${i}" 2>&1; echo $? >"${dir}/code.${i}"`,
      ),
      "kill -TERM -- -$pid 2>/dev/null; wait $pid 2>/dev/null; true",
    ].join("\n");
    try {
      const r = spawnSync("unshare", ["-rn", "bash", "-c", script], {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 230_000,
        // As a fresh terminal: no kubeconfig, so `vgate serve --dev` runs without an API server.
        env: { ...process.env, KUBECONFIG: "", HOME: dir },
      });
      const log = readFileSync(join(dir, "run.log"), "utf8");
      assert.equal(r.status, 0, `${r.stderr}\n${log}`);
      assert.match(log, /serving on https:\/\/localhost:8443/, log);
      blocks.forEach((b, i) => {
        const out = readFileSync(join(dir, `out.${i}`), "utf8");
        assert.equal(
          readFileSync(join(dir, `code.${i}`), "utf8").trim(),
          "0",
          `${b.command}\n${out}`,
        );
        if (b.shown.includes("...")) showsAsElided(out, b.shown);
        else assert.equal(out.trim(), b.shown);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
