// make lint's commit-message check (scripts/check-commits.sh): after the commit it starts from,
// each commit has a subject of at most 72 characters, a blank line and a body; older history and
// clones that lack the start commit are not checked.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../support/fixtures.js";

const script = join(repoRoot, "scripts/check-commits.sh");

describe("scripts/check-commits.sh", () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], {
      encoding: "utf8",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@example.invalid",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@example.invalid",
      },
    }).trim();
  let n = 0;
  const commit = (message: string): string => {
    writeFileSync(join(repo, "f"), String(n++));
    git("add", "f");
    git("commit", "-q", "--no-verify", "-m", message);
    return git("rev-parse", "HEAD");
  };
  const check = (since: string) =>
    spawnSync("bash", [script, since], { cwd: repo, encoding: "utf8" });

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), "vgate-commits-"));
    git("init", "-q");
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it("passes commits with a short subject, a blank line and a body", () => {
    const since = commit(
      "an old commit with a subject far longer than seventy-two characters, left as it is",
    );
    commit("Keep the build information\n\nWhy: the bundle went stale.");
    const r = check(since);
    assert.equal(r.status, 0, r.stderr);
  });

  it("fails on a long subject, and on a commit without a body, naming each", () => {
    const since = commit("start\n\nbody");
    commit(`${"x".repeat(73)}\n\nbody`);
    commit("No body here");
    const r = check(since);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /the subject has 73 characters \(at most 72\)/);
    assert.match(r.stderr, /no blank line and body after the subject \(say why\): No body here/);
  });

  it("fails on a second subject line instead of a blank line", () => {
    const since = commit("start\n\nbody");
    git(
      "commit",
      "-q",
      "--allow-empty",
      "--cleanup=verbatim",
      "-m",
      "Subject\nmore subject\n\nbody",
    );
    const r = check(since);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /no blank line and body/);
  });

  it("checks nothing, and says so, when the start commit is not in the clone", () => {
    commit("No body");
    const r = check("0123456789abcdef0123456789abcdef01234567");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /is not in this clone \(shallow\?\): not checking/);
  });
});
