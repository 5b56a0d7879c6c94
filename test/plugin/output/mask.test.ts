// Masking by value (docs/decisions.md OAK-33): the key and every form of it, wherever it is in a
// printed object, in every printer; --show-key shows it all but the identity provider's secrets.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { parseOutput } from "../../../plugin/src/output/format.js";
import { TABLE_FIELDS, tableRow } from "../../../plugin/src/output/access-key-table.js";
import { KEY_MASK, keyForms, maskSecrets, secretValues } from "../../../plugin/src/output/mask.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { describeAccessKey, printObjects } from "../../../plugin/src/output/print.js";
import { KIND_GROUP, NOW } from "./fixtures.js";

const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

function keyObject(key: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: {
      name: "k",
      creationTimestamp: "2026-03-01T00:00:00Z",
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": `${JSON.stringify({ spec: { key: PLAIN } })}\n`,
        pasted: `export TOKEN=${PLAIN} # ci`,
        hashed: `sha256:${sha(PLAIN)}`,
        hex: sha(PLAIN),
      },
      labels: { [PLAIN]: "x" },
    },
    spec: { key, user: "alice", description: `uses ${PLAIN}`, ...extra },
  };
}

const PLAIN = "plain-Key_0123456789abcdefghijklmnopqrstuvwxyz";
const FORMATS = [
  "",
  "wide",
  "json",
  "yaml",
  "name",
  "jsonpath={..}",
  "jsonpath-as-json={.metadata}",
  "custom-columns=A:.metadata.annotations,D:.spec.description,L:.metadata.labels",
];
const print = (o: unknown, output: string, showKey = false) =>
  printObjects(
    [o],
    { format: parseOutput(output), kindGroup: KIND_GROUP, now: NOW, showKey },
    false,
  );

