// Table cells (cells.ts): the first line of a value, tabs as spaces, escaped for the terminal.

import assert from "node:assert/strict";
import fc from "fast-check";
import { cell, NONE, oneLine } from "../../../plugin/src/output/cells.js";
import { escapeTerminal } from "../../../plugin/src/output/terminal-text.js";

const LINE_BREAKS = ["\n", "\v", "\f", "\r", "\u0085", "\u2028", "\u2029"];

describe("table cells", () => {
  it("property: a cell is the value's first line, '...' when cut, tabs as spaces, escaped", () => {
    const chars = fc.constantFrom(
      ..."aZ09 -_<>",
      ...LINE_BREAKS,
      "\t",
      "\x1b",
      "\x00",
      "\x7f",
      "\u009b",
      "\u061c",
      "\u200f",
      "\u202e",
      "\u2066",
      "é",
      "😀",
    );
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 20 }), (value) => {
        const breaks = LINE_BREAKS.map((b) => value.indexOf(b)).filter((i) => i >= 0);
        const cut = breaks.length > 0 ? Math.min(...breaks) : -1;
        const first = cut >= 0 ? value.slice(0, cut) : value;
        const expected = `${escapeTerminal(first.replaceAll("\t", " "))}${cut >= 0 ? "..." : ""}`;
        assert.equal(oneLine(value), expected);
        assert.equal(cell(value), value === "" ? NONE : expected);
      }),
      { numRuns: 1000 },
    );
  });
});
