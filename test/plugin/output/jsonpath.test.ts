// kubectl's JSONPath template dialect: the grammar, client-go's error messages, printing rules,
// limits against hostile templates, and byte-for-byte parity with the real kubectl's printer.

import { strict as assert } from "node:assert";
import fc from "fast-check";
import { OutputError, parseOutput } from "../../../plugin/src/output/format.js";
import { MAX_TEMPLATE_LENGTH, parseTemplate } from "../../../plugin/src/output/jsonpath/parser.js";
import { JsonPathTemplate } from "../../../plugin/src/output/jsonpath/template.js";
import { printObjects } from "../../../plugin/src/output/print.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../../support/kubectl.js";
import { ciKey, KIND_GROUP } from "./fixtures.js";
import { kubectlPrint } from "./local-kubectl.js";

/** An object with every JSON type, HTML characters, a dotted label key, nulls and numbers. */
const doc = {
  apiVersion: "management.loft.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name: "k1", labels: { "app.kubernetes.io/name": "x", b: "2" } },
  spec: {
    ttl: 3600,
    groups: ["a", "b", "c"],
    user: "alice",
    f: 1.5,
    n: null,
    t: true,
    html: "<a&b>",
    items: [
      { name: "x", n: 1, tags: ["p", "q"] },
      { name: "y", n: 2 },
      { name: "z", n: 3, tags: [] },
      null,
    ],
  },
};

function run(template: string, data: unknown = doc): string {
  return JsonPathTemplate.parse(template).execute(data);
}

function print(template: string, data: unknown = doc, asJson = false): string {
  const format = asJson
    ? { kind: "jsonpath" as const, template, asJson: true }
    : { kind: "jsonpath" as const, template };
  return printObjects([data], { format, kindGroup: KIND_GROUP, showKey: true }, false);
}

/** Templates and what kubectl prints for them on `doc` (checked against kubectl 1.32). */
const CASES: [string, string][] = [
  ["{.metadata.name}", "k1"],
  ["{.spec.groups[*]}", "a b c"],
  ["{.spec.groups[0:2]}", "a b"],
  ["{.spec.groups[-1:]}", "c"],
  ["{.spec.groups[-1]}", "c"],
  ["{.spec.groups[::2]}", "a c"],
  ["{.spec.groups[]}", "a"],
  ["{.spec.groups[0:0]}", ""],
  ["{.spec.groups[0,2]}", "a c"],
  ["{.spec['user','ttl']}", "alice 3600"],
  ["{.spec.ttl}", "3600"],
  ["{.spec.f}", "1.5"],
  ["{.spec.n}", "null"],
  ["{.spec.t}", "true"],
  ["{.spec.html}", "<a&b>"],
  ["{.spec.items[0]}", '{"n":1,"name":"x","tags":["p","q"]}'],
  ["{.spec.groups}", '["a","b","c"]'],
  ["{.metadata.labels}", '{"app.kubernetes.io/name":"x","b":"2"}'],
  ["{.metadata.labels.app\\.kubernetes\\.io/name}", "x"],
  // client-go reads ['a.b'] as .a.b: two fields, so nothing is found.
  ["{.metadata.labels['app.kubernetes.io/name']}", ""],
  ["{.metadata.labels['b']}", "2"],
  ["{..user}", "alice"],
  ["{.spec.items[*].name}", "x y z"],
  ["{.spec.items[*].tags[*]}", "p q"],
  // The null item still runs the body: {.name} finds nothing, the text prints.
  ["{range .spec.items[*]}{.name}{'\\n'}{end}", "x\ny\nz\n\n"],
  ["{range .spec.items[*]}[{.name}]{end}", "[x][y][z][]"],
  ['{range .spec.groups[*]}{@}{"\\t"}{end}done', "a\tb\tc\tdone"],
  ["{range .spec.nope[*]}{@}{end}after", "after"],
  ["{range .spec.groups[*]}{range .spec.groups[*]}{@}{end}{end}", ""],
  ["{range .spec.items[*]}{range .tags[*]}<{@}>{end};{end}", "<p><q>;;;;"],
  ['{.spec.items[?(@.name=="y")].n}', "2"],
  ["{.spec.items[?(@.n>1)].name}", "y z"],
  ["{.spec.items[?(@.n<=2)].name}", "x y"],
  ["{.spec.items[?(@.n!=2)].name}", "x z"],
  ["{.spec.items[?(@.tags)].name}", "x z"],
  ['{.spec.groups[?(@<"b")]}', "a"],
  ["{.spec.items[?(@.name=='z')].tags}", "[]"],
  ["{$.metadata.name}", "k1"],
  ["{@.metadata.name}", "k1"],
  ["{ .metadata.name }", "k1"],
  ["{.metadata.name}}}", "k1}}"],
  ["plain text", "plain text"],
  // In one action each text replaces the last: {'it''s'} prints "s".
  ['{"a\\u00e9"}{\'it\'\'s\'}{"\\x41"}{"\\101"}', "aésAA"],
  ["{5}{-5}{1.5}{1.0}{+3}{true}", "5-51.513true"],
  ["{.metadata.name.*}", "107 49"],
  ["{.spec.ttl}{.spec.user}", "3600alice"],
  ["{...user}", "alice"],
  ["{.metadata..name}", "k1"],
];

