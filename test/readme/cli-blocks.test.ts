// The dry-run blocks of docs/patches.md, run as written: `vgate check-config` (each `$ ` line a command, the
// lines after it its output) and `vgate patch --explain` (the block after it is what standard
// error says). `vgate` is this checkout's webhook/bin/vgate, put first on PATH.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { docBlock, docPageWith } from "../support/readme-blocks.js";
import { suiteTempDir } from "../support/temp-dir.js";

const bin = suiteTempDir("vgate-readme-bin-");
symlinkSync(join(repoRoot, "webhook/bin/vgate"), join(bin, "vgate"));
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env["PATH"] ?? ""}` };

const sh = (command: string) =>
  spawnSync("bash", ["-c", command], { cwd: repoRoot, env, encoding: "utf8", timeout: 60_000 });

/** The plain ``` block right after the first line of the docs that contains `marker`. */
function outputBlockAfter(marker: string): string[] {
  const { contents } = docPageWith(marker);
  const m = /^```\n([\s\S]*?)^```$/m.exec(contents.slice(contents.indexOf(marker)));
  assert.ok(m, `no output block after ${JSON.stringify(marker)}`);
  return m[1]!.trimEnd().split("\n");
}

describe("docs: the dry-run command blocks", function () {
  this.timeout(60_000);

  it("vgate check-config: each command prints the lines shown under it", () => {
    const lines = docBlock("$ vgate check-config");
    const runs: { command: string; expected: string[] }[] = [];
    for (const line of lines) {
      if (line.startsWith("$ ")) runs.push({ command: line.slice(2), expected: [] });
      else runs.at(-1)!.expected.push(line);
    }
    assert.equal(runs.length, 2);
    for (const { command, expected } of runs) {
      const r = sh(command);
      assert.deepEqual(`${r.stdout}${r.stderr}`.trimEnd().split("\n"), expected, command);
    }
  });

  it("vgate patch --explain: standard error says what the block after it shows", () => {
    const command = docBlock("vgate patch --config").join("\n");
    const r = sh(command);
    assert.equal(r.status, 0, r.stderr);
    const expected = outputBlockAfter("with `--explain` tells on standard error");
    assert.deepEqual(r.stderr.trimEnd().split("\n"), expected);
    assert.equal((JSON.parse(r.stdout) as { kind: string }).kind, "Endpoints");
  });

  it("vgate translate: prints the host Endpoints the page describes", () => {
    const r = sh(docBlock("vgate translate --config").join("\n"));
    assert.equal(r.status, 0, r.stderr);
    const host = JSON.parse(r.stdout) as {
      kind: string;
      metadata: { name: string; namespace: string; annotations: Record<string, string> };
      subsets: { addresses: { targetRef?: { name: string } }[] }[];
    };
    assert.equal(host.kind, "Endpoints");
    assert.equal(host.metadata.name, "db-x-default-x-my-vcluster");
    assert.equal(host.metadata.namespace, "vcluster-my-vcluster");
    assert.equal(host.metadata.annotations["vcluster.loft.sh/object-name"], "db");
    assert.equal(host.subsets[0]!.addresses[0]!.targetRef?.name, "db-0-x-default-x-my-vcluster");
  });
});
