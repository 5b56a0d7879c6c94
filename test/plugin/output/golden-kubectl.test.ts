// The golden files of test/plugin/output/golden/ checked against kubectl's own output, so a golden
// regenerated from our printer (UPDATE_GOLDEN=1) cannot drift from kubectl where kubectl has the
// same command. tables.test.ts checks that our printer prints each golden; this file checks the
// golden against kubectl v<cluster> (test/support/kubectl.ts) on the test rig's kube-apiserver.
//
// kubectl cannot compute our cells (OWNER, SCOPE, STATUS, EXPIRES, ... are the plugin's), so each
// table golden is served by a CRD of its own whose additionalPrinterColumns are the golden's
// columns, and whose objects are the fixture keys (spec and labels as they are, spec.key left out)
// plus those cells; TYPE, a field every key has, is read from the key. Then `kubectl get` prints
// the table: header case, column widths, 3-space padding, --no-headers, and the row order of
// --sort-by (on the keys' real spec.ttl) are kubectl's, and must equal the golden byte for byte.
// DISPLAY NAME and DESCRIPTION are checked against kubectl reading the field itself (extra -o wide
// columns): kubectl cuts a multi-line value as the golden does, and leaves an absent one empty,
// where the plugin prints `<none>` as kubectl's built-in printers do (`kubectl get svc`'s
// EXTERNAL-IP); a CRD column has no way to say `<none>`. custom-columns.txt reads only real
// fields: kubectl prints it from the objects. describe-*.txt has no kubectl counterpart (kubectl
// describe prints a custom resource's fields generically).

import { strict as assert } from "node:assert";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoFile } from "../../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { installCrd, schemalessCrd } from "../../support/kube/crds.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import {
  HAVE_KUBECTL,
  KUBECTL_SKIP_REASON,
  kubectlFor,
  type Kubectl,
} from "../../support/kubectl.js";
import { ALL_KEYS } from "./fixtures.js";

const GROUP = "golden.vgate.test";
const GOLDEN = (name: string) => repoFile(`test/plugin/output/golden/${name}`);

/** Columns that are a field every fixture key has: kubectl reads the field itself. */
const FIELD_COLUMNS: Record<string, string> = { TYPE: ".spec.type" };

/** Columns that are a field some keys lack: extra -o wide columns read the field itself. */
const OPTIONAL_FIELD_COLUMNS: Record<string, string> = {
  "DISPLAY NAME": ".spec.displayName",
  DESCRIPTION: ".spec.description",
};

interface GoldenTable {
  headers: string[];
  /** Rows of cells, NAME first. */
  rows: string[][];
}

/** A golden table as header and cells: columns start where their header starts. */
function parseTable(text: string): GoldenTable {
  const [header = "", ...lines] = text.trimEnd().split("\n");
  const columns = [...header.matchAll(/(?:^|(?<=\s{3}))\S+(?: \S+)*/g)];
  const starts = columns.map((m) => m.index);
  return {
    headers: columns.map((m) => m[0]),
    rows: lines.map((line) =>
      starts.map((s, i) => line.slice(s, starts[i + 1] ?? line.length).trimEnd()),
    ),
  };
}

/** A cluster-scoped CRD whose printer columns are `table`'s (kubectl adds NAME itself). */
function tableCrd(plural: string, table: GoldenTable): KubeObject {
  const kind = `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`;
  return schemalessCrd(GROUP, kind, plural, {
    printerColumns: [
      ...table.headers.slice(1).map((header, i) => ({
        name: header,
        type: "string",
        jsonPath: FIELD_COLUMNS[header] ?? `.cells.c${i + 1}`,
      })),
      ...Object.entries(OPTIONAL_FIELD_COLUMNS).map(([header, jsonPath]) => ({
        name: `FIELD ${header}`,
        type: "string",
        jsonPath,
        priority: 1,
      })),
    ],
  });
}

/** The fixture keys (without spec.key), each with its row's cells and its place in the golden. */
function tableObjects(plural: string, table: GoldenTable): KubeObject[] {
  const kind = `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`;
  return ALL_KEYS.map((key) => {
    const { metadata, spec } = key as { metadata: { name: string; labels: object }; spec: object };
    const order = table.rows.findIndex((row) => row[0] === metadata.name);
    assert.ok(order >= 0, `${metadata.name} is a row of the golden`);
    const publicSpec: Record<string, unknown> = { ...spec };
    delete publicSpec["key"];
    return {
      apiVersion: `${GROUP}/v1`,
      kind,
      metadata: { name: metadata.name, labels: metadata.labels },
      spec: publicSpec,
      order,
      cells: Object.fromEntries(table.rows[order]!.map((cell, i) => [`c${i}`, cell])),
    };
  });
}

