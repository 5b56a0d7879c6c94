// The pieces under the printers: -o parsing, kubectl's durations, the tab writer, key status and
// expiry (decision 10), Go's sort, and -o json / -o yaml against kubectl's own printer with
// hostile strings (quoting, folding, escapes).

import { strict as assert } from "node:assert";
import fc from "fast-check";
import { parseOutput } from "../../../plugin/src/output/format.js";
import { goSort } from "../../../plugin/src/output/go-sort.js";
import { goYaml } from "../../../plugin/src/output/go-yaml.js";
import { goFloatV, goJson, goSprint } from "../../../plugin/src/output/go-values.js";
import { humanDuration } from "../../../plugin/src/output/human-duration.js";
import { keyStatus } from "../../../plugin/src/output/key-status.js";
import { escapeJsonText } from "../../../plugin/src/output/terminal-text.js";
import { printObjects } from "../../../plugin/src/output/print.js";
import { quantityValue } from "../../../plugin/src/output/sort-by.js";
import { tabwrite } from "../../../plugin/src/output/tabwriter.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../../support/kubectl.js";
import { KIND_GROUP, NOW } from "./fixtures.js";
import { kubectlPrint, NO_OP_LABEL } from "./local-kubectl.js";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe("plugin output: printers", () => {
  describe("-o values", () => {
    it("parses kubectl's formats", () => {
      assert.deepEqual(parseOutput(undefined), { kind: "table", wide: false });
      assert.deepEqual(parseOutput("wide"), { kind: "table", wide: true });
      assert.deepEqual(parseOutput("json"), { kind: "json" });
      assert.deepEqual(parseOutput("yaml"), { kind: "yaml" });
      assert.deepEqual(parseOutput("name"), { kind: "name" });
      assert.deepEqual(parseOutput("jsonpath={.a}={.b}"), {
        kind: "jsonpath",
        template: "{.a}={.b}",
      });
      assert.deepEqual(parseOutput("jsonpath-as-json={.a}"), {
        kind: "jsonpath",
        template: "{.a}",
        asJson: true,
      });
      assert.deepEqual(parseOutput("custom-columns=A:.a"), {
        kind: "custom-columns",
        spec: "A:.a",
      });
    });

    it("refuses what kubectl refuses, in its words", () => {
      assert.throws(() => parseOutput("xml"), {
        name: "OutputError",
        message:
          'unable to match a printer suitable for the output format "xml", allowed formats are: custom-columns,json,jsonpath,jsonpath-as-json,name,wide,yaml',
      });
      assert.throws(
        () => parseOutput("jsonpath"),
        /^OutputError: template format specified but no template given$/,
      );
      assert.throws(
        () => parseOutput("jsonpath="),
        /template format specified but no template given/,
      );
      assert.throws(
        () => parseOutput("custom-columns="),
        /custom-columns format specified but no custom columns given/,
      );
      const cc = (spec: string) => () =>
        printObjects(
          [{}],
          { format: parseOutput(`custom-columns=${spec}`), kindGroup: KIND_GROUP },
          true,
        );
      assert.throws(
        cc("NAME"),
        /^OutputError: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>$/,
      );
      assert.throws(cc("A:{.a}}"), /unexpected path string, expected a 'name1.name2'/);
    });
  });

  describe("kubectl's human durations (apimachinery HumanDuration)", () => {
    const cases: [number, string][] = [
      [-2 * S, "<invalid>"],
      [-1 * S, "0s"],
      [0, "0s"],
      [1500, "1s"],
      [119 * S, "119s"],
      [2 * M, "2m"],
      [2 * M + 30 * S, "2m30s"],
      [9 * M + 59 * S, "9m59s"],
      [10 * M + 30 * S, "10m"],
      [179 * M, "179m"],
      [3 * H, "3h"],
      [3 * H + 5 * M, "3h5m"],
      [8 * H, "8h"],
      [47 * H + 59 * M, "47h"],
      [2 * D, "2d"],
      [2 * D + 5 * H, "2d5h"],
      [8 * D, "8d"],
      [729 * D, "729d"],
      [730 * D, "2y"],
      [731 * D, "2y1d"],
      [8 * 365 * D, "8y"],
      [20 * 365 * D + 100 * D, "20y"],
    ];
    for (const [ms, text] of cases)
      it(`${ms} ms → ${text}`, () => assert.equal(humanDuration(ms), text));
  });

  describe("the tab writer (Go's text/tabwriter as kubectl sets it up)", () => {
    it("pads columns to the widest cell + 3, at least 6, and leaves the last cell alone", () => {
      assert.equal(
        tabwrite("A\tBB\tC\nlonger\tx\ty   \n"),
        "A        BB    C\nlonger   x     y   \n",
      );
    });

    it("counts code points, not UTF-16 units or bytes", () => {
      assert.equal(tabwrite("é✓😀\tx\nab\ty\n"), "é✓😀   x\nab    y\n");
    });

    it("a line without tabs ends a block; later blocks keep earlier widths (RememberWidths)", () => {
      assert.equal(
        tabwrite("aaaaaaaaaa\tb\nsingle line\nc\td\n"),
        "aaaaaaaaaa   b\nsingle line\nc            d\n",
      );
    });
  });

  describe("key status and expiry (decision 10)", () => {
    const at = (iso: string) => Date.parse(iso);
    const k = (spec: object, status: object = {}) => ({
      metadata: { creationTimestamp: "2026-03-01T00:00:00Z" },
      spec,
      status,
    });

    it("no TTL never expires", () => {
      assert.deepEqual(keyStatus(k({}), NOW), { status: "Active", expiresAt: undefined });
      assert.deepEqual(keyStatus(k({ ttl: 0 }), NOW), { status: "Active", expiresAt: undefined });
    });

    it("counts from creation; expired exactly at base + ttl", () => {
      const key = k({ ttl: 3600 });
      const end = at("2026-03-01T01:00:00Z");
      assert.deepEqual(keyStatus(key, end - 1), { status: "Active", expiresAt: end });
      assert.deepEqual(keyStatus(key, end), { status: "Expired", expiresAt: end });
    });

    it("counts from the last activity with ttlAfterLastActivity, from creation before first use", () => {
      const used = k(
        { ttl: 60, ttlAfterLastActivity: true },
        { lastActivity: "2026-03-05T00:00:00Z" },
      );
      assert.equal(keyStatus(used, NOW).expiresAt, at("2026-03-05T00:01:00Z"));
      const unused = k({ ttl: 60, ttlAfterLastActivity: true });
      assert.equal(keyStatus(unused, NOW).expiresAt, at("2026-03-01T00:01:00Z"));
      const ignored = k({ ttl: 60 }, { lastActivity: "2026-03-05T00:00:00Z" });
      assert.equal(keyStatus(ignored, NOW).expiresAt, at("2026-03-01T00:01:00Z"));
    });

    it("disabled is Disabled, unless it has also expired", () => {
      assert.equal(keyStatus(k({ disabled: true }), NOW).status, "Disabled");
      assert.equal(keyStatus(k({ disabled: true, ttl: 1 }), NOW).status, "Expired");
    });

    it("bad data never throws", () => {
      for (const junk of [
        null,
        1,
        "x",
        [],
        {},
        { spec: { ttl: "1" } },
        { metadata: { creationTimestamp: "yesterday" } },
      ]) {
        assert.equal(keyStatus(junk, NOW).status, "Active");
      }
    });
  });

  describe("Go values", () => {
    it("formats floats as Go's %v and JSON as encoding/json", () => {
      assert.deepEqual([0.5, 1e-5, 123456.5, 1e6, 1234567.5, 1e21, -2.5e-7].map(goFloatV), [
        "0.5",
        "1e-05",
        "123456.5",
        "1e+06",
        "1.2345675e+06",
        "1e+21",
        "-2.5e-07",
      ]);
      assert.equal(
        goJson({ b: [1, 2.5, "<&>\u2028"], a: {}, "10": null, "9": [] }),
        '{"10":null,"9":[],"a":{},"b":[1,2.5,"\\u003c\\u0026\\u003e\\u2028"]}',
      );
      assert.equal(goSprint({ b: [1, "x y"], a: null }), "map[a:<nil> b:[1 x y]]");
    });

    it("parses Kubernetes quantities", () => {
      assert.deepEqual(
        ["1", "1.5", "100m", "1Ki", "2e3", "-1G", "1x", "", "1.2.3"].map(quantityValue),
        [1, 1.5, 0.1, 1024, 2000, -1e9, undefined, undefined, undefined],
      );
    });

    it("goSort sorts like any sort for a consistent order (property)", () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 300 }), (values) => {
          const data = [...values];
          goSort({
            len: data.length,
            less: (i, j) => data[i]! < data[j]!,
            swap: (i, j) => ([data[i], data[j]] = [data[j]!, data[i]!]),
          });
          assert.deepEqual(
            data,
            [...values].sort((a, b) => a - b),
          );
        }),
      );
    });
  });

  (HAVE_KUBECTL ? describe : describe.skip)(
    `-o json and -o yaml as kubectl prints them${KUBECTL_SKIP_REASON}`,
    function () {
      this.timeout(60_000);
      const strings = [
        "",
        " lead",
        "trail ",
        "yes",
        "n",
        "on",
        "~",
        "null",
        "123",
        "1.5",
        "0x1F",
        "1_000",
        "1:20",
        ".5",
        ".inf",
        "2021-01-01",
        "2021-01-01T00:00:00Z",
        "*x",
        "&x",
        "!x",
        "@x",
        "`x",
        "%x",
        "- x",
        "-x",
        "? x",
        "?x",
        "a: b",
        "a:b",
        "a #b",
        "a#b",
        "[a]",
        "{a}",
        "it's",
        'say "hi"',
        "line1\nline2\n",
        "line1\nline2",
        "  indented\nx",
        "a\n\n",
        "\nlead",
        "tab\there",
        "ctrl\u0001x",
        "nel\u0085x",
        "ls\u2028x",
        "bom\ufeffx",
        "héllo ✓",
        "emoji 😀",
        "<a&b>",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt",
        `'quoted' ${"word ".repeat(25)}`,
        `${"x".repeat(90)} tail`,
        `tab\t ${"word ".repeat(20)}`,
      ];
      const object = {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: {
          name: "strings",
          labels: NO_OP_LABEL,
          annotations: Object.fromEntries(strings.map((s, i) => [`k${i}`, s])),
        },
        spec: {
          list: strings,
          nested: [[1, 2], { a: [], b: {} }, [{ c: strings.slice(0, 5) }]],
          numbers: [0, -3, 2.5, 1e21, 123456789, 1e-7],
          keys: Object.fromEntries(strings.slice(0, 30).map((s) => [s, s])),
          order: { key9: 1, key10: 2, _u: 3, Au: 4, "a-b": 5, ab: 6, a0: 7, a00: 8 },
          // Keys libyaml cannot write as simple keys: over 128 bytes, or multi-line.
          explicit: {
            ["k".repeat(129)]: { x: [1, 2] },
            ["é".repeat(65)]: [{ a: 1 }],
            ["x".repeat(128)]: "simple",
            "multi\nline": "v",
            "lit\nkey\n": { y: "v" },
          },
        },
      };

      it("-o yaml", async () => {
        const kubectl = await kubectlPrint(object, "yaml");
        assert.equal(kubectl.code, 0, kubectl.stderr);
        assert.equal(goYaml(object), kubectl.stdout);
      });

      it("-o json (DEL, C1 and bidirectional characters escaped, where kubectl writes them raw)", async () => {
        const kubectl = await kubectlPrint(object, "json");
        assert.equal(kubectl.code, 0, kubectl.stderr);
        const ours = printObjects(
          [object],
          { format: parseOutput("json"), kindGroup: KIND_GROUP },
          false,
        );
        assert.ok(kubectl.stdout.includes("nel\u0085x"), "kubectl writes U+0085 raw");
        assert.equal(ours, escapeJsonText(kubectl.stdout));
        assert.deepEqual(JSON.parse(ours), JSON.parse(kubectl.stdout));
      });

      it("-o yaml for random strings (property, 5 batches of 200)", async () => {
        const alphabet = fc.constantFrom(
          // Code points: real data never has lone surrogates (Go's JSON decoder replaces them).
          ...[..." :#'\"\\-?*&!|>%@`,[]{}.\t\n_0a9Zé✓😀\u2028\u0001"],
          "  ",
          "yes",
          "null",
          "2021-01-01",
          "lorem ipsum ",
        );
        for (let batch = 0; batch < 5; batch++) {
          const values = fc.sample(
            fc.array(alphabet, { maxLength: 30 }).map((p) => p.join("")),
            {
              numRuns: 200,
              seed: batch,
            },
          );
          const doc = {
            ...object,
            metadata: {
              ...object.metadata,
              annotations: Object.fromEntries(values.map((v, i) => [`k${i}`, v])),
            },
          };
          const kubectl = await kubectlPrint(doc, "yaml");
          assert.equal(goYaml(doc), kubectl.stdout, `batch ${batch}`);
        }
      });
    },
  );
});