/** Templates kubectl refuses when it parses them, with client-go's message. */
const PARSE_ERRORS: [string, string][] = [
  ["{.a", "unclosed action"],
  ["{{.metadata.name}", "unrecognized character in action: U+007B '{'"],
  ["{#}", "unrecognized character in action: U+0023 '#'"],
  ["{..*}", "unrecognized character in action: U+002A '*'"],
  ['{"a', "unterminated quoted string"],
  ["{.a[0}", "unterminated array"],
  ["{.spec.groups[a]}", "invalid array index a"],
  ["{.spec.groups[ 0 ]}", "invalid array index  0 "],
  ["{.spec.groups[1:2:3:4]}", "invalid array index 1:2:3:4"],
  ["{.spec.groups[99999999999999999999]}", "array index 99999999999999999999 is not a number"],
  ["{.spec.groups[?(@.x]}", "unterminated filter"],
  ["{.spec.groups[?(@.x)}", "unclosed array expect ]"],
  ['{.spec.groups[?(@=~"b")]}', "unrecognized character in action: U+007E '~'"],
  ["{....a}", "invalid multiple recursive descent"],
  ["{1.2.3}", "cannot parse number 1.2.3"],
  ['{"\\q"}', 'unquote string "\\q" error invalid syntax'],
];

/** Templates kubectl accepts but fails on when it runs them. */
const EXEC_ERRORS: [string, string][] = [
  ["{.spec.groups[5]}", "array index out of bounds: index 5, length 3"],
  ["{.spec.groups[-5]}", "array index out of bounds: index -2, length 3"],
  ["{.spec.groups[2:1]}", "starting index 2 is greater than ending index 1"],
  ["{.spec.groups[::0]}", "step must be > 0"],
  ["{end}", "not in range, nothing to end"],
  ["{foo}", "unrecognized identifier foo"],
  ["{1e5}", "unrecognized identifier e5"],
  ["{.spec.ttl[0]}", "int64 is not array or slice"],
  ["{.spec.user[0]}", "string is not array or slice"],
  ["{[0]}", "map[string]interface {} is not array or slice"],
  [
    '{.spec.items[0][?(@.x=="y")]}',
    "map[n:1 name:x tags:[p q]] is not array or slice and cannot be filtered",
  ],
  ["{.spec.groups[?(@==1)]}", "incompatible types for comparison"],
  ["{.spec.groups[?(@=1)]}", "unrecognized filter operator ="],
  ["{.spec.items[?(@.tags==1)]}", "invalid type for comparison"],
  ["{.spec.items[?(@.tags[*]=='p')]}", "can only compare one element at a time"],
];

