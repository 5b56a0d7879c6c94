// make's targets do nothing when nothing changed, and after a change only what depends on it:
// `make -q` says whether a target is up to date, and `make -n -W FILE` prints what make would run
// if FILE had just changed, without changing it. `make build` drops outputs whose source is gone,
// and `make test` compiles from an empty dist/ before mocha runs.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { runIn } from "../manifests/make.js";

/** The commands `make -n -W changed target…` prints, one string. */
/** Runs a command in `cwd`, outside the repository. */
function runOutside(cmd: string, args: string[], cwd: string) {
  return new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(cmd, args, { cwd, timeout: 60_000 }, (err, _stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stderr }),
    ),
  );
}

async function wouldRun(changed: string, ...targets: string[]): Promise<string> {
  const r = await runIn("make", ["-n", "--no-print-directory", "-W", changed, ...targets]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

const TSC = /\/tsc -p tsconfig\.json --incremental/;
const ESBUILD = /\/esbuild plugin\/src\/main\.ts/;
const VGATE_COPY = /production-deps\.js/;
const PLUGIN_COPY = /cp -R plugin\/dist/;

/** The webhook sources the plugin bundle reads (shared code), and one it does not. */
function webhookSources(): { shared: string; serverOnly: string } {
  const bundled = readFileSync(join(repoRoot, "plugin/dist/.deps.mk"), "utf8")
    .split("\n")[0]!
    .split(" ")
    .slice(1);
  const shared = bundled.find((f) => f.startsWith("webhook/src/"));
  const serverOnly = readdirSync(join(repoRoot, "webhook/src/server"))
    .map((f) => `webhook/src/server/${f}`)
    .find((f) => f.endsWith(".ts") && !bundled.includes(f));
  assert.ok(shared && serverOnly, "no shared or no server-only webhook source found");
  return { shared, serverOnly };
}

// Run by make test (make sets MAKELEVEL), before anything here builds: make test's own steps left
// the plugin bundle up to date, so the tests that run make never rebuild it under each other.
const byMake = Boolean(process.env["MAKELEVEL"]);
describe("make test", () => {
  (byMake ? it : it.skip)(
    `leaves the plugin bundle up to date for the tests${byMake ? "" : " (skipped: not run by make test)"}`,
    async () => {
      const r = await runIn("make", ["-q", "plugin-bundle"]);
      assert.equal(r.code, 0, "make -q plugin-bundle: out of date while make test runs");
    },
  );
});

describe("make: up to date means nothing to do", function () {
  this.timeout(600_000);

  before(async () => {
    const built = await runIn("make", ["--no-print-directory", "build"], {}, 600_000);
    assert.equal(built.code, 0, built.stderr);
  });

  it("after make build: deps, build and plugin-bundle are up to date", async () => {
    for (const target of ["deps", "build", "plugin-bundle"]) {
      const r = await runIn("make", ["-q", target]);
      assert.equal(r.code, 0, `make -q ${target}: out of date`);
    }
  });

  it("a test source changed: tsc runs, not esbuild", async () => {
    const run = await wouldRun("test/support/fixtures.ts", "build");
    assert.match(run, TSC);
    assert.doesNotMatch(run, ESBUILD);
  });

  it("a plugin source changed: tsc and esbuild run", async () => {
    const run = await wouldRun("plugin/src/main.ts", "build");
    assert.match(run, TSC);
    assert.match(run, ESBUILD);
  });

  it("shared webhook code changed: the bundle too; server-only code: not the bundle", async () => {
    const { shared, serverOnly } = webhookSources();
    assert.match(await wouldRun(shared, "plugin-bundle"), ESBUILD);
    assert.doesNotMatch(await wouldRun(serverOnly, "build"), ESBUILD);
  });

  it("make install copies again only the part whose inputs changed", async () => {
    const { serverOnly } = webhookSources();
    const dir = join(tmpdir(), `vgate-prefix-${process.pid}`);
    try {
      const made = await runIn(
        "make",
        ["--no-print-directory", "install", `PREFIX=${dir}`],
        {},
        600_000,
      );
      assert.equal(made.code, 0, made.stderr);
      const testOnly = await wouldRun("test/support/fixtures.ts", "install", `PREFIX=${dir}`);
      assert.doesNotMatch(testOnly, VGATE_COPY);
      assert.doesNotMatch(testOnly, PLUGIN_COPY);
      const server = await wouldRun(serverOnly, "install", `PREFIX=${dir}`);
      assert.match(server, VGATE_COPY);
      assert.doesNotMatch(server, PLUGIN_COPY);
      const plugin = await wouldRun("plugin/src/main.ts", "install", `PREFIX=${dir}`);
      assert.doesNotMatch(plugin, VGATE_COPY);
      assert.match(plugin, PLUGIN_COPY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("make build removes an output whose source is gone", async () => {
    const stray = join(repoRoot, "dist/test/make/source-deleted-since.js");
    mkdirSync(join(repoRoot, "dist/test/make"), { recursive: true });
    writeFileSync(stray, "throw new Error('compiled from a source that no longer exists');\n");
    writeFileSync(`${stray}.map`, "{}\n");
    const r = await runIn(
      "make",
      ["--no-print-directory", "-W", "tsconfig.json", "build"],
      {},
      600_000,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(stray) && !existsSync(`${stray}.map`), "the stale output is still there");
  });

  it("make test empties dist/ but for the build information, before it compiles and runs mocha", async () => {
    const r = await runIn("make", ["-n", "--no-print-directory", "test"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    const clean = lines.findIndex((l) => /\bdist\b/.test(l) && /\brm -rf\b/.test(l));
    const firstMocha = lines.findIndex((l) => /\/mocha\b/.test(l));
    assert.ok(clean >= 0 && firstMocha > clean, `no clean of dist/ before mocha:\n${r.stdout}`);
    // Run that line on a scratch dist/: everything goes but what the plugin bundle depends on.
    const scratch = mkdtempSync(join(tmpdir(), "vgate-clean-dist-"));
    try {
      for (const d of ["dist/test/make", "dist/webhook"])
        mkdirSync(join(scratch, d), { recursive: true });
      for (const f of [
        "dist/test/make/x.js",
        "dist/.tsc-stamp",
        "dist/build-info.json",
        "dist/.build-info-stamp",
      ])
        writeFileSync(join(scratch, f), "x\n");
      const ran = await runOutside("bash", ["-c", lines[clean]!], scratch);
      assert.equal(ran.code, 0, ran.stderr);
      assert.deepEqual(readdirSync(join(scratch, "dist")).sort(), [
        ".build-info-stamp",
        "build-info.json",
      ]);
      rmSync(join(scratch, "dist"), { recursive: true });
      const none = await runOutside("bash", ["-c", lines[clean]!], scratch);
      assert.equal(none.code, 0, `with no dist/: ${none.stderr}`);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
