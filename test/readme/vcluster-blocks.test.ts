// The vCluster examples of docs/patches.md are the files the tests run: the `vcluster.yaml` shown for `vgate
// sync --alongside-vcluster` is webhook/examples/vcluster-alongside.yaml, which
// test/cluster/vcluster-side-by-side.test.ts gives vCluster's syncer and vgate sync, line for line
// (the file's leading comment aside), and `vgate check-config` accepts it.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { docPageWith } from "../support/readme-blocks.js";

/** The lines of the docs' ```yaml block whose first line is `first`. */
function yamlBlock(first: string): string[] {
  const { page, contents } = docPageWith(`\n${first}\n`);
  for (const m of contents.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
    const lines = m[1]!.trimEnd().split("\n");
    if (lines[0] === first) return lines.slice(1);
  }
  throw new Error(`${page} has no yaml block starting with ${JSON.stringify(first)}`);
}

describe("docs: the vCluster examples", () => {
  const file = "webhook/examples/vcluster-alongside.yaml";

  it(`the vcluster.yaml shown for --alongside-vcluster is ${file}`, () => {
    const shown = yamlBlock(`# ${file}`);
    const lines = repoFile(file).trimEnd().split("\n");
    const body = lines.slice(lines.findIndex((l) => !l.startsWith("#")));
    assert.deepEqual(shown, body);
  });

  it(`vgate check-config accepts ${file}`, () => {
    const r = spawnSync(join(repoRoot, "webhook/bin/vgate"), ["check-config", file], {
      cwd: repoRoot,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    // OK, then the kinds with patches: the Endpoints patches this file keeps for vgate sync.
    const [ok, ...kinds] = r.stdout.trim().split("\n");
    assert.equal(ok, "OK");
    assert.deepEqual(
      kinds.map((l) => l.split(":")[0]),
      ["sync.toHost.endpoints.patches"],
    );
  });
});