describe("plugin output: kubectl JSONPath templates", () => {
  describe("templates print as kubectl prints them", () => {
    for (const [template, expected] of CASES) {
      it(template, () => assert.equal(run(template), expected));
    }
  });

  it("a list prints through a kind: List, one object as itself", () => {
    const objects = [{ metadata: { name: "a" } }, { metadata: { name: "b" } }];
    const opts = {
      format: parseOutput("jsonpath={.kind} {.items[*].metadata.name}"),
      kindGroup: KIND_GROUP,
    };
    assert.equal(printObjects(objects, opts, true), "List a b");
    const one = { format: parseOutput("jsonpath={.metadata.name}"), kindGroup: KIND_GROUP };
    assert.equal(printObjects([objects[0]], one, false), "a");
    assert.equal(printObjects([objects[0]], one, true), "");
  });

  it("walks maps in sorted key order (Go's order is random)", () => {
    assert.equal(run("{.metadata.labels.*}"), "x 2");
    assert.equal(run("{.spec.items[0].*}"), '1 x ["p","q"]');
  });

  it("a missing key prints nothing, or fails when missing keys are not allowed", () => {
    assert.equal(run("{.nope.deeper}"), "");
    assert.throws(
      () => JsonPathTemplate.parse("{.nope}").execute(doc, { allowMissingKeys: false }),
      /^JsonPathError: nope is not found$/,
    );
  });

  it("-o jsonpath-as-json prints each action's results as an indented JSON array", () => {
    assert.equal(
      print("{.spec.groups[0:2]}{.spec.ttl}", doc, true),
      '[\n    "a",\n    "b"\n]\n[\n    3600\n]\n',
    );
  });

  describe("parse errors, in kubectl's words", () => {
    for (const [template, message] of PARSE_ERRORS) {
      it(template, () => {
        assert.throws(() => parseOutput(`jsonpath=${template}`), {
          name: "OutputError",
          message: `error parsing jsonpath ${template}, ${message}`,
        });
      });
    }
  });

  describe("run-time errors, in kubectl's words (without the object, which holds the key)", () => {
    for (const [template, message] of EXEC_ERRORS) {
      it(template, () => {
        assert.throws(
          () => print(template),
          (err: unknown) => {
            assert.ok(err instanceof OutputError);
            const first = err.message.split("\n")[0];
            assert.equal(
              first,
              `error executing jsonpath ${JSON.stringify(template)}: Error executing template: ${message}. Printing more information for debugging the template:`,
            );
            return true;
          },
        );
      });
    }
  });

  it("an error message never shows spec.key, even with --show-key", () => {
    const key = (ciKey["spec"] as { key: string }).key;
    for (const showKey of [false, true]) {
      const opts = {
        format: parseOutput('jsonpath={.spec[?(@.x=="y")]}'),
        kindGroup: KIND_GROUP,
        showKey,
      };
      assert.throws(
        () => printObjects([ciKey], opts, false),
        (err: unknown) =>
          err instanceof OutputError && !err.message.includes(key) && /REDACTED/.test(err.message),
      );
    }
  });

  describe("hostile templates end quickly with a clear error", () => {
    const quick = (f: () => void, pattern: RegExp) => {
      const start = performance.now();
      assert.throws(f, pattern);
      assert.ok(performance.now() - start < 5_000, "took too long");
    };

    it("100,000 nested {range} (too long)", () => {
      const template = "{range .spec.groups[*]}".repeat(100_000);
      quick(
        () => parseOutput(`jsonpath=${template}`),
        /^OutputError: error parsing jsonpath: template is 2300000 characters long; the limit is 65536$/,
      );
    });

    it("2,000 nested {range} (too deep)", () => {
      const template = `${"{range .spec.groups[*]}".repeat(2_000)}x${"{end}".repeat(2_000)}`;
      assert.ok(template.length < MAX_TEMPLATE_LENGTH);
      quick(() => print(template), /ranges are nested more than 100 deep/);
    });

    it("2,000 nested {range} over nothing (too deep)", () => {
      quick(() => print("{range .nope[*]}".repeat(2_000)), /ranges are nested more than 100 deep/);
    });

    it("30 nested {range} over 3 items (3^30 steps)", () => {
      const template = `${"{range .spec.groups[*]}{range $.spec.groups[*]}".repeat(15)}x`;
      quick(
        () => print(template, { spec: { groups: ["a", "b", "c"] } }),
        /more than 5000000 steps/,
      );
    });

    it("a template that prints too much", () => {
      const big = { spec: { groups: Array.from({ length: 200 }, () => "x".repeat(10_000)) } };
      quick(() => print("{.spec.groups}".repeat(40), big), /prints more than 67108864 characters/);
    });

    it("an action that never closes, 60,000 characters long", () => {
      quick(() => parseTemplate(`{${".a".repeat(30_000)}`), /unclosed action/);
    });

    it("30,000 {end} without a range", () => {
      quick(() => print("{end}".repeat(13_000)), /not in range, nothing to end/);
    });

    it("recursive descent over a document nested 500 deep", () => {
      let deep: unknown = "leaf";
      for (let i = 0; i < 500; i++) deep = { a: deep };
      const out = print("{..a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a}", {
        x: deep,
      });
      assert.ok(out.endsWith(" leaf"));
    });

    it("recursive descent over a document nested 10,000 deep (prints too much)", () => {
      let deep: unknown = "leaf";
      for (let i = 0; i < 10_000; i++) deep = { a: deep };
      quick(() => print("{..}", { x: deep }), /prints more than 67108864 characters/);
    });

    it("any string is either printed or refused with an OutputError (property)", () => {
      const alphabet = fc.constantFrom(
        ..."{}[]().,:*@$?=!<>'\"\\ -+0129abrangeend\n\t".split(""),
        "{range ",
        "{end}",
        "[?(",
        "..",
        ".spec",
        ".items[*]",
      );
      fc.assert(
        fc.property(fc.array(alphabet, { maxLength: 40 }), (parts) => {
          const template = parts.join("");
          try {
            const format = parseOutput(`jsonpath=${template}`);
            printObjects([doc], { format, kindGroup: KIND_GROUP }, false);
          } catch (err) {
            if (!(err instanceof OutputError)) throw err;
          }
        }),
        { numRuns: 2_000 },
      );
    });
  });

  (HAVE_KUBECTL ? describe : describe.skip)(
    `byte-for-byte what kubectl's own printer prints${KUBECTL_SKIP_REASON}`,
    function () {
      this.timeout(60_000);
      const templates = [
        ...CASES.map(([t]) => t).filter((t) => !t.includes(".items[0].*")),
        ...EXEC_ERRORS.map(([t]) => t),
        ...PARSE_ERRORS.map(([t]) => t),
        "{.spec}",
        "{.metadata}",
        '{range .spec.items[*]}{.name}{"\\t"}{.tags}{"\\n"}{end}',
      ];
      for (const template of templates) {
        it(template, async () => {
          const kubectl = await kubectlPrint(doc, `jsonpath=${template}`);
          let ours: string;
          try {
            ours = print(template);
          } catch (err) {
            assert.ok(err instanceof OutputError);
            assert.notEqual(kubectl.code, 0, `kubectl printed ${JSON.stringify(kubectl.stdout)}`);
            assert.equal(kubectl.stderr.split("\n")[0], `error: ${err.message.split("\n")[0]}`);
            return;
          }
          assert.equal(kubectl.code, 0, kubectl.stderr);
          assert.equal(ours, kubectl.stdout);
        });
      }

      it("-o jsonpath-as-json", async () => {
        const template = "{.spec.groups}{.spec.items[*].name}{.spec.n}";
        const kubectl = await kubectlPrint(doc, `jsonpath-as-json=${template}`);
        assert.equal(print(template, doc, true), kubectl.stdout);
      });
    },
  );
});
