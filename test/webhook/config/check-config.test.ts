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
    assert.deepEqual(result, {
      ok: true,
      summary: [
        "sync.toHost.endpoints.patches: 1 patch (expression virtual → host, reverseExpression host → virtual)",
      ],
    });
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

  it("an empty file is not OK", async () => {
    const { file, result } = await check("empty.yaml", "");
    assert.deepEqual(result, {
      ok: false,
      problems: [
        `${file} is empty: a vCluster config is a YAML map such as "sync: {toHost: {endpoints: {patches: [...]}}}"`,
      ],
    });
  });

  it("a file that is not a vCluster config is not OK", async () => {
    const { result } = await check(
      "endpoints.yaml",
      "apiVersion: v1\nkind: Endpoints\nmetadata: {name: db}\nsubsets: []\n",
    );
    assert.deepEqual(result, {
      ok: false,
      problems: [
        "at '': additional properties 'apiVersion', 'kind', 'metadata', 'subsets' not allowed",
      ],
    });
    const list = await check("list.yaml", "- sync: {}\n");
    assert.deepEqual(list.result, { ok: false, problems: ["at '': got array, want object"] });
  });

  it("a misspelt key on the way to sync.toHost.endpoints is not OK", async () => {
    const { result } = await check(
      "typo.yaml",
      "sync:\n  tohost:\n    endpoints:\n      patches:\n        - path: a\n          expression: '1 +'\n",
    );
    assert.deepEqual(result, {
      ok: false,
      problems: ["at '/sync': additional properties 'tohost' not allowed"],
    });
  });

  it("YAML problems never show the file's text", async () => {
    const secret = "c2VjcmV0LXRva2VuLXZhbHVl";
    const { file, result } = await check(
      "leak.yaml",
      `sync:\n  toHost:\n    endpoints: {}\ntoken: "${secret}\\q"\nkey: |2 ${secret}\n  x\n`,
    );
    assert.ok(!result.ok);
    assert.deepEqual(result.problems, [
      `${file}:4:33: invalid escape sequence in a double-quoted string`,
      `${file}:5:9: unexpected character`,
    ]);
  });

  it("an oversized file is refused without reading it all", async () => {
    const file = join(dir, "big.yaml");
    await writeFile(file, `# ${"x".repeat(4 * 1024 * 1024)}\n`);
    const result = await checkConfigFile(file);
    assert.deepEqual(result, { ok: false, problems: [`${file} is larger than 4194304 bytes`] });
  });

  it("a read error is a problem", async () => {
    const file = join(dir, "nope.yaml");
    const result = await checkConfigFile(file);
    assert.ok(!result.ok);
    assert.equal(result.problems.length, 1);
    assert.match(result.problems[0]!, /^cannot read .*nope\.yaml: no such file; check the path$/);
  });
});
