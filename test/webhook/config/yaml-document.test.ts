// The YAML decoder for vcluster.yaml and the CLI's objects, on malformed, oversized, deeply nested
// and hostile input: it answers with positions, never with the input's text, and never throws.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { after, before, describe, it } from "mocha";
import { readTextFile, ReadError } from "../../../webhook/src/config/read-file.js";
import {
  MAX_DEPTH,
  nestsDeeperThan,
  parseYamlDocument,
  type YamlDialect,
} from "../../../webhook/src/config/yaml-document.js";

const SECRET = "hunter2Zq7xSECRET";

function problems(text: string): string[] {
  const r = parseYamlDocument(text, "f.yaml");
  assert.ok(!r.ok, `expected problems for ${JSON.stringify(text.slice(0, 80))}`);
  return r.problems;
}

describe("config/yaml-document", () => {
  it("parses YAML and JSON; empty text and comments are null", () => {
    assert.deepEqual(parseYamlDocument("a: [1, {b: c}]\n", "f.yaml"), {
      ok: true,
      value: { a: [1, { b: "c" }] },
    });
    assert.deepEqual(parseYamlDocument('{"a": 1}', "f.json"), { ok: true, value: { a: 1 } });
    for (const empty of ["", "# nothing\n", "---\n"]) {
      assert.deepEqual(parseYamlDocument(empty, "f.yaml"), { ok: true, value: null });
    }
  });

  describe("malformed input: the position and what is wrong, never the text", () => {
    // Each of these makes yaml's own message, or its excerpt, quote the input.
    const leaky: Record<string, string> = {
      "bad escape": `a: "x\\q${SECRET}"\n`,
      "block scalar header": `password: |2 ${SECRET}\n  x\n`,
      "unexpected token": `a: b\n]${SECRET}\n`,
      "bad plain start": `a: @${SECRET}\n`,
      "anchor order": `a: - &${SECRET} x\n`,
      "unterminated quote": `token: "${SECRET}\n`,
      "tab indentation": `a:\n\t${SECRET}: 1\n`,
      "bad directive": `%YAML ${SECRET}\n---\na: 1\n`,
    };
    for (const [name, text] of Object.entries(leaky)) {
      it(name, () => {
        const found = problems(text);
        assert.ok(found.length > 0);
        for (const p of found) {
          assert.match(p, /^f\.yaml(:\d+:\d+)?: [^\n]+$/);
          assert.ok(!p.includes(SECRET), `leaks the input: ${p}`);
        }
      });
    }

    it("keeps yaml's messages that quote nothing, and names the line and column", () => {
      assert.deepEqual(problems("a: 1\n  b: 2\n"), [
        "f.yaml:1:4: Nested mappings are not allowed in compact mappings",
        "f.yaml:1:4: Implicit keys need to be on a single line",
      ]);
      assert.deepEqual(problems("a: 1\na: 2\n"), ["f.yaml:2:1: Map keys must be unique"]);
      assert.deepEqual(problems('{"a": [1, 2}'), [
        "f.yaml:1:12: Flow sequence in block collection must be sufficiently indented and end with a ]",
        "f.yaml:1:12: Flow map must end with a }",
      ]);
    });

    it("several documents are a problem at the second", () => {
      assert.deepEqual(problems("a: 1\n---\nb: 2\n"), [
        "f.yaml:2:1: more than one YAML document; give one",
      ]);
    });

    it("reports at most 10 syntax errors, then how many more", () => {
      const found = problems("]".repeat(50));
      assert.equal(found.length, 11);
      assert.match(found[10]!, /^f\.yaml: \d+ more syntax errors$/);
    });

    it("no text, however hostile, makes it throw or echo a marked secret (property)", () => {
      const piece = fc.constantFrom(
        SECRET,
        ":",
        "-",
        "?",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&",
        "*",
        "!",
        "|",
        ">",
        "%",
        "@",
        "`",
        '"',
        "'",
        "\\",
        "#",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "---",
        "...",
        "\u0000",
        "\ufeff",
        "a",
        "1",
      );
      const dialect = fc.constantFrom<YamlDialect>("yaml-1.2", "go-yaml-v2");
      fc.assert(
        fc.property(
          fc.array(fc.oneof(piece, fc.constant("<<")), { maxLength: 40 }),
          dialect,
          (pieces, d) => {
            const r = parseYamlDocument(pieces.join(""), "f.yaml", d);
            if (!r.ok) for (const p of r.problems) assert.ok(!p.includes(SECRET), p);
          },
        ),
        { numRuns: 3000 },
      );
    });
  });

  describe("the go-yaml-v2 dialect, for vcluster.yaml (EPS-34)", () => {
    const go = (text: string) => parseYamlDocument(text, "f.yaml", "go-yaml-v2");

    it("reads plain scalars as go-yaml v2 does, and quoted ones as strings", () => {
      assert.deepEqual(go("[yes, No, on, OFF, y, ~, 0o17, 1e3, 017, 1_0, .5, 1:20, 2001-12-14]"), {
        ok: true,
        value: [true, false, true, false, true, null, 15, 1000, 15, 10, 0.5, "1:20", "2001-12-14"],
      });
      assert.deepEqual(go('["yes", \'on\', !!str y, "1e3"]'), {
        ok: true,
        value: ["yes", "on", "y", "1e3"],
      });
      // YAML 1.2 reads the same text differently: that is the point of the dialect.
      assert.deepEqual(parseYamlDocument("[yes, 0o17, 017]", "f.yaml"), {
        ok: true,
        value: ["yes", 15, 17],
      });
    });

    it("merges << keys, explicit keys winning", () => {
      assert.deepEqual(go("a: &a {p: 1, q: 2}\nb:\n  <<: *a\n  q: 3\n"), {
        ok: true,
        value: { a: { p: 1, q: 2 }, b: { p: 1, q: 3 } },
      });
      // As in go-yaml v2 (and sigs.k8s.io/yaml after it), a key `y` is the boolean true.
      assert.deepEqual(go("y: 1\n"), { ok: true, value: { true: 1 } });
      assert.deepEqual(go(`a:\n  <<: ${SECRET}\n`), {
        ok: false,
        problems: ["f.yaml: a merge key (<<) needs a map, an alias of a map, or a list of them"],
      });
    });

    it("refuses tags go-yaml v2 would decode into something else, without quoting them", () => {
      for (const tag of ["!!binary", "!!set", "!!timestamp", `!${SECRET}`]) {
        assert.deepEqual(
          go(`a: ${tag} x\n`),
          { ok: false, problems: ["f.yaml:1:4: unknown tag"] },
          tag,
        );
      }
      assert.deepEqual(go("a: !!str 1\nb: !!float 1\n"), { ok: true, value: { a: "1", b: 1 } });
    });
  });

  describe("deep nesting is refused before the recursive parts run", () => {
    it(`accepts ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1}, flow and block alike`, () => {
      const flow = (n: number) => "[".repeat(n) + "]".repeat(n);
      assert.ok(parseYamlDocument(flow(MAX_DEPTH), "f.yaml").ok);
      assert.deepEqual(problems(flow(MAX_DEPTH + 1)), [
        `f.yaml:1:${MAX_DEPTH + 1}: nested deeper than ${MAX_DEPTH} levels`,
      ]);
      const block = (n: number) =>
        Array.from({ length: n }, (_, i) => `${" ".repeat(i)}k:`).join("\n") + " 1\n";
      assert.ok(parseYamlDocument(block(MAX_DEPTH), "f.yaml").ok);
      assert.deepEqual(problems(block(MAX_DEPTH + 1)), [
        `f.yaml:${MAX_DEPTH + 1}:${MAX_DEPTH + 1}: nested deeper than ${MAX_DEPTH} levels`,
      ]);
    });

    it("a million open brackets are one problem, not a crash or a gigabyte", () => {
      // yaml's parser alone takes seconds and about 1 GB on this; the lexer pass refuses it early.
      const text = `sync:\n  toHost: ${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`;
      const before = process.memoryUsage().rss;
      assert.deepEqual(problems(text), [
        `f.yaml:2:${11 + MAX_DEPTH}: nested deeper than 100 levels`,
      ]);
      // Generous: the text itself is 2 MB; what matters is that it is not hundreds of MB.
      assert.ok(process.memoryUsage().rss - before < 200 * 1024 * 1024);
    });

    it("nesting that only aliases build is caught on the value", () => {
      // Each line is 50 or 10 levels deep; the last alias chain makes a value of 110 levels.
      const lines = [`a0: &a0 ${"[".repeat(50)}1${"]".repeat(50)}`];
      for (let i = 1; i <= 6; i++)
        lines.push(`a${i}: &a${i} ${"[".repeat(10)}*a${i - 1}${"]".repeat(10)}`);
      assert.deepEqual(problems(lines.join("\n")), [
        `f.yaml: nested deeper than ${MAX_DEPTH} levels`,
      ]);
    });

    it("alias bombs are refused", () => {
      const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
      for (let i = 1; i < 8; i++) {
        const prev = i === 1 ? "*a" : `*b${i - 1}`;
        bomb.push(`b${i}: &b${i} [${Array(10).fill(prev).join(", ")}]`);
      }
      assert.deepEqual(problems(bomb.join("\n")), ["f.yaml: expands more than 100 aliases"]);
    });

    it("nestsDeeperThan walks without recursion", () => {
      let deep: unknown = 1;
      for (let i = 0; i < 200_000; i++) deep = [deep];
      assert.equal(nestsDeeperThan(deep, MAX_DEPTH), true);
      assert.equal(nestsDeeperThan({ a: [{ b: 1 }] }, 3), false);
      assert.equal(nestsDeeperThan({ a: [{ b: 1 }] }, 2), true);
    });
  });

  describe("readTextFile", () => {
    let dir = "";
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "vgate-read-"));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("reads UTF-8 text up to the bound and refuses more", async () => {
      const file = join(dir, "f.yaml");
      await writeFile(file, "a: ü\n");
      assert.equal(await readTextFile(file, 6), "a: ü\n");
      await assert.rejects(readTextFile(file, 5, "--config f.yaml"), {
        name: "ReadError",
        message: "--config f.yaml is larger than 5 bytes",
      });
    });

    it("stops at the bound on an endless file", async () => {
      await assert.rejects(readTextFile("/dev/zero", 1024 * 1024), {
        message: "/dev/zero is larger than 1048576 bytes",
      });
    });

    it("refuses bytes that are not UTF-8, without showing them", async () => {
      const file = join(dir, "bin.yaml");
      await writeFile(file, Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x00]));
      await assert.rejects(readTextFile(file, 100), (err: unknown) => {
        assert.ok(err instanceof ReadError);
        assert.equal(err.message, `${file} is not UTF-8 text`);
        return true;
      });
    });

    it("names the file and the error code when it cannot be read", async () => {
      await assert.rejects(readTextFile(join(dir, "none"), 100), {
        message: `cannot read ${join(dir, "none")}: no such file; check the path`,
      });
      await assert.rejects(readTextFile(dir, 100), {
        message: `cannot read ${dir}: it is a directory; give the path of a file`,
      });
    });
  });
});