(HAVE_KUBE && HAVE_KUBECTL ? describe : describe.skip)(
  `plugin output: the golden files are what kubectl prints${KUBE_SKIP_REASON || KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let cluster: VgateCluster;
    let kubectl: Kubectl;
    let cacheDir: string;
    const list = parseTable(GOLDEN("list.txt"));
    const wide = parseTable(GOLDEN("list-wide.txt"));
    const crds = [tableCrd("goldenrows", list), tableCrd("goldenwiderows", wide)];

    /** kubectl's stdout; fails the test with its stderr when it fails. */
    async function get(args: string[]): Promise<string> {
      const r = await kubectl(["get", ...args]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    }

    before(async () => {
      cluster = await sharedCluster();
      cacheDir = await mkdtemp(join(tmpdir(), "vgate-golden-kubectl-"));
      kubectl = kubectlFor(cluster.kubeconfigPath, cacheDir);
      for (const [crd, table] of [
        [crds[0]!, list],
        [crds[1]!, wide],
      ] as const) {
        await installCrd(cluster.admin, crd);
        const plural = (crd["spec"] as { names: { plural: string } }).names.plural;
        for (const obj of tableObjects(plural, table)) await cluster.admin.apply(obj);
      }
    });

    after(async () => {
      for (const crd of crds) await cluster?.admin.delete(crd);
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
    });

    it("list.txt: kubectl get, in the golden's row order", async () => {
      assert.equal(await get(["goldenrows", "--sort-by=.order"]), GOLDEN("list.txt"));
    });

    it("list-no-headers.txt: kubectl get --no-headers", async () => {
      assert.equal(
        await get(["goldenrows", "--sort-by=.order", "--no-headers"]),
        GOLDEN("list-no-headers.txt"),
      );
    });

    it("list-sort-by-ttl.txt: kubectl get --sort-by=.spec.ttl, sorted by kubectl", async () => {
      assert.equal(
        await get(["goldenrows", "--sort-by=.spec.ttl"]),
        GOLDEN("list-sort-by-ttl.txt"),
      );
    });

    it("get-one.txt: kubectl get NAME", async () => {
      assert.equal(await get(["goldenrows", "ci-deploy"]), GOLDEN("get-one.txt"));
    });

    it("list-wide.txt: kubectl get, the wide columns after AGE", async () => {
      assert.deepEqual(wide.headers.slice(0, list.headers.length), list.headers);
      assert.equal(await get(["goldenwiderows", "--sort-by=.order"]), GOLDEN("list-wide.txt"));
    });

    it("DISPLAY NAME and DESCRIPTION: kubectl's cells, and <none> where it prints nothing", async () => {
      const fields = parseTable(await get(["goldenwiderows", "--sort-by=.order", "-o", "wide"]));
      for (const [header, jsonPath] of Object.entries(OPTIONAL_FIELD_COLUMNS)) {
        const ours = wide.headers.indexOf(header);
        const theirs = fields.headers.indexOf(`FIELD ${header}`);
        assert.ok(ours > 0 && theirs > 0, header);
        const field = jsonPath.split(".").pop()!;
        for (const [i, row] of wide.rows.entries()) {
          const key = ALL_KEYS.find((k) => (k["metadata"] as { name: string }).name === row[0])!;
          const present = (key["spec"] as Record<string, unknown>)[field] !== undefined;
          assert.equal(
            row[ours],
            present ? fields.rows[i]![theirs] : "<none>",
            `${row[0]} ${header}`,
          );
          if (!present) assert.equal(fields.rows[i]![theirs], "", `kubectl, ${row[0]} ${header}`);
        }
      }
      // The fixtures hold a multi-line display name, which kubectl cuts.
      assert.ok(
        wide.rows.some((row) => row[wide.headers.indexOf("DISPLAY NAME")]!.endsWith("...")),
      );
    });

    it("custom-columns.txt: kubectl get -o custom-columns, from the keys' own fields", async () => {
      const spec = "NAME:.metadata.name,TTL:spec.ttl,GROUPS:{.spec.groups[*]},SCOPE:.spec.scope";
      assert.equal(
        await get(["goldenrows", "--sort-by=.order", "-o", `custom-columns=${spec}`]),
        GOLDEN("custom-columns.txt"),
      );
    });
  },
);
