// Golden tests for the human-readable output (the list table, -o wide, --no-headers, --sort-by,
// describe, custom columns) at a fixed "now", and the rules around it: keys never shown, kubectl's
// empty-list behaviour, hostile cell contents. Regenerate the golden files after a deliberate
// change with UPDATE_GOLDEN=1 and review the diff; golden-kubectl.test.ts checks the tables and
// custom columns against kubectl's own output, so a regenerated golden cannot drift from kubectl.

import { strict as assert } from "node:assert";
import { existsSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseOutput } from "../../../plugin/src/output/format.js";
import {
  describeAccessKey,
  printObjects,
  type PrintOptions,
} from "../../../plugin/src/output/print.js";
import { repoFile, repoRoot } from "../../support/fixtures.js";
import {
  ALL_KEYS,
  ciKey,
  freshKey,
  idleKey,
  KIND_GROUP,
  NOW,
  SECRETS,
  teamKey,
} from "./fixtures.js";

const GOLDEN_DIR = "test/plugin/output/golden";

function golden(name: string, actual: string): void {
  const path = `${GOLDEN_DIR}/${name}`;
  if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(resolve(repoRoot, path), actual);
  assert.ok(existsSync(resolve(repoRoot, path)), `${path} is missing (UPDATE_GOLDEN=1 writes it)`);
  assert.equal(actual, repoFile(path), `differs from ${path} (UPDATE_GOLDEN=1 rewrites it)`);
}

const opts = (output?: string, extra: Partial<PrintOptions> = {}): PrintOptions => ({
  format: parseOutput(output),
  kindGroup: KIND_GROUP,
  now: NOW,
  ...extra,
});

const TABLES: [string, () => string][] = [
  ["list.txt", () => printObjects(ALL_KEYS, opts(), true)],
  ["list-wide.txt", () => printObjects(ALL_KEYS, opts("wide"), true)],
  ["list-no-headers.txt", () => printObjects(ALL_KEYS, opts(undefined, { noHeaders: true }), true)],
  [
    "list-sort-by-ttl.txt",
    () => printObjects(ALL_KEYS, opts(undefined, { sortBy: ".spec.ttl" }), true),
  ],
  ["get-one.txt", () => printObjects([ciKey], opts(), false)],
  ["describe-ci.txt", () => describeAccessKey(ciKey, NOW)],
  ["describe-idle.txt", () => describeAccessKey(idleKey, NOW)],
  ["describe-team.txt", () => describeAccessKey(teamKey, NOW)],
  ["describe-fresh.txt", () => describeAccessKey(freshKey, NOW)],
  [
    "custom-columns.txt",
    () =>
      printObjects(
        ALL_KEYS,
        opts(
          "custom-columns=NAME:.metadata.name,TTL:spec.ttl,GROUPS:{.spec.groups[*]},SCOPE:.spec.scope",
        ),
        true,
      ),
  ],
];

