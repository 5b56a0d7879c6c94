import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import {
  findFreeName,
  generateNameCandidate,
  GENERATE_NAME_ALPHABET,
  MAX_GENERATED_NAME_TRIES,
} from "../../../webhook/src/accesskeys/generate-name.js";
import { isDNS1123Subdomain, validateName } from "../../../webhook/src/accesskeys/names.js";

const SUFFIX_RE = new RegExp(`^[${GENERATE_NAME_ALPHABET}]{5}$`);

/** A deterministic source that cycles through the given integers. */
function sequence(...values: number[]): (n: number) => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

// Valid DNS subdomains, optionally followed by the dash generateName usually ends with.
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const validPrefix = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 12 }), fc.boolean())
  .map(([labels, dash]) => labels.join(".") + (dash ? "-" : ""))
  .filter((p) => p.length <= 253);

describe("generate-name", () => {
  it("uses kube's alphabet and retry count", () => {
    assert.equal(GENERATE_NAME_ALPHABET, "bcdfghjklmnpqrstvwxz2456789");
    assert.equal(GENERATE_NAME_ALPHABET.length, 27);
    assert.equal(MAX_GENERATED_NAME_TRIES, 8);
  });

  describe("generateNameCandidate", () => {
    it("appends 5 characters picked by the random source", () => {
      assert.equal(
        generateNameCandidate("key-", () => 0),
        "key-bbbbb",
      );
      assert.equal(
        generateNameCandidate("key-", (n) => n - 1),
        "key-99999",
      );
      assert.equal(generateNameCandidate("key-", sequence(0, 1, 2, 3, 4)), "key-bcdfg");
    });
    it("cuts the prefix to 58 characters", () => {
      const name = generateNameCandidate("a".repeat(70), () => 0);
      assert.equal(name, `${"a".repeat(58)}bbbbb`);
      assert.equal(name.length, 63);
    });
    it("keeps a short prefix whole", () => {
      assert.equal(
        generateNameCandidate("a".repeat(58), () => 1),
        `${"a".repeat(58)}ccccc`,
      );
    });
    it("uses crypto randomness by default", () => {
      const names = new Set(Array.from({ length: 20 }, () => generateNameCandidate("k-")));
      for (const n of names) assert.match(n.slice(2), SUFFIX_RE);
      assert.ok(names.size > 1);
    });
    it("only ever uses the alphabet, whatever the random source returns", () => {
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.integer(), fc.double()), { minLength: 1, maxLength: 10 }),
          (values) => {
            assert.match(generateNameCandidate("", sequence(...values)), SUFFIX_RE);
          },
        ),
      );
    });
    it("produces a valid name of at most 63 characters for any valid prefix", () => {
      fc.assert(
        fc.property(validPrefix, fc.integer({ min: 0, max: 26 }), (prefix, r) => {
          assert.deepEqual(validateName({ generateName: prefix }, true), []);
          const name = generateNameCandidate(prefix, () => r);
          assert.ok(isDNS1123Subdomain(name), name);
          assert.ok(name.length <= 63);
          assert.ok(name.startsWith(prefix.slice(0, 58)));
        }),
      );
    });
    it("keeps kube's maskTrailingDash quirk: `x.-` passes as a prefix but names from it do not", () => {
      assert.deepEqual(validateName({ generateName: "x.-" }, true), []);
      assert.equal(isDNS1123Subdomain(generateNameCandidate("x.-", () => 0)), false);
    });
  });

  describe("findFreeName", () => {
    it("returns the first candidate that does not exist", async () => {
      const asked: string[] = [];
      const taken = new Set(["key-bbbbb", "key-ccccc"]);
      const found = await findFreeName(
        "key-",
        async (n) => {
          asked.push(n);
          return taken.has(n);
        },
        sequence(0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2),
      );
      assert.deepEqual(found, { name: "key-ddddd" });
      assert.deepEqual(asked, ["key-bbbbb", "key-ccccc", "key-ddddd"]);
    });
    it("gives up after 8 taken names and reports the last one", async () => {
      const asked: string[] = [];
      const found = await findFreeName(
        "key-",
        async (n) => {
          asked.push(n);
          return true;
        },
        sequence(...Array.from({ length: 40 }, (_, i) => Math.floor(i / 5))),
      );
      assert.equal(asked.length, 8);
      assert.deepEqual(found, { conflict: "key-kkkkk" });
      assert.equal(asked[7], "key-kkkkk");
    });
    it("lets a failing lookup propagate", async () => {
      await assert.rejects(
        findFreeName("k-", async () => {
          throw new Error("apiserver down");
        }),
        /apiserver down/,
      );
    });
    it("never returns a taken name and asks at most 8 times", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
          fc.array(fc.integer({ min: 0, max: 26 }), { minLength: 1, maxLength: 40 }),
          async (answers, randoms) => {
            let calls = 0;
            let lastAsked = "";
            const found = await findFreeName(
              "p-",
              async (n) => {
                lastAsked = n;
                return answers[calls++]!;
              },
              sequence(...randoms),
            );
            assert.ok(calls <= MAX_GENERATED_NAME_TRIES);
            if ("name" in found) {
              // The name returned is the one just asked about, and the answer was "free".
              assert.equal(found.name, lastAsked);
              assert.equal(answers[calls - 1], false);
              assert.ok(answers.slice(0, calls - 1).every((a) => a));
            } else {
              assert.equal(calls, MAX_GENERATED_NAME_TRIES);
              assert.ok(answers.every((a) => a));
            }
          },
        ),
      );
    });
  });
});