describe("masking keys by value", () => {
  it("a plain key, its sha256 and its hex: gone from every format and describe", () => {
    const o = keyObject(PLAIN);
    for (const output of FORMATS) {
      const text = print(o, output);
      for (const s of [PLAIN, sha(PLAIN)]) {
        assert.ok(!text.includes(s), `-o ${output} printed ${s}:\n${text}`);
      }
    }
    const d = describeAccessKey(o, NOW);
    assert.ok(!d.includes(PLAIN) && !d.includes(sha(PLAIN)), d);
    assert.match(d, /pasted=export TOKEN=REDACTED # ci/);
  });

  it("a hashed key: the plain key found by its hash (in JSON, in words) is masked too", () => {
    const o = keyObject(`sha256:${sha(PLAIN)}`);
    assert.ok(secretValues(o).includes(PLAIN));
    for (const output of FORMATS) {
      const text = print(o, output);
      assert.ok(!text.includes(PLAIN) && !text.includes(sha(PLAIN)), `-o ${output}:\n${text}`);
    }
    const masked = maskSecrets(o) as { metadata: { annotations: Record<string, string> } };
    assert.equal(
      masked.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"],
      `{"spec":{"key":"${KEY_MASK}"}}\n`,
    );
  });

  it("--show-key: nothing masked but the identity provider's secrets", () => {
    const o = keyObject(PLAIN, { identity: { connectorData: "Y29ubmVjdG9yLWRhdGE=" } });
    const text = print(o, "json", true);
    assert.ok(text.includes(PLAIN) && text.includes(sha(PLAIN)));
    assert.ok(!text.includes("Y29ubmVjdG9yLWRhdGE="));
  });

  it("Go's JSON escapes of <, > and & in a copy are found too", () => {
    const key = "a<b>&c-0123456789";
    const o = {
      metadata: {
        name: "k",
        annotations: { applied: `{"spec":{"key":"a\\u003cb\\u003e\\u0026c-0123456789"}}` },
      },
      spec: { key },
    };
    const text = JSON.stringify(maskSecrets(o));
    assert.ok(!text.includes("0123456789"), text);
  });

  it("a copy in JSON with escapes no form matches: the whole string is masked", () => {
    const key = "escaped-key-0123456789";
    const o = {
      metadata: {
        name: "k",
        annotations: { applied: '{"spec":{"key":"\\u0065scaped-key-0123456789"}}', other: "kept" },
      },
      spec: { key: `sha256:${sha(key)}` },
    };
    const m = maskSecrets(o) as { metadata: { annotations: Record<string, string> } };
    assert.deepEqual(m.metadata.annotations, { applied: KEY_MASK, other: "kept" });
  });

  it("a key shorter than 8 characters is masked where it stands alone, not inside words", () => {
    const o = {
      metadata: { name: "k", annotations: { applied: '{"spec":{"key":"abc"}}', word: "abcdef" } },
      spec: { key: "abc", description: "abc" },
    };
    const m = maskSecrets(o) as {
      metadata: { annotations: Record<string, string> };
      spec: Record<string, string>;
    };
    assert.equal(m.metadata.annotations["applied"], `{"spec":{"key":"${KEY_MASK}"}}`);
    assert.equal(m.metadata.annotations["word"], "abcdef");
    assert.equal(m.spec["description"], KEY_MASK);
    assert.equal(m.spec["key"], KEY_MASK);
  });

  it("a --sort-by error that quotes the objects (a filter on a map) never quotes the key", () => {
    const objects = [keyObject(PLAIN), { ...keyObject(PLAIN), metadata: { name: "k2" } }];
    for (const output of ["", "name"]) {
      assert.throws(
        () =>
          printObjects(
            objects,
            { format: parseOutput(output), kindGroup: KIND_GROUP, sortBy: "{.spec[?(@.x)]}" },
            true,
          ),
        (err: Error) => {
          assert.match(err.message, /is not array or slice and cannot be filtered/);
          assert.ok(err.message.includes("key:REDACTED"), err.message);
          assert.ok(!err.message.includes(PLAIN), err.message);
          return true;
        },
      );
    }
  });

  it("keys generated in this run are masked with their hashes", () => {
    const generated = "gen-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    const o = { metadata: { name: "k", annotations: { a: `x ${generated}`, b: sha(generated) } } };
    const text = printObjects(
      [o],
      { format: parseOutput("json"), kindGroup: KIND_GROUP, generated: [generated] },
      false,
    );
    assert.ok(!text.includes(generated) && !text.includes(sha(generated)), text);
  });

  it("property: a key of 8 or more characters placed anywhere is never printed", () => {
    const keyChars = fc.constantFrom(...'abcXYZ019-_.~!<>&"\\');
    fc.assert(
      fc.property(
        fc.string({ unit: keyChars, minLength: 8, maxLength: 40 }),
        fc.string({ maxLength: 10 }),
        fc.string({ maxLength: 10 }),
        fc.boolean(),
        (key, before, after, hashed) => {
          const placed = `${before}${key}${after}`;
          const o = {
            metadata: {
              name: "k",
              annotations: {
                p: placed,
                j: JSON.stringify({ spec: { key, other: placed } }),
              },
            },
            spec: { key: hashed ? `sha256:${sha(key)}` : key, description: placed },
          };
          for (const output of ["json", "yaml", "custom-columns=A:.metadata.annotations.p"]) {
            const text = print(o, output);
            const decoded = output === "json" ? JSON.stringify(JSON.parse(text)) : text;
            assert.ok(!decoded.includes(key), `-o ${output} printed ${key}:\n${text}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: the table masks only the fields it shows, each as the whole masked object has it", () => {
    // Keys that are field names too: masking renames a map key equal to a secret.
    const names = fc.constantFrom(
      "name",
      "spec",
      "user",
      "scope",
      "role",
      "description",
      "metadata",
    );
    const keyChars = fc.constantFrom(...'abcXYZ019-_<>&"\\');
    fc.assert(
      fc.property(
        fc.oneof(names, fc.string({ unit: keyChars, minLength: 1, maxLength: 24 })),
        fc.string({ maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        (key, text, hashed, generated) => {
          const placed = `${text}${key}`;
          const o = {
            metadata: {
              name: placed,
              creationTimestamp: "2026-03-01T00:00:00Z",
              annotations: { a: JSON.stringify({ key }) },
              [key]: key,
            },
            spec: {
              key: hashed ? `sha256:${sha(key)}` : key,
              [key]: { role: key },
              displayName: key,
              user: `"${key}"`,
              type: JSON.stringify([key]),
              scope: { roles: [{ role: key }], projects: [{ project: placed }], [key]: [] },
              ttl: 3600,
              groups: [key, placed],
              description: `uses ${key}`,
            },
            status: { lastActivity: "2026-03-01T00:00:00Z" },
          };
          const opts = generated ? { generated: [placed] } : {};
          for (const wide of [false, true]) {
            assert.deepEqual(
              tableRow(o, wide, NOW, maskSecrets(o, opts, TABLE_FIELDS)),
              tableRow(o, wide, NOW, maskSecrets(o, opts)),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: a plain key's forms are itself, hashKey's sha256:<hex> and the hex", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1, maxLength: 40 }), (key) => {
        fc.pre(!/^sha256:[0-9a-f]{64}$/.test(key));
        const hashed = hashKey(key);
        assert.deepEqual(keyForms(key), [key, hashed, hashed.slice("sha256:".length)]);
      }),
    );
  });
});
