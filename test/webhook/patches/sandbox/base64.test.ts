import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { atob, Base64Error, btoa } from "../../../../webhook/src/patches/sandbox/base64.js";

describe("patches/sandbox/base64", () => {
  it("btoa encodes like the docs' example", () => {
    assert.equal(btoa("my-value"), "bXktdmFsdWU=");
    assert.equal(btoa(""), "");
    assert.equal(btoa("\u00ff\u0000"), "/wA=");
  });

  it("btoa converts non-strings with String(), like the browser", () => {
    assert.equal(btoa(123), "MTIz");
    assert.equal(btoa(null), "bnVsbA==");
  });

  it("btoa rejects characters above U+00FF", () => {
    assert.throws(() => btoa("€"), Base64Error);
    assert.throws(() => btoa("a\u0100"), /outside of the Latin1 range/);
  });

  it("atob decodes, forgiving whitespace and missing padding", () => {
    assert.equal(atob("bXktdmFsdWU="), "my-value");
    assert.equal(atob(" bXkt dmFs\ndWU "), "my-value");
    assert.equal(atob("bXktdmFsdWU"), "my-value");
    assert.equal(atob("/wA="), "\u00ff\u0000");
  });

  it("atob rejects invalid input instead of skipping characters", () => {
    for (const bad of ["a", "abcde", "ab$c", "ab=c", "a===", "bXktdmFsdWU==="]) {
      assert.throws(() => atob(bad), /not correctly encoded/, bad);
    }
  });

  it("atob(btoa(s)) is s for every Latin-1 string", () => {
    const latin1 = fc.string({
      unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)),
    });
    fc.assert(fc.property(latin1, (s) => atob(btoa(s)) === s));
  });

  it("btoa matches Node's global btoa on Latin-1 strings", () => {
    const latin1 = fc.string({
      unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)),
    });
    fc.assert(fc.property(latin1, (s) => btoa(s) === globalThis.btoa(s)));
  });
});
