#!/usr/bin/env node
// What `vgate version` and `kubectl accesskey version` report besides package.json's version: the
// git commit, whether the tree had changes, and the build date, found at build time (never at run
// time, when the checkout may have moved on or be gone). docs/decisions.md OPS-30.
//
//   node build/build-info.mjs FILE         writes FILE (make plugin-bundle: dist/build-info.json)
//   node build/build-info.mjs -            prints the JSON
//   node build/build-info.mjs --build-args prints --build-arg flags for docker build / buildah bud
//
// The commit comes from git when this file sits in a git checkout (a tarball unpacked inside some
// other repository does not count), else from $VGATE_GIT_COMMIT (the Dockerfile's build argument:
// the image's build context has no .git), else it is "unknown". The date is $VGATE_BUILD_DATE,
// else $SOURCE_DATE_EPOCH (reproducible builds), else now; FILE is left as it is when it already
// describes the same version, commit and tree state, so a build with nothing new changes nothing.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const UNKNOWN = "unknown";
const repo = dirname(dirname(fileURLToPath(import.meta.url)));
const env = process.env;

function fail(message) {
  process.stderr.write(`build-info: error: ${message}\n`);
  process.exit(1);
}

// --no-optional-locks: `git status` would otherwise rewrite the index to refresh it, and the
// index is a prerequisite of the build information (Makefile): a build would make itself stale.
function git(args) {
  try {
    return execFileSync("git", ["--no-optional-locks", "-C", repo, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return null;
  }
}

/** Whether this file's repository root is itself the top of a git checkout. */
function inCheckout() {
  const top = git(["rev-parse", "--show-toplevel"]);
  if (top === null) return false;
  try {
    return realpathSync(top.trim()) === realpathSync(repo);
  } catch {
    return false;
  }
}

function fromGit() {
  if (!inCheckout()) return null;
  const commit = git(["rev-parse", "HEAD"])?.trim();
  if (!commit) return null;
  // As Kubernetes' hack/lib/version.sh: any change, untracked files included, makes it dirty.
  const status = git(["status", "--porcelain"]);
  return {
    gitCommit: commit,
    gitTreeState: status === null ? UNKNOWN : status ? "dirty" : "clean",
  };
}

function fromEnv() {
  const commit = env.VGATE_GIT_COMMIT || UNKNOWN;
  if (commit !== UNKNOWN && !/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(commit))
    fail(
      `VGATE_GIT_COMMIT must be a full git commit id (40 or 64 hex digits), not ${JSON.stringify(commit)}`,
    );
  const state = env.VGATE_GIT_TREE_STATE || UNKNOWN;
  if (!["clean", "dirty", UNKNOWN].includes(state))
    fail(`VGATE_GIT_TREE_STATE must be clean, dirty or unknown, not ${JSON.stringify(state)}`);
  return { gitCommit: commit, gitTreeState: state };
}

function buildDate() {
  const given = env.VGATE_BUILD_DATE;
  if (given) {
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(given) || Number.isNaN(Date.parse(given)))
      fail(
        `VGATE_BUILD_DATE must be a UTC time such as 2026-01-31T12:00:00Z, not ${JSON.stringify(given)}`,
      );
    return given;
  }
  const epoch = env.SOURCE_DATE_EPOCH;
  if (epoch) {
    if (!/^\d{1,12}$/.test(epoch))
      fail(`SOURCE_DATE_EPOCH must be seconds since 1970, not ${JSON.stringify(epoch)}`);
    return rfc3339(new Date(Number(epoch) * 1000));
  }
  return rfc3339(new Date());
}

const rfc3339 = (date) => date.toISOString().replace(/\.\d{3}Z$/, "Z");

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

const version = readJson(join(repo, "package.json"))?.version;
if (typeof version !== "string") fail(`cannot read the version from ${join(repo, "package.json")}`);
const source = fromGit() ?? fromEnv();
const out = process.argv[2];
if (!out || process.argv.length > 3) fail("usage: node build/build-info.mjs FILE|-|--build-args");

if (out === "--build-args") {
  const args = { VGATE_GIT_COMMIT: source.gitCommit, VGATE_GIT_TREE_STATE: source.gitTreeState };
  args.VGATE_BUILD_DATE = buildDate();
  process.stdout.write(
    `${Object.entries(args)
      .map(([k, v]) => `--build-arg ${k}=${v}`)
      .join(" ")}\n`,
  );
} else if (out === "-") {
  process.stdout.write(`${JSON.stringify({ version, ...source, buildDate: buildDate() })}\n`);
} else {
  const old = readJson(out);
  const same =
    old?.version === version &&
    old.gitCommit === source.gitCommit &&
    old.gitTreeState === source.gitTreeState &&
    typeof old.buildDate === "string" &&
    !env.VGATE_BUILD_DATE &&
    !env.SOURCE_DATE_EPOCH;
  if (!same) {
    const text = `${JSON.stringify({ version, ...source, buildDate: buildDate() })}\n`;
    try {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(`${out}.tmp`, text, { mode: 0o644 });
      renameSync(`${out}.tmp`, out);
    } catch (err) {
      fail(
        `cannot write ${out} (${err.code ?? err.message}); check that its directory can be written`,
      );
    }
  }
}
