// Every ```sh block of README.md and docs/*.md is run by a test, as written. The list below names,
// for each block, the start of its first line and the test that finds it with docBlock(); this
// test checks the list both ways (each listed block exists, and once; each block is listed, once)
// and that the named test file asks docBlock() for that very start. A new block fails here until
// a test runs it and is listed; a block a user is not meant to run as written is not an sh block.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { docBlock, shBlocks, userDocs } from "../support/readme-blocks.js";

interface Claim {
  /** How the block's first line starts, as the test passes it to docBlock(). */
  first: string;
  /** The test (or the test support module) that runs the block. */
  test: string;
}

export const CLAIMS: readonly Claim[] = [
  // README.md
  { first: "make cluster  ", test: "test/cluster/make-cluster.test.ts" },
  { first: "mkdir -p vgate-install", test: "test/support/node/vgate-install.ts" },
  { first: "make install PREFIX=", test: "test/make/install.test.ts" },
  // docs/access-keys.md
  { first: "export PATH=$PWD/plugin/bin:$PATH", test: "test/plugin/readme.test.ts" },
  { first: "kubectl create namespace web-prod", test: "test/readme/credentials-block.test.ts" },
  // docs/certificates.md
  {
    first: "# vgate with its certificates from cert-manager",
    test: "test/support/node/vgate-install.ts",
  },
  { first: "# Renew vgate's serving certificate now.", test: "test/cluster/cert-manager.test.ts" },
  // docs/helm-chart.md
  { first: "# Install with Helm:", test: "test/support/helm/helm-install.ts" },
  {
    first: "# Install with Helm and cert-manager:",
    test: "test/support/helm/helm-install.ts",
  },
  { first: "# helm test:", test: "test/cluster/helm.test.ts" },
  { first: "# Upgrade with Helm:", test: "test/cluster/helm.test.ts" },
  { first: "# Uninstall with Helm:", test: "test/cluster/helm.test.ts" },
  { first: "# Only when no key is needed any more:", test: "test/cluster/helm.test.ts" },
  // docs/development.md
  { first: "make run", test: "test/readme/make-run.test.ts" },
  {
    first: "curl -sk --data @webhook/examples/admission-review.json",
    test: "test/readme/make-run.test.ts",
  },
  {
    first: "curl -sk --data @webhook/examples/admission-review-denied.json",
    test: "test/readme/make-run.test.ts",
  },
  { first: "make apiserver", test: "test/readme/make-apiserver.test.ts" },
  // docs/operations.md
  { first: "# Are vgate's pods up?", test: "test/readme/troubleshooting-block.test.ts" },
  // docs/patches.md
  { first: "make cluster VCLUSTER=1", test: "test/cluster/make-cluster.test.ts" },
  { first: "$ vgate check-config", test: "test/readme/cli-blocks.test.ts" },
  { first: "$ cat vcluster.yaml", test: "test/webhook/config/reserved-namespaces.test.ts" },
  { first: "vgate patch --config", test: "test/readme/cli-blocks.test.ts" },
  { first: "vgate translate --config", test: "test/readme/cli-blocks.test.ts" },
  { first: "vgate sync --config", test: "test/readme/sync-block.test.ts" },
];

describe("docs: every sh block is run by a test", () => {
  const blocks = userDocs().flatMap((page) =>
    shBlocks(repoFile(page)).map((lines) => ({ page, first: lines[0]! })),
  );

  it("finds the blocks (README.md has some)", () => {
    assert.ok(blocks.some((b) => b.page === "README.md"));
    assert.ok(blocks.length >= CLAIMS.length);
  });

  it("each listed block exists, exactly once in all the pages", () => {
    for (const claim of CLAIMS) assert.doesNotThrow(() => docBlock(claim.first), claim.first);
  });

  it("each block is listed, exactly once", () => {
    const unclaimed: string[] = [];
    for (const block of blocks) {
      const claims = CLAIMS.filter((c) => block.first.startsWith(c.first));
      if (claims.length === 0) unclaimed.push(`${block.page}: ${block.first}`);
      assert.ok(
        claims.length <= 1,
        `${block.page}: ${block.first} is claimed ${claims.length} times`,
      );
    }
    assert.deepEqual(unclaimed, [], "blocks no test runs (add a test, and list it here)");
  });

  it("each named test asks docBlock() for its block", () => {
    for (const { first, test } of CLAIMS) {
      assert.ok(existsSync(join(repoRoot, test)), `${test} does not exist`);
      const source = repoFile(test);
      assert.ok(
        source.includes(JSON.stringify(first)),
        `${test} never names ${JSON.stringify(first)}`,
      );
      assert.match(source, /\bdocBlock\(/, `${test} does not use docBlock()`);
    }
  });
});
