// The escaper every printer uses (docs/decisions.md OAK-30), and -o json / -o yaml with the
// characters a terminal acts on: escaped, and read back to the same value by kubectl itself.

import assert from "node:assert/strict";
import fc from "fast-check";
import { goYaml } from "../../../plugin/src/output/go-yaml.js";
import {
  escapeJsonText,
  escapeTerminal,
  terminalLines,
} from "../../../plugin/src/output/terminal-text.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../../support/kubectl.js";
import { kubectlPrintText } from "./local-kubectl.js";

const BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069";
const ALL_UNSAFE = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
  ...BIDI,
].join("");
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("terminal text", () => {
  it("escapes each character as documented", () => {
    assert.equal(escapeTerminal("\x07\b\t\n\v\f\r\x1b"), "\\a\\b\\t\\n\\v\\f\\r^[");
    assert.equal(escapeTerminal("\x00\x01\x1f\x7f"), "\\x00\\x01\\x1f\\x7f");
    assert.equal(escapeTerminal("\x80\x85\x9b\x9f"), "\\u0080\\u0085\\u009b\\u009f");
    assert.equal(
      escapeTerminal(BIDI),
      "\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069",
    );
    assert.equal(escapeTerminal("plain é ✓ 😀 \\ \u00a0\u2028"), "plain é ✓ 😀 \\ \u00a0\u2028");
  });

  it("property: escapeTerminal leaves none of them; terminalLines keeps only LF and TAB", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...ALL_UNSAFE, "a", " ", "é", "\\") }), (s) => {
        assert.equal(RAW.exec(escapeTerminal(s)), null);
        assert.equal(RAW.exec(terminalLines(s).replace(/[\n\t]/g, "")), null);
        assert.equal(terminalLines(s).split("\n").length, s.split("\n").length);
      }),
      { numRuns: 500 },
    );
  });

  it("escapeJsonText: the same JSON value, with DEL, C1 and bidi as \\u escapes", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...ALL_UNSAFE, "a", '"', "\\") }), (s) => {
        const text = escapeJsonText(JSON.stringify({ [s]: [s] }, null, 4));
        assert.deepEqual(JSON.parse(text), { [s]: [s] });
        assert.equal(RAW.exec(text.replace(/\n/g, "")), null);
      }),
      { numRuns: 500 },
    );
  });

  it("-o yaml double-quotes and escapes bidi characters, which libyaml writes raw", () => {
    assert.equal(goYaml({ a: "x\u202ey" }), 'a: "x\\u202Ey"\n');
    assert.equal(goYaml({ "k\u2066": "v" }), '"k\\u2066": v\n');
    assert.equal(goYaml({ a: "line\u202e\nnext" }), 'a: "line\\u202E\\nnext"\n');
  });

  (HAVE_KUBECTL ? it : it.skip)(
    `kubectl reads our -o yaml back to the same values${KUBECTL_SKIP_REASON}`,
    async () => {
      const values = fc.sample(
        fc.string({ unit: fc.constantFrom(...ALL_UNSAFE.replace("\u0085", ""), "a", " ", ":") }),
        { numRuns: 60, seed: 20 },
      );
      const object = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "x", labels: { b: "2" } },
        data: Object.fromEntries(values.map((v, i) => [`k${i}`, v])),
      };
      const yaml = goYaml(object);
      assert.equal(RAW.exec(yaml.replace(/\n/g, "")), null);
      const read = await kubectlPrintText(yaml, "json");
      assert.equal(read.code, 0, read.stderr);
      const json = read.stdout;
      assert.deepEqual((JSON.parse(json) as { data: unknown }).data, object.data);
    },
  );
});
