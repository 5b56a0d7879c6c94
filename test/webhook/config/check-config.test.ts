import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import { checkConfigFile } from "../../../webhook/src/config/check-config.js";

describe("config/check-config", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vgate-check-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function check(name: string, text: string) {
    const file = join(dir, name);
    await writeFile(file, text);
    return { file, result: await checkConfigFile(file) };
  }

  it("ok for a valid file", async () => {
    const { result } = await check(
      "ok.yaml",
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: value\n",
    );
    assert.deepEqual(result, { ok: true });
  });

  it("lists validation problems", async () => {
    const { result } = await check(
      "bad.yaml",
      "sync: {toHost: {endpoints: {patches: [{path: a}, {path: a, labels: {}}]}}}\n",
    );
    assert.deepEqual(result, {
      ok: false,
      problems: [
        "sync.toHost.endpoints.patches[0] need to use one of: expression, labels or reference",
        'sync.toHost.endpoints.patches[0] and sync.toHost.endpoints.patches[1] have the same path "a"',
      ],
    });
  });

  it("YAML errors are problems with file:line:column", async () => {
    const { file, result } = await check("syntax.yaml", "a: 1\n  b: 2\n");
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(
      result.problems[0],
      `${file}:1:4: Nested mappings are not allowed in compact mappings`,
    );
  });

  it("a read error is a problem", async () => {
    const file = join(dir, "nope.yaml");
    const result = await checkConfigFile(file);
    assert.ok(!result.ok);
    assert.equal(result.problems.length, 1);
    assert.match(result.problems[0]!, /^cannot read .*nope\.yaml: ENOENT/);
  });
});
