// kubectl accesskey version: run as plugin/bin/kubectl-accesskey (the esbuild bundle, with the build
// inlined), through kubectl's plugin discovery, and from the tsc output (dist/build-info.json). No
// server is asked.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { assertTextMatches, assertThisBuild } from "../support/build-info-check.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { kubectl, plugin } from "./plugin-run.js";

describe("kubectl accesskey version", function () {
  this.timeout(30_000);

  it("prints this checkout's commit (git rev-parse HEAD) and a build date, with no server", async () => {
    // No kubeconfig at all (plugin-run gives it an empty HOME): version needs none.
    const json = await plugin(["version", "-o", "json"]);
    assert.equal(json.code, 0, json.stderr);
    const info = assertThisBuild(json.stdout, "json");
    const yaml = await plugin(["version", "-o", "yaml"]);
    assert.deepEqual(assertThisBuild(yaml.stdout, "yaml"), info);
    const text = await plugin(["version"]);
    assert.equal(text.code, 0, text.stderr);
    assertTextMatches(text.stdout, info);
  });

  (HAVE_KUBECTL ? it : it.skip)(
    `through kubectl's plugin discovery: kubectl accesskey version${KUBECTL_SKIP_REASON}`,
    async () => {
      const r = await kubectl(["accesskey", "version", "-o", "json"]);
      assert.equal(r.code, 0, r.stderr);
      assertThisBuild(r.stdout, "json");
    },
  );

  it("the tsc output (no bundle) reads dist/build-info.json and says the same", () => {
    const main = join(repoRoot, "dist/plugin/src/main.js");
    const r = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(main)}); process.exitCode = await m.main(["version", "-o", "json"]);`,
      ],
      { encoding: "utf8", timeout: 20_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    assertThisBuild(r.stdout, "json");
  });

  it("a bad -o fails as kubectl version does, and --help works", async () => {
    const bad = await plugin(["version", "-o", "wide"]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "error: --output must be 'yaml' or 'json'\n");
    const help = await plugin(["version", "--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /kubectl accesskey version \[-o json\|yaml\]/);
  });
});
