// `vgate --version` and `vgate version` as a subprocess: the version of package.json, the commit
// of this checkout and the build date, as make build recorded them (build/build-info.mjs); and a
// build from a tree with no git (a source tarball) that says "unknown" instead of failing.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  assertTextMatches,
  assertThisBuild,
  HEAD,
  PACKAGE_VERSION,
} from "../../support/build-info-check.js";
import { repoRoot } from "../../support/fixtures.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const run = (args: string[], file = bin, env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(file, args, { encoding: "utf8", env, timeout: 20_000 });

/** A copy of the files a source tarball's `make build` needs to record the build: no .git. */
function tarballTree(parent: string): string {
  const root = join(parent, "vgate-0.1.0");
  mkdirSync(join(root, "build"), { recursive: true });
  cpSync(join(repoRoot, "package.json"), join(root, "package.json"));
  cpSync(join(repoRoot, "build/build-info.mjs"), join(root, "build/build-info.mjs"));
  return root;
}

/** The generator's environment without the variables that would stand in for git. */
function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const standIns = new Set([
    "VGATE_GIT_COMMIT",
    "VGATE_GIT_TREE_STATE",
    "VGATE_BUILD_DATE",
    "SOURCE_DATE_EPOCH",
  ]);
  const inherited = Object.entries(process.env).filter(([name]) => !standIns.has(name));
  return { ...Object.fromEntries(inherited), ...extra };
}

const generate = (root: string, out: string, env: NodeJS.ProcessEnv = plainEnv()) =>
  spawnSync(process.execPath, [join(root, "build/build-info.mjs"), out], {
    encoding: "utf8",
    env,
    cwd: root,
  });