describe("plugin output: tables and describe (golden files)", () => {
  for (const [name, render] of TABLES) {
    it(name, () => golden(name, render()));
  }

  it("the table starts with NAME and ends with AGE; -o wide adds columns after AGE", () => {
    const [header = ""] = printObjects(ALL_KEYS, opts(), true).split("\n");
    const cells = header.split(/\s{3,}/);
    assert.deepEqual(cells, [
      "NAME",
      "DISPLAY NAME",
      "OWNER",
      "TYPE",
      "SCOPE",
      "STATUS",
      "EXPIRES",
      "LAST ACTIVITY",
      "AGE",
    ]);
    const [wide = ""] = printObjects(ALL_KEYS, opts("wide"), true).split("\n");
    assert.deepEqual(wide.split(/\s{3,}/).slice(8), [
      "AGE",
      "TTL",
      "EXPIRES AT",
      "GROUPS",
      "DESCRIPTION",
    ]);
  });

  it("status: Active, Disabled, Expired (expired wins over disabled)", () => {
    const rows = printObjects(ALL_KEYS, opts(undefined, { noHeaders: true }), true)
      .trim()
      .split("\n")
      .map((line) => line.split(/\s{3,}/));
    assert.deepEqual(
      rows.map((r) => [r[0], r[5]]),
      [
        ["ci-deploy", "Active"],
        ["idle", "Expired"],
        ["team-platform", "Disabled"],
        ["fresh-x7k2q", "Active"],
      ],
    );
  });

  it("no key ever appears in a table, describe, custom columns or -o name", () => {
    const outputs = [
      ...TABLES.map(([, render]) => render()),
      printObjects(ALL_KEYS, opts("name"), true),
      printObjects(ALL_KEYS, opts("custom-columns=K:.spec.key,S:.spec"), true),
      printObjects(ALL_KEYS, opts("jsonpath={..key}"), true),
      ...ALL_KEYS.map((k) => printObjects([k], opts("wide"), false)),
    ];
    for (const out of outputs) {
      for (const secret of SECRETS) assert.ok(!out.includes(secret), `key leaked in:\n${out}`);
    }
  });

  it("-o json and -o yaml mask spec.key unless --show-key", () => {
    for (const output of ["json", "yaml"]) {
      const masked = printObjects(ALL_KEYS, opts(output), true);
      const shown = printObjects(ALL_KEYS, opts(output, { showKey: true }), true);
      for (const secret of SECRETS) {
        assert.ok(!masked.includes(secret));
        assert.ok(shown.includes(secret));
      }
      assert.equal((masked.match(/REDACTED/g) ?? []).length, SECRETS.length);
    }
  });

  it("IdP secrets are masked even with --show-key", () => {
    const withIdp = {
      ...ciKey,
      spec: {
        ...(ciKey["spec"] as object),
        identity: { username: "alice", connectorData: "c2VjcmV0LWNvbm5lY3Rvcg==" },
        oidcLogin: {
          idToken: "aWQtdG9rZW4=",
          accessToken: "YWNjZXNz",
          refreshToken: "cmVmcmVzaA==",
        },
      },
    };
    const out = printObjects([withIdp], opts("json", { showKey: true }), false);
    for (const secret of ["c2VjcmV0LWNvbm5lY3Rvcg==", "aWQtdG9rZW4=", "YWNjZXNz", "cmVmcmVzaA=="]) {
      assert.ok(!out.includes(secret));
    }
    assert.ok(out.includes('"username": "alice"'));
  });

  it("-o json is kubectl's: a kind: List of sorted keys, 4-space indent, HTML escaped", () => {
    const out = printObjects([{ metadata: { name: "a<b" }, apiVersion: "x" }], opts("json"), true);
    assert.equal(
      out,
      '{\n    "apiVersion": "v1",\n    "items": [\n        {\n            "apiVersion": "x",\n            "metadata": {\n                "name": "a\\u003cb"\n            }\n        }\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n',
    );
  });

  it("-o name prints <kind>.<group>/<name> per object", () => {
    assert.equal(
      printObjects([ciKey, idleKey], opts("name"), true),
      `${KIND_GROUP}/ci-deploy\n${KIND_GROUP}/idle\n`,
    );
  });

  it('no objects: nothing at all (kubectl prints "No resources found" on stderr)', () => {
    assert.equal(printObjects([], opts(), true), "");
    assert.equal(printObjects([], opts("wide", { sortBy: ".spec.nope" }), true), "");
    assert.equal(printObjects([], opts("name"), true), "");
  });

  it("a cell with line breaks, tabs or terminal escapes cannot break the table", () => {
    const hostile = {
      ...ciKey,
      metadata: { ...(ciKey["metadata"] as object), name: "hostile" },
      spec: {
        ...(ciKey["spec"] as object),
        displayName: "a\tb\x1b[31mred\rX\nsecond",
        description: "",
      },
    };
    const out = printObjects([hostile, ciKey], opts("wide"), true);
    const lines = out.trimEnd().split("\n");
    assert.equal(lines.length, 3);
    // Cut at the first line break (CR included), as kubectl does; ESC made visible.
    assert.ok(lines[1]!.includes("a b^[[31mred..."));
    assert.ok(!out.includes("\x1b") && !out.includes("\r"));
  });

  it("--sort-by: a field no object has is kubectl's error; a missing field sorts first", () => {
    assert.throws(() => printObjects(ALL_KEYS, opts(undefined, { sortBy: ".spec.nope" }), true), {
      name: "OutputError",
      message: 'couldn\'t find any field with path "{.spec.nope}" in the list of objects',
    });
    const names = printObjects(ALL_KEYS, opts("name", { sortBy: "spec.displayName" }), true);
    assert.equal(
      names,
      ["fresh-x7k2q", "team-platform", "ci-deploy", "idle"]
        .map((n) => `${KIND_GROUP}/${n}\n`)
        .join(""),
    );
  });

  it("--sort-by leaves a one-row table and a single named object alone, as kubectl", () => {
    const table = printObjects([ciKey], opts(undefined, { sortBy: ".spec.nope" }), false);
    assert.match(table, /^NAME /);
    assert.equal(
      printObjects([ciKey], opts("name", { sortBy: ".spec.nope" }), false),
      `${KIND_GROUP}/ci-deploy\n`,
    );
    assert.throws(
      () => printObjects([ciKey], opts("name", { sortBy: ".spec.nope" }), true),
      /couldn't find any field/,
    );
  });

  it("--sort-by compares numbers as numbers and quantities as quantities", () => {
    const objs = ["10", "9", "1Ki", "100m", "2"].map((v, i) => ({
      metadata: { name: `o${i}` },
      v,
    }));
    const sorted = printObjects(objs, opts("jsonpath={.items[*].v}", { sortBy: ".v" }), true);
    assert.equal(sorted, "100m 2 9 10 1Ki");
    const words = ["b", "a10", "a9", "B"].map((v, i) => ({ metadata: { name: `w${i}` }, v }));
    assert.equal(
      printObjects(words, opts("jsonpath={.items[*].v}", { sortBy: ".v" }), true),
      "B a10 a9 b",
    );
  });

  it("a key being deleted is Terminating in the table and describe, whatever else it is", () => {
    const deleting = (base: Record<string, unknown>, spec: Record<string, unknown> = {}) => {
      const k = structuredClone(base) as {
        metadata: Record<string, unknown>;
        spec: Record<string, unknown>;
      };
      k.metadata["deletionTimestamp"] = "2026-03-10T11:58:00Z";
      k.metadata["finalizers"] = ["example.com/hold"];
      Object.assign(k.spec, spec);
      return k;
    };
    const statusOf = (table: string) => {
      const [header, row] = table.split("\n");
      const at = header!.indexOf("STATUS");
      return row!.slice(at).split(/\s{3,}/)[0];
    };
    for (const k of [
      deleting(ciKey),
      deleting(ciKey, { disabled: true }),
      deleting(ciKey, { ttl: 1 }),
      deleting(ciKey, { key: "short" }),
    ]) {
      assert.equal(statusOf(printObjects([k], opts(), false)), "Terminating");
      assert.equal(statusOf(printObjects([k], opts("wide"), false)), "Terminating");
      assert.match(describeAccessKey(k, NOW), /^Status: +Terminating$/m);
    }
    assert.notEqual(statusOf(printObjects([ciKey], opts(), false)), "Terminating");
  });
});

