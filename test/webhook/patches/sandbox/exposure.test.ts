// What an expression can reach, as a difference from plain JavaScript: ses is the security
// boundary and is pinned to an exact version (package.json); this test fails when an upgrade of
// ses (or a change of realm.ts) adds or removes a name an expression can reach, so the change is
// read and accepted on purpose (update sandbox-exposure.txt with the reason in the commit). The
// baseline is a fresh vm context of the same Node, so a newer V8's intrinsics do not count as a
// change of ses's.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { after, before, describe, it } from "mocha";
import { SandboxPool } from "../../../../webhook/src/patches/sandbox/pool.js";
import { repoRoot } from "../../../support/fixtures.js";
import { annotation, annotationsOf, toHost } from "./helpers.js";

/** Every global, and each global's own and prototype's own property names, one per line. */
const LISTING = `(() => {
  const out = [];
  const names = (o) => Reflect.ownKeys(o).map(String).sort();
  for (const g of names(globalThis)) {
    const v = globalThis[g];
    out.push(g);
    if ((typeof v !== "object" && typeof v !== "function") || v === null) continue;
    for (const k of names(v)) out.push(g + "." + k);
    const p = typeof v === "function" ? v.prototype : undefined;
    if (p !== null && typeof p === "object") for (const k of names(p)) out.push(g + ".prototype." + k);
  }
  return out.join("\\n");
})()`;

const SNAPSHOT = "test/webhook/patches/sandbox/fixtures/sandbox-exposure.txt";
const snapshot = readFileSync(`${repoRoot}/${SNAPSHOT}`, "utf8").split("\n");
/** The Node major the snapshot was taken on (its `# node N` line): V8's own intrinsics vary. */
const snapshotNode = /^# node (\d+)$/m.exec(snapshot.join("\n"))?.[1];
const expected = snapshot.filter((l) => l && !l.startsWith("#"));
const nodeMajor = process.versions.node.split(".")[0];

/**
 * `+ name` for what only the sandbox has, `- name` for what only plain JavaScript has; a global
 * the sandbox lacks is one line, not one per member (its members are V8's to change).
 */
function exposureDiff(inside: Set<string>, plain: Set<string>): string[] {
  const gone = [...plain].filter((n) => !inside.has(n));
  const goneGlobals = new Set(gone.filter((n) => !n.includes(".")));
  return [
    ...[...inside].filter((n) => !plain.has(n)).map((n) => `+ ${n}`),
    ...gone
      .filter((n) => !goneGlobals.has(n.split(".")[0]!) || !n.includes("."))
      .map((n) => `- ${n}`),
  ].sort();
}

describe("the sandbox's reach, against plain JavaScript (ses pinned)", function () {
  let pool: SandboxPool;
  before(async () => {
    pool = new SandboxPool({ size: 1, deadlineMs: 5_000 });
    await pool.loadConfig("list", annotation(LISTING));
  });
  after(() => pool.close());

  it("ses is pinned to an exact version", () => {
    const pkg = JSON.parse(readFileSync(`${repoRoot}/package.json`, "utf8")) as {
      dependencies: Record<string, string>;
    };
    assert.match(pkg.dependencies["ses"] ?? "", /^\d+\.\d+\.\d+$/);
  });

  const sameNode = snapshotNode === nodeMajor;
  (sameNode ? it : it.skip)(
    `adds and removes exactly the names sandbox-exposure.txt lists${
      sameNode
        ? ""
        : ` (skipped: it was taken on Node ${snapshotNode}, this is Node ${nodeMajor}, whose V8 has other intrinsics)`
    }`,
    async () => {
      const result = await pool.apply("list", toHost);
      const inside = new Set(String(annotationsOf(result.objectJson)["a"]).split("\n"));
      const plain = new Set((runInNewContext(LISTING) as string).split("\n"));
      assert.deepEqual(exposureDiff(inside, plain), expected);
    },
  );
});
