import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  canonicalPath,
  formatMatchedPath,
  parsePath,
  PathSyntaxError,
} from "../../../webhook/src/patches/path.js";
import type { PathSegment } from "../../../webhook/src/patches/types.js";

/** Segments without the bracketed/quoted flags, for comparing what a path names. */
function shape(path: string): (string | number | "*")[] {
  return parsePath(path).map((s) =>
    s.kind === "wildcard" ? "*" : s.kind === "index" ? s.index : `k:${s.key}`,
  );
}

function syntaxError(path: string): PathSyntaxError {
  try {
    parsePath(path);
  } catch (err) {
    assert.ok(err instanceof PathSyntaxError, `expected PathSyntaxError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(path)} to be rejected`);
}

describe("patches/path", () => {
  describe("parsePath: vCluster's grammar (docs/reference.md#patch-path-grammar)", () => {
    it("splits on dots and brackets, dropping quotes", () => {
      assert.deepEqual(shape(`metadata.annotations["my/key"]`), [
        "k:metadata",
        "k:annotations",
        "k:my/key",
      ]);
      assert.deepEqual(shape(`metadata.annotations."example.com/x"`), [
        "k:metadata",
        "k:annotations",
        "k:example.com/x",
      ]);
    });

    it("keeps dots inside brackets literal, even unquoted", () => {
      assert.deepEqual(shape(`metadata.annotations[example.com/x]`), [
        "k:metadata",
        "k:annotations",
        "k:example.com/x",
      ]);
    });

    it("ignores leading, trailing and repeated dots", () => {
      assert.deepEqual(shape(`..a..b[0][*].c.`), ["k:a", "k:b", 0, "*", "k:c"]);
    });

    it("keeps brackets inside quotes as part of the key", () => {
      assert.deepEqual(shape(`a["x[1]"]`), ["k:a", "k:x[1]"]);
    });

    it("reads the empty path as no segments", () => {
      for (const p of ["", ".", "  ", " . "]) assert.deepEqual(parsePath(p), []);
    });

    it("marks bracketed keys and index segments keep their text", () => {
      assert.deepEqual(parsePath(`a[b]`), [
        { kind: "key", key: "a", bracketed: false, quoted: false },
        { kind: "key", key: "b", bracketed: true, quoted: false },
      ]);
      assert.deepEqual(parsePath(`a[007]`)[1], {
        kind: "index",
        index: 7,
        key: "007",
        bracketed: true,
      });
    });

    it("continues after a closing bracket without a dot", () => {
      assert.deepEqual(shape(`a[b]c`), ["k:a", "k:b", "k:c"]);
    });
  });

  describe("edge cases, numbered as in docs/reference.md#patch-path-edge-cases", () => {
    it("1: bracket, dotted-quote and unquoted-bracket keys are equivalent", () => {
      const a = canonicalPath(parsePath(`metadata.annotations["my/key"]`));
      assert.equal(canonicalPath(parsePath(`metadata.annotations."my/key"`)), a);
      assert.equal(canonicalPath(parsePath(`metadata.annotations[my/key]`)), a);
      assert.deepEqual(shape(`metadata.annotations[my.key]`).at(-1), "k:my.key");
    });

    it("2 (docs/decisions.md EPS-7): single-quoted bracket keys are quoted keys", () => {
      assert.deepEqual(
        shape(`metadata.annotations['metallb.universe.tf/address-pool']`).at(-1),
        "k:metallb.universe.tf/address-pool",
      );
      assert.equal(canonicalPath(parsePath(`m['k.x']`)), canonicalPath(parsePath(`m["k.x"]`)));
    });

    it("2: a single quote that does not open a bracket key is an ordinary character", () => {
      assert.deepEqual(shape(`a.it's`), ["k:a", "k:it's"]);
      assert.deepEqual(shape(`a[it's]`), ["k:a", "k:it's"]);
    });

    it("2: a single-quoted key must be followed by ]", () => {
      assert.equal(syntaxError(`a['b'c]`).position, 5);
    });

    it("3: a.0 and a[0] are the same index segment", () => {
      assert.deepEqual(shape("a.0"), shape("a[0]"));
      assert.equal(canonicalPath(parsePath("a.0")), canonicalPath(parsePath("a[0]")));
      assert.equal(parsePath("a.0")[1]?.kind, "index");
    });

    it("4 (docs/decisions.md EPS-7): a negative index is rejected, naming it and its position", () => {
      const err = syntaxError(`spec.ports[-1].name`);
      assert.equal(err.position, 10);
      assert.match(err.message, /negative index -1 at position 10/);
      assert.equal(syntaxError(`spec.ports.-2`).position, 11);
    });

    it("4: a quoted negative number is a key, not an index", () => {
      assert.deepEqual(shape(`a["-1"]`), ["k:a", "k:-1"]);
    });

    it("9: empty brackets are rejected", () => {
      const err = syntaxError(`a[]`);
      assert.equal(err.position, 1);
      assert.match(err.message, /empty brackets/);
      syntaxError(`a[""]`);
      syntaxError(`a['']`);
    });

    it("9: nested brackets are rejected", () => {
      assert.match(syntaxError(`a[[b]]`).message, /nested bracket at position 2/);
      syntaxError(`a[b[c]]`);
    });

    it("9: unclosed quotes and brackets are rejected", () => {
      assert.match(syntaxError(`a["b`).message, /unclosed quote at position 2/);
      assert.match(syntaxError(`a[b`).message, /unclosed bracket at position 1/);
      assert.match(syntaxError(`a."b`).message, /unclosed quote/);
      syntaxError(`a['b`);
    });

    it("9: a stray ] is rejected", () => {
      assert.match(syntaxError(`a]`).message, /unexpected \] at position 1/);
      syntaxError(`a[b]]`);
    });

    it("10: surrounding whitespace is trimmed, inner spaces are part of the key", () => {
      assert.deepEqual(shape(`  a.b c  `), ["k:a", "k:b c"]);
      assert.deepEqual(shape(`a[" x "]`), ["k:a", "k: x "]);
      // Positions count from the untrimmed text.
      assert.equal(syntaxError(`  a[]`).position, 3);
    });
  });

  describe("wildcards (docs/decisions.md EPS-7)", () => {
    it("accepts bare * and [*] anywhere, including last", () => {
      assert.deepEqual(shape(`metadata.annotations.*`), ["k:metadata", "k:annotations", "*"]);
      assert.deepEqual(shape(`spec.rules.*.host`), ["k:spec", "k:rules", "*", "k:host"]);
      assert.deepEqual(shape(`[*]`), ["*"]);
    });

    it("reads a quoted * as the literal key *", () => {
      assert.deepEqual(shape(`a["*"]`), ["k:a", "k:*"]);
      assert.notEqual(canonicalPath(parsePath(`a["*"]`)), canonicalPath(parsePath(`a[*]`)));
    });
  });

  describe("canonicalPath", () => {
    it("normalises equivalent spellings to one text", () => {
      assert.equal(canonicalPath(parsePath(`a.b`)), "a.b");
      assert.equal(canonicalPath(parsePath(`a["b"]`)), "a.b");
      assert.equal(canonicalPath(parsePath(`a[*].b`)), "a[*].b");
      assert.equal(canonicalPath(parsePath(`a.*.b`)), "a[*].b");
      assert.equal(
        canonicalPath(parsePath(`metadata.annotations[example.com/x]`)),
        `metadata.annotations["example.com/x"]`,
      );
    });

    it("keeps different paths apart", () => {
      assert.notEqual(canonicalPath(parsePath(`a.b`)), canonicalPath(parsePath(`a["b.c"]`)));
      assert.notEqual(canonicalPath(parsePath(`a[0]`)), canonicalPath(parsePath(`a[00]`)));
      assert.notEqual(canonicalPath(parsePath(`a.b.c`)), canonicalPath(parsePath(`a["b.c"]`)));
    });

    it("single-quotes keys that contain a double quote", () => {
      const segments: PathSegment[] = [{ kind: "key", key: `a"b`, bracketed: true }];
      assert.equal(canonicalPath(segments), `['a"b']`);
      assert.deepEqual(shape(canonicalPath(segments)), [`k:a"b`]);
    });

    it("gives the empty path for no segments", () => {
      assert.equal(canonicalPath([]), "");
    });
  });

  describe("formatMatchedPath (docs/decisions.md EPS-4)", () => {
    it("joins keys and indices with dots", () => {
      assert.equal(
        formatMatchedPath(["subsets", 0, "addresses", 1, "hostname"]),
        "subsets.0.addresses.1.hostname",
      );
    });

    it("double-quotes keys containing . [ or ]", () => {
      assert.equal(
        formatMatchedPath(["spec", "rules", "test.object.other", 0]),
        `spec.rules."test.object.other".0`,
      );
      assert.equal(formatMatchedPath(["a", "x[1]", "y]"]), `a."x[1]"."y]"`);
      assert.equal(formatMatchedPath(["a", "my/key"]), "a.my/key");
    });

    it("is empty for the root", () => {
      assert.equal(formatMatchedPath([]), "");
    });
  });

  describe("properties", () => {
    const grammarChar = fc.constantFrom(...`ab0. []"'*-/ 9`.split(""));
    const grammarish = fc.array(grammarChar, { maxLength: 24 }).map((cs) => cs.join(""));
    const anyPath = fc.oneof(fc.string({ maxLength: 40 }), grammarish);

    it("parsePath throws nothing but PathSyntaxError", () => {
      fc.assert(
        fc.property(anyPath, (p) => {
          try {
            parsePath(p);
          } catch (err) {
            return err instanceof PathSyntaxError;
          }
          return true;
        }),
        { numRuns: 2000 },
      );
    });

    it("canonicalPath is a fixed point of parse ∘ canonical", () => {
      fc.assert(
        fc.property(anyPath, (p) => {
          let segments: PathSegment[];
          try {
            segments = parsePath(p);
          } catch {
            return true;
          }
          const once = canonicalPath(segments);
          const reparsed = parsePath(once);
          assert.equal(canonicalPath(reparsed), once);
          assert.deepEqual(
            reparsed.map((s) => (s.kind === "key" ? s.key : s.kind === "index" ? s.index : "*")),
            segments.map((s) => (s.kind === "key" ? s.key : s.kind === "index" ? s.index : "*")),
          );
          return true;
        }),
        { numRuns: 2000 },
      );
    });

    it("a key spelled with brackets parses back to itself", () => {
      const key = fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => !(k.includes('"') && k.includes("'")));
      fc.assert(
        fc.property(key, (k) => {
          const segments: PathSegment[] = [
            { kind: "key", key: "root", bracketed: false },
            { kind: "key", key: k, bracketed: true },
          ];
          const parsed = parsePath(canonicalPath(segments));
          const last = parsed.at(-1)!;
          const got =
            last.kind === "key" ? last.key : last.kind === "index" ? (last.key ?? "") : "*";
          // Digit-only keys come back as index segments that name the same object key.
          return parsed.length === 2 && got === k;
        }),
      );
    });
  });
});
