// Golden tests of the list table as the plugin prints it from a real cluster: keys with known specs,
// `list` and `list -o wide`, compared cell by cell with test/plugin/golden/*.txt (the run id, the
// AGE and EXPIRES AT cells, which depend on the clock, replaced), and the layout checked exactly:
// every column starts where its header starts, three spaces after the widest cell before it
// (kubectl's tabwriter with padding 3). UPDATE_GOLDEN=1 rewrites the files.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { plugin } from "./plugin-run.js";

const GOLDEN_DIR = join(repoRoot, "test/plugin/golden");
const CLOCK_COLUMNS = new Set(["AGE", "EXPIRES AT"]);

/** The table as cells, columns found from the header; asserts kubectl's alignment on the way. */
export function tableCells(text: string): string[][] {
  const lines = text.trimEnd().split("\n");
  const header = lines[0]!;
  const starts = [...header.matchAll(/(?:^|(?<=\s{3}))\S+(?: \S+)*/g)].map((m) => m.index);
  const cells = lines.map((line) =>
    starts.map((s, i) => line.slice(s, starts[i + 1] ?? line.length).trimEnd()),
  );
  for (const [row, line] of lines.entries()) {
    starts.forEach((s, i) => {
      if (i > 0)
        assert.equal(
          line.slice(s - 3, s),
          "   ",
          `row ${row}: three spaces before column ${i}:\n${text}`,
        );
      assert.notEqual(line[s], " ", `row ${row}: column ${i} starts at its header:\n${text}`);
    });
  }
  starts.slice(1).forEach((s, i) => {
    const widest = Math.max(...cells.map((r) => r[i]!.length));
    assert.equal(
      s,
      starts[i]! + widest + 3,
      `column ${i + 1} starts 3 spaces after the widest cell:\n${text}`,
    );
  });
  return cells;
}

function normalize(text: string): string {
  const cells = tableCells(text);
  const header = cells[0]!;
  return (
    cells
      .map((row, r) =>
        row
          .map((c, i) => (r > 0 && CLOCK_COLUMNS.has(header[i]!) ? "<clock>" : c))
          .map((c) => c.split(RUN_ID).join("RUNID"))
          .join(" | "),
      )
      .join("\n") + "\n"
  );
}

function golden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(file, actual);
  assert.equal(actual, readFileSync(file, "utf8"), `${name} (UPDATE_GOLDEN=1 rewrites it)`);
}

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey list: golden tables${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    const owner = `golden-${RUN_ID}`;
    const names = ["g1", "g2", "g3"].map((n) => `${n}-${RUN_ID}`);
    const list = (...args: string[]) =>
      plugin(["list", "--all", "--field-selector", `spec.user=${owner}`, ...args], {
        kubeconfig: env.admin,
      });

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      const creates = [
        [
          "create",
          names[0]!,
          "--user",
          owner,
          "--display-name",
          "Deploy web",
          "--description",
          "pipeline",
        ],
        [
          "create",
          names[1]!,
          "--user",
          owner,
          "--ttl",
          "30d",
          "--project",
          "web",
          "--project",
          "api",
          "--space",
          "web/prod",
          "--role",
          "vcluster",
          "--group",
          "ci",
        ],
        ["create", names[2]!, "--user", owner, "--ttl", "12h", "--ttl-after-last-activity"],
      ];
      for (const args of creates) {
        const r = await plugin(args, { kubeconfig: env.admin });
        assert.equal(r.code, 0, r.stderr);
      }
      assert.equal((await plugin(["disable", names[2]!], { kubeconfig: env.admin })).code, 0);
    });
    after(async () => env && (await env.cleanup(names)));

    it("list", async () => {
      const r = await list();
      assert.equal(r.code, 0, r.stderr);
      golden("list.txt", normalize(r.stdout));
    });

    it("list -o wide", async () => {
      const r = await list("-o", "wide");
      assert.equal(r.code, 0, r.stderr);
      golden("list-wide.txt", normalize(r.stdout));
    });

    it("list --no-headers --sort-by .spec.ttl", async () => {
      const r = await list("--no-headers", "--sort-by", ".spec.ttl");
      assert.equal(r.code, 0, r.stderr);
      const rows = r.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(/\s{3,}/)[0]);
      // kubectl sorts missing values first, then ascending.
      assert.deepEqual(rows, [names[0], names[2], names[1]]);
    });
  },
);
