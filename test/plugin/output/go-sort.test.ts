// goSort must put items in exactly Go's sort.Sort order, even with kubectl's --sort-by comparator
// (not a strict weak order: an item without the field is "less" than everything, itself
// included), since that order is what kubectl prints. The oracle is Go itself: a small program
// (go-sort-oracle/) built with the Go toolchain when it is on PATH; skipped, with the reason in
// the name, when it is not.

import { strict as assert } from "node:assert";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { goSort } from "../../../plugin/src/output/go-sort.js";
import { repoRoot } from "../../support/fixtures.js";

function haveGo(): boolean {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const HAVE_GO = haveGo();

/** kubectl's Less over keys where null means "the field is missing". */
function ourOrder(keys: readonly (string | null)[]): number[] {
  const k = [...keys];
  const idx = k.map((_, i) => i);
  goSort({
    len: k.length,
    less: (i, j) => (k[i] === null ? true : k[j] === null ? false : k[i]! < k[j]!),
    swap: (i, j) => {
      [k[i], k[j]] = [k[j]!, k[i]!];
      [idx[i], idx[j]] = [idx[j]!, idx[i]!];
    },
  });
  return idx;
}

/** Random cases: many ties and missing values, sizes across insertion sort, pdqsort, heapsort. */
function cases(): (string | null)[][] {
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  return Array.from({ length: 600 }, (_, c) => {
    const n = 2 + Math.floor(rnd() * (c % 10 === 0 ? 3000 : 120));
    const distinct = 1 + Math.floor(rnd() * (c % 3 === 0 ? 5000 : 5));
    const missing = c % 2 === 0 ? 0.2 : 0;
    return Array.from({ length: n }, () =>
      rnd() < missing ? null : String(Math.floor(rnd() * distinct)),
    );
  });
}

(HAVE_GO ? describe : describe.skip)(
  `plugin output: goSort is Go's sort.Sort${HAVE_GO ? "" : " (skipped: go is not on PATH)"}`,
  function () {
    this.timeout(120_000);
    let dir: string;
    let oracle: string;

    before(() => {
      dir = mkdtempSync(join(tmpdir(), "vgate-go-sort-"));
      oracle = join(dir, "oracle");
      execFileSync("go", ["build", "-o", oracle, "."], {
        cwd: resolve(repoRoot, "test/plugin/output/go-sort-oracle"),
        stdio: "ignore",
      });
    });

    after(() => rmSync(dir, { recursive: true, force: true }));

    it("same order as Go for 600 random inputs with ties and missing fields", async () => {
      const all = cases();
      const goOrders = await new Promise<number[][]>((done, fail) => {
        const child = execFile(oracle, { maxBuffer: 1 << 28 }, (err, stdout) =>
          err ? fail(err) : done(JSON.parse(stdout) as number[][]),
        );
        child.stdin?.end(JSON.stringify(all));
      });
      all.forEach((keys, i) => assert.deepEqual(ourOrder(keys), goOrders[i], `case ${i}`));
    });
  },
);
