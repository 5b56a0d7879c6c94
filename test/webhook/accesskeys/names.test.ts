import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "mocha";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import type { ObjectMeta } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  isDNS1123Subdomain,
  labelValueErrors,
  maskTrailingDash,
  pathSegmentErrors,
  qualifiedNameErrors,
  validateName,
} from "../../../webhook/src/accesskeys/names.js";

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
// kube's RegexError really puts two spaces before "or" (", " then " or ").
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const meta = (m: Record<string, unknown>): ObjectMeta => m as ObjectMeta;
const texts = (m: Record<string, unknown>, forCreate: boolean): string[] =>
  validateName(meta(m), forCreate).map(fieldErrorText);

const SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe("names", () => {
  describe("dns1123SubdomainErrors", () => {
    it("accepts lowercase dotted names up to 253 characters", () => {
      assert.deepEqual(dns1123SubdomainErrors("my-key.example"), []);
      const long = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
      assert.equal(long.length, 253);
      assert.deepEqual(dns1123SubdomainErrors(long), []);
      assert.ok(isDNS1123Subdomain("a"));
    });
    it("has no per-label 63 limit", () => {
      assert.deepEqual(dns1123SubdomainErrors("a".repeat(100)), []);
    });
    it("rejects bad characters with kube's message", () => {
      assert.deepEqual(dns1123SubdomainErrors("My_Key"), [SUBDOMAIN_MSG]);
      for (const bad of ["", "-a", "a-", "a..b", ".a", "a.", "é"]) {
        assert.equal(isDNS1123Subdomain(bad), false, bad);
      }
    });
    it("rejects 254 characters", () => {
      assert.deepEqual(dns1123SubdomainErrors("a".repeat(254)), [
        "must be no more than 253 characters",
      ]);
    });
    it("counts bytes as Go does", () => {
      assert.deepEqual(dns1123SubdomainErrors("é".repeat(127)), [
        "must be no more than 253 characters",
        SUBDOMAIN_MSG,
      ]);
    });
    it("agrees with the regex and length rule for any string", () => {
      fc.assert(
        fc.property(
          fc.string({ unit: fc.constantFrom("a", "z", "0", "-", ".", "A", "_") }),
          (s) => {
            assert.equal(isDNS1123Subdomain(s), SUBDOMAIN_RE.test(s) && s.length <= 253);
          },
        ),
      );
    });
  });

  describe("dns1123LabelErrors", () => {
    it("accepts a label and rejects dots, bad characters and length", () => {
      assert.deepEqual(dns1123LabelErrors("my-name"), []);
      assert.deepEqual(dns1123LabelErrors("a.b"), ["must not contain dots"]);
      assert.deepEqual(dns1123LabelErrors("A"), [LABEL_MSG]);
      assert.deepEqual(dns1123LabelErrors("a".repeat(64)), ["must be no more than 63 characters"]);
    });
  });

  describe("qualifiedNameErrors", () => {
    it("accepts names with and without a DNS prefix", () => {
      for (const ok of [
        "MyName",
        "my.name",
        "123-abc",
        "example.com/MyName",
        "a/b",
        "x".repeat(63),
      ]) {
        assert.deepEqual(qualifiedNameErrors(ok), [], ok);
      }
    });
    it("rejects a bad name part with kube's message", () => {
      assert.deepEqual(qualifiedNameErrors("bad_"), [NAME_PART_MSG]);
      assert.deepEqual(qualifiedNameErrors("x/"), ["name part must be non-empty", NAME_PART_MSG]);
      assert.deepEqual(qualifiedNameErrors("x".repeat(64)), [
        "name part must be no more than 63 bytes",
      ]);
    });
    it("rejects a bad prefix part", () => {
      assert.deepEqual(qualifiedNameErrors("/x"), ["prefix part must be non-empty"]);
      assert.deepEqual(qualifiedNameErrors("Example.com/x"), [`prefix part ${SUBDOMAIN_MSG}`]);
      assert.deepEqual(qualifiedNameErrors(`${"a".repeat(254)}/x`), [
        "prefix part must be no more than 253 bytes",
      ]);
    });
    it("rejects more than one slash", () => {
      assert.deepEqual(qualifiedNameErrors("a/b/c"), [
        "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ]);
    });
    it("never accepts a name part over 63 bytes or more than one slash", () => {
      fc.assert(
        fc.property(
          fc.string({ unit: fc.constantFrom("a", "B", "1", "-", ".", "_", "/") }),
          (s) => {
            if (qualifiedNameErrors(s).length) return;
            const parts = s.split("/");
            assert.ok(parts.length <= 2);
            assert.ok(parts[parts.length - 1]!.length <= 63);
          },
        ),
      );
    });
  });

  describe("labelValueErrors", () => {
    it("accepts empty and label-like values", () => {
      assert.deepEqual(labelValueErrors(""), []);
      assert.deepEqual(labelValueErrors("My_value.1"), []);
    });
    it("rejects bad characters and more than 63 bytes", () => {
      assert.equal(labelValueErrors("-x").length, 1);
      assert.match(labelValueErrors("a b")[0]!, /^a valid label must be an empty string/);
      assert.deepEqual(labelValueErrors("v".repeat(64)), ["must be no more than 63 bytes"]);
    });
  });

  describe("maskTrailingDash", () => {
    it("replaces the last two characters when the string ends in a dash", () => {
      assert.equal(maskTrailingDash("key-"), "kea");
      assert.equal(maskTrailingDash("x.-"), "xa");
      assert.equal(maskTrailingDash("-"), "-");
      assert.equal(maskTrailingDash("key"), "key");
    });
  });

  describe("pathSegmentErrors", () => {
    it("rejects . and .. as names but not as prefixes", () => {
      assert.deepEqual(pathSegmentErrors("..", false), ["may not be '..'"]);
      assert.deepEqual(pathSegmentErrors(".", true), []);
      assert.deepEqual(pathSegmentErrors("a/b%", false), [
        "may not contain '/'",
        "may not contain '%'",
      ]);
      assert.deepEqual(pathSegmentErrors("ok", false), []);
    });
  });

  describe("validateName", () => {
    it("accepts a valid name on create and update", () => {
      assert.deepEqual(texts({ name: "my-key" }, true), []);
      assert.deepEqual(texts({ name: "my-key", namespace: "" }, false), []);
    });
    it("requires name or generateName on create", () => {
      assert.deepEqual(texts({}, true), [
        "metadata.name: Required value: name or generateName is required",
      ]);
      assert.deepEqual(texts({ name: "" }, true), [
        "metadata.name: Required value: name or generateName is required",
      ]);
    });
    it("accepts generateName alone on create, not on update", () => {
      assert.deepEqual(texts({ generateName: "key-" }, true), []);
      assert.deepEqual(texts({ generateName: "key-" }, false), [
        "metadata.name: Required value: name or generateName is required",
      ]);
    });
    it("rejects an invalid name with kube's exact text", () => {
      assert.deepEqual(texts({ name: "My_Key" }, true), [
        `metadata.name: Invalid value: "My_Key": ${SUBDOMAIN_MSG}`,
      ]);
    });
    it("validates generateName in prefix mode", () => {
      assert.deepEqual(texts({ generateName: "Key-" }, true), [
        `metadata.generateName: Invalid value: "Key-": ${SUBDOMAIN_MSG}`,
      ]);
      assert.deepEqual(texts({ generateName: "-" }, true), [
        `metadata.generateName: Invalid value: "-": ${SUBDOMAIN_MSG}`,
      ]);
      // kube's quirk: the character before the trailing dash is masked too.
      assert.deepEqual(texts({ generateName: "x.-" }, true), []);
    });
    it("validates both when name and generateName are set", () => {
      const errs = validateName(meta({ name: "ok", generateName: "BAD" }), true);
      assert.deepEqual(
        errs.map((e) => e.field),
        ["metadata.generateName"],
      );
    });
    it("forbids a namespace on this cluster-scoped type", () => {
      assert.deepEqual(texts({ name: "k", namespace: "default" }, true), [
        "metadata.namespace: Forbidden: not allowed on this type",
      ]);
    });
    it("reports wrong types", () => {
      const errs = validateName(meta({ name: 5, generateName: [], namespace: {} }), true);
      assert.deepEqual(
        errs.map((e) => [e.type, e.field]),
        [
          ["TypeInvalid", "metadata.generateName"],
          ["TypeInvalid", "metadata.name"],
          ["TypeInvalid", "metadata.namespace"],
        ],
      );
    });
    it("treats null like an absent field", () => {
      assert.deepEqual(texts({ name: "k", generateName: null, namespace: null }, true), []);
    });
    it("accepts every valid DNS subdomain and rejects everything else", () => {
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom("a", "1", "-", ".", "Z", "/") }), (s) => {
          const errs = validateName(meta({ name: s }), true);
          assert.equal(errs.length === 0, s !== "" && isDNS1123Subdomain(s));
        }),
      );
    });
  });
});
