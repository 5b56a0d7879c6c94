// docs/cli.md is what `make docs` makes from the commands' --help now: a changed flag or help text
// fails here until `make docs` is run and the page committed with the change.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cliReference, commandsOf } from "../support/cli-reference.js";
import { repoFile, repoRoot } from "../support/fixtures.js";

const built = existsSync(join(repoRoot, "plugin/dist/kubectl-accesskey.mjs"));

describe("docs/cli.md: the CLI reference", function () {
  this.timeout(120_000);

  it("reads a --help's command list", () => {
    const top =
      "Usage:\n  vgate <command>\n\nCommands:\n  serve   Serve\n  sync    Sync\n\nFlags:\n";
    assert.deepEqual(commandsOf(top), ["serve", "sync"]);
  });

  (built ? it : it.skip)(
    `is what make docs writes now${built ? "" : " (skipped: plugin/dist is missing; run make build)"}`,
    () => {
      const now = cliReference();
      for (const heading of [
        "## vgate",
        "### vgate serve",
        "### vgate sync",
        "## kubectl accesskey",
        "### kubectl accesskey create",
      ])
        assert.ok(now.includes(`\n${heading}\n`), heading);
      assert.equal(
        repoFile("docs/cli.md"),
        now,
        "docs/cli.md is stale: run make docs and commit it",
      );
    },
  );
});