describe("plugin describe: the previous key of a rotation (docs/decisions.md OAK-38)", () => {
  const digest = "ef".repeat(32);
  const rotatedKey = (until: string, status: Record<string, unknown>) => ({
    ...ciKey,
    spec: { ...(ciKey.spec as object), previousKey: { key: `sha256:${digest}`, until } },
    status: { ...(ciKey.status as object), ...status },
  });
  const line = (k: unknown) => /^Previous Key:.*$/m.exec(describeAccessKey(k, NOW))?.[0];

  it("says when the previous key last logged in during its window, or that it did not", () => {
    const until = "2026-03-10T13:00:00Z";
    const used = { previousKey: { until, lastActivity: "2026-03-10T11:57:00Z" } };
    assert.equal(
      line(rotatedKey(until, used)),
      "Previous Key:   still logs in until 2026-03-10T13:00:00Z (in 60m) (never shown); last used 3m ago",
    );
    assert.match(line(rotatedKey(until, {}))!, /\(never shown\); not used since the rotation$/);
    // status names an earlier window: that use was another key's.
    const earlier = {
      previousKey: { until: "2026-03-10T10:00:00Z", lastActivity: "2026-03-10T09:59:00Z" },
    };
    assert.match(line(rotatedKey(until, earlier))!, /; not used since the rotation$/);
    // After the deadline the use in that window is still shown.
    const past = "2026-03-10T11:58:00Z";
    assert.match(
      line(
        rotatedKey(past, { previousKey: { until: past, lastActivity: "2026-03-10T11:57:00Z" } }),
      )!,
      /refused since 2026-03-10T11:58:00Z \(2m ago\) \(never shown\); last used 3m ago$/,
    );
    assert.ok(!describeAccessKey(rotatedKey(until, used), NOW).includes(digest));
  });
});