describe("vgate version", function () {
  this.timeout(30_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "vgate-version-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("vgate version -o json|yaml: this checkout's commit (git rev-parse HEAD) and a build date", () => {
    const json = run(["version", "-o", "json"]);
    assert.equal(json.status, 0, json.stderr);
    const info = assertThisBuild(json.stdout, "json");
    const yaml = run(["version", "--output=yaml"]);
    assert.equal(yaml.status, 0, yaml.stderr);
    assert.deepEqual(assertThisBuild(yaml.stdout, "yaml"), info);
  });

  it("vgate --version and vgate version print the same lines", () => {
    const info = assertThisBuild(run(["version", "-o", "json"]).stdout, "json");
    for (const args of [["--version"], ["version"]]) {
      const r = run(args);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, "");
      assertTextMatches(r.stdout, info);
    }
  });

  it("vgate version --help, and a bad -o or an argument is a usage error (exit 2)", () => {
    const help = run(["version", "--help"]);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage:\n {2}vgate version \[-o json\|yaml\]/);
    assert.match(run(["--help"]).stdout, /\n {2}version +Print the version/);
    const bad = run(["version", "-o", "wide"]);
    assert.equal(bad.status, 2);
    assert.equal(bad.stdout, "");
    assert.match(bad.stderr, /^error: --output must be 'yaml' or 'json'\n/);
    assert.equal(run(["version", "extra"]).status, 2);
  });

  it("a fresh clone records its HEAD and a clean tree", () => {
    const clone = join(dir, "clone");
    execFileSync("git", ["clone", "-q", "--shared", "--no-checkout", repoRoot, clone]);
    execFileSync("git", ["-C", clone, "checkout", "-q", "--detach", HEAD]);
    const r = spawnSync(process.execPath, [join(clone, "build/build-info.mjs"), "-"], {
      encoding: "utf8",
      env: plainEnv(),
    });
    assert.equal(r.status, 0, r.stderr);
    const info = JSON.parse(r.stdout) as Record<string, string>;
    assert.equal(info["gitCommit"], HEAD);
    assert.equal(info["gitTreeState"], "clean");
    assert.equal(info["version"], PACKAGE_VERSION);
  });

  it("a tarball build with no git records unknown, and vgate version says unknown", () => {
    const root = tarballTree(join(dir, "plain"));
    const out = join(root, "dist/build-info.json");
    const r = generate(root, out);
    assert.equal(r.status, 0, r.stderr);
    const recorded = JSON.parse(readFileSync(out, "utf8")) as Record<string, string>;
    assert.equal(recorded["gitCommit"], "unknown");
    assert.equal(recorded["gitTreeState"], "unknown");
    assert.equal(recorded["version"], PACKAGE_VERSION);
    assert.ok(Number.isFinite(Date.parse(recorded["buildDate"]!)));
    // vgate itself from that tree: the compiled webhook and the launcher, with the repo's packages.
    cpSync(join(repoRoot, "dist/webhook"), join(root, "dist/webhook"), { recursive: true });
    cpSync(join(repoRoot, "webhook/bin"), join(root, "webhook/bin"), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"), "dir");
    const v = run(["version", "-o", "json"], join(root, "webhook/bin/vgate"));
    assert.equal(v.status, 0, v.stderr);
    const info = JSON.parse(v.stdout) as Record<string, string>;
    assert.equal(info["gitCommit"], "unknown");
    assert.equal(info["buildDate"], recorded["buildDate"]);
    // And with no record at all (tsc alone): unknown, the version from package.json, no failure.
    rmSync(out);
    const bare = run(["--version"], join(root, "webhook/bin/vgate"));
    assert.equal(bare.status, 0, bare.stderr);
    assert.match(bare.stdout, new RegExp(`^Version: +${PACKAGE_VERSION.replace(/\./g, "\\.")}\n`));
    assert.match(
      bare.stdout,
      /\nGit commit: +unknown\nGit tree state: +unknown\nBuild date: +unknown\n/,
    );
  });

  it("a tarball unpacked inside another git checkout does not take that checkout's commit", () => {
    const outer = join(dir, "outer");
    mkdirSync(outer);
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", outer, ...args], { encoding: "utf8", stdio: "pipe" });
    git("init", "-q");
    git(
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.invalid",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "x",
    );
    const root = tarballTree(outer);
    const out = join(root, "dist/build-info.json");
    assert.equal(generate(root, out).status, 0);
    assert.equal(
      (JSON.parse(readFileSync(out, "utf8")) as { gitCommit: string }).gitCommit,
      "unknown",
    );
  });

  it("build arguments stand in for git (the image), and bad ones fail with a sentence", () => {
    const root = tarballTree(join(dir, "args"));
    const out = join(root, "dist/build-info.json");
    const commit = "0123456789abcdef0123456789abcdef01234567";
    const env = plainEnv({
      VGATE_GIT_COMMIT: commit,
      VGATE_GIT_TREE_STATE: "clean",
      VGATE_BUILD_DATE: "2026-01-31T12:00:00Z",
    });
    assert.equal(generate(root, out, env).status, 0);
    assert.deepEqual(JSON.parse(readFileSync(out, "utf8")), {
      version: PACKAGE_VERSION,
      gitCommit: commit,
      gitTreeState: "clean",
      buildDate: "2026-01-31T12:00:00Z",
    });
    const bad = generate(root, out, plainEnv({ VGATE_GIT_COMMIT: "HEAD" }));
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^build-info: error: VGATE_GIT_COMMIT must be a full git commit id/);
    const epoch = generate(root, out, plainEnv({ SOURCE_DATE_EPOCH: "1767225600" }));
    assert.equal(epoch.status, 0, epoch.stderr);
    assert.equal(
      (JSON.parse(readFileSync(out, "utf8")) as { buildDate: string }).buildDate,
      "2026-01-01T00:00:00Z",
    );
  });

  it("a second build of the same commit leaves the record as it is (make has nothing to redo)", () => {
    const out = join(dir, "again/build-info.json");
    const first = generate(repoRoot, out);
    assert.equal(first.status, 0, first.stderr);
    const before = readFileSync(out, "utf8");
    execFileSync("sleep", ["1.1"]);
    assert.equal(generate(repoRoot, out).status, 0);
    assert.equal(readFileSync(out, "utf8"), before);
  });
});