describe("plugin output: --output-watch-events", () => {
  const key = {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: {
      name: "ci",
      creationTimestamp: new Date(NOW - 60 * S).toISOString().replace(/\.\d+Z$/, "Z"),
      managedFields: [{ manager: "kubectl" }],
    },
    spec: { key: "k".repeat(43), user: "alice", type: "User" },
  };
  const print = (output: string | undefined, type = "MODIFIED") =>
    printObjects(
      [key],
      { format: parseOutput(output), kindGroup: KIND_GROUP, now: NOW, watchEvent: type },
      false,
    );

  it("a table gets kubectl's EVENT column, the type padded to MODIFIED's width", () => {
    const [header, row] = print(undefined, "ADDED").split("\n");
    assert.match(header!, /^EVENT {6}NAME {3}DISPLAY NAME/);
    assert.match(row!, /^ADDED {6}ci {5}/);
    assert.match(print(undefined, "DELETED").split("\n")[1]!, /^DELETED {4}ci /);
  });

  it("json is the WatchEvent on one line, type first, managedFields kept, the key masked", () => {
    const text = print("json");
    assert.equal(text.split("\n").length, 2);
    assert.ok(text.startsWith('{"type":"MODIFIED","object":{"apiVersion":'), text);
    const event = JSON.parse(text) as {
      object: { metadata: { managedFields?: unknown }; spec: { key: string } };
    };
    assert.ok(event.object.metadata.managedFields);
    assert.equal(event.object.spec.key, "REDACTED");
  });

  it("yaml, jsonpath and custom-columns see {type, object}; -o name the object", () => {
    const yaml = print("yaml");
    assert.match(yaml, /^object:\n {2}apiVersion: management\.loft\.sh\/v1\n/);
    assert.match(yaml, /\ntype: MODIFIED\n$/);
    assert.equal(print("jsonpath={.type} {.object.metadata.name}"), "MODIFIED ci");
    assert.equal(
      print("custom-columns=T:.type,N:.object.metadata.name"),
      "T          N\nMODIFIED   ci\n",
    );
    assert.equal(print("name"), `${KIND_GROUP}/ci\n`);
  });
});
