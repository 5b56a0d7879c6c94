// `make install PREFIX=…`: vgate, kubectl-accesskey and kubectl_complete-accesskey land in
// PREFIX/bin and run from any directory with only PREFIX/bin added to PATH: vgate from a copy of
// what the image holds (its production dependencies and nothing else), the plugin through kubectl's
// plugin discovery and kubectl's completion. A second `make install` has nothing to do.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { runIn, type Run } from "../manifests/make.js";
import { docBlock, runPromisedBlock } from "../support/readme-blocks.js";

/** `cmd args` in `cwd` (outside the checkout) with exactly `env`; never rejects. */
function runOutside(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return new Promise<Run>((resolve) =>
    execFile(cmd, args, { env, cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}

/** The packages under a node_modules directory, as package-lock.json names them. */
function packagesUnder(dir: string, prefix = "node_modules"): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const path = `${prefix}/${entry.name}`;
    if (entry.name.startsWith("@")) {
      found.push(...packagesUnder(dir, path).filter((p) => p !== path));
      continue;
    }
    found.push(path);
    try {
      found.push(...packagesUnder(dir, `${path}/node_modules`));
    } catch {
      // no nested node_modules
    }
  }
  return found.sort();
}

describe("make install", function () {
  this.timeout(600_000);
  const prefix = mkdtempSync(join(tmpdir(), "vgate-prefix-"));
  const elsewhere = mkdtempSync(join(tmpdir(), "vgate-cwd-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(prefix, "bin")}${delimiter}${process.env["PATH"] ?? ""}`,
  };
  delete env["KUBECONFIG"];
  before(async () => {
    const make = await runIn(
      "make",
      ["--no-print-directory", "install", `PREFIX=${prefix}`],
      {},
      600_000,
    );
    assert.equal(make.code, 0, make.stderr);
  });
  after(() => {
    rmSync(prefix, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("puts vgate, kubectl-accesskey and kubectl_complete-accesskey into PREFIX/bin, as copies", async () => {
    assert.deepEqual(readdirSync(join(prefix, "bin")).sort(), [
      "kubectl-accesskey",
      "kubectl_complete-accesskey",
      "vgate",
    ]);
    for (const bin of readdirSync(join(prefix, "bin"))) {
      const real = realpathSync(join(prefix, "bin", bin));
      assert.ok(real.startsWith(realpathSync(prefix)), `${bin} -> ${real}: not a copy in PREFIX`);
    }
  });

  it("vgate runs from another directory: --help, and a patch through the sandbox", async () => {
    const help = await runOutside("vgate", ["--help"], env, elsewhere);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^vgate: admission webhooks/);
    const example = (f: string) => join(repoRoot, "webhook/examples", f);
    const patched = await runOutside(
      "vgate",
      [
        "patch",
        `--config=${example("vcluster.yaml")}`,
        "--direction=toHost",
        "--vcluster-name=my-vc",
        "--vcluster-namespace=vc-ns",
        example("endpoints.yaml"),
      ],
      env,
      elsewhere,
    );
    assert.equal(patched.code, 0, patched.stderr);
    const ep = JSON.parse(patched.stdout) as { subsets: { addresses: { hostname: string }[] }[] };
    assert.equal(ep.subsets[0]!.addresses[0]!.hostname, "db-0-my-vc");
  });

  it("vgate's tree holds package-lock.json's production dependencies and no devDependency", async () => {
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }>;
    };
    const production = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && !p.dev && !p.devOptional && !p.optional)
      .map(([path]) => path)
      .sort();
    const copied = packagesUnder(join(prefix, "lib/vgate"));
    assert.deepEqual(
      copied.filter((p) => !lock.packages[p]?.optional),
      production,
    );
    assert.ok(!copied.includes("node_modules/typescript"), "a devDependency was copied");
  });

  (HAVE_KUBECTL ? it : it.skip)(
    `kubectl finds the plugin and its completion on PATH${KUBECTL_SKIP_REASON}`,
    async () => {
      const help = await runOutside("kubectl", ["accesskey", "--help"], env, elsewhere);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /^ {2}create +Create an access key/m);
      const complete = await runOutside(
        "kubectl",
        ["__complete", "accesskey", "rot"],
        env,
        elsewhere,
      );
      assert.equal(complete.code, 0, complete.stderr);
      assert.equal(
        complete.stdout,
        "rotate\tGive an access key a new secret and print it once\n:4\n",
      );
    },
  );

  it("a second make install has nothing to do", async () => {
    const again = await runIn("make", ["-q", "install", `PREFIX=${prefix}`]);
    assert.equal(again.code, 0, "make -q install: something is out of date");
  });
});

/** The docs' block that installs the commands, or why there is none. */
function installBlock(): { lines: string[] } | { missing: string } {
  try {
    return { lines: docBlock("make install PREFIX=") };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

describe("the docs' make install block", function () {
  this.timeout(600_000);
  const block = installBlock();
  const why = "missing" in block ? ` (skipped: ${block.missing})` : "";

  ("lines" in block ? it : it.skip)(
    `runs as written with a HOME of its own, from the checkout${why}`,
    async () => {
      const lines = (block as { lines: string[] }).lines;
      const home = mkdtempSync(join(tmpdir(), "vgate-home-"));
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
      delete env["KUBECONFIG"];
      try {
        await runPromisedBlock(lines, home, env, 600_000, repoRoot);
        const bins = readdirSync(join(home, ".local/bin")).sort();
        assert.deepEqual(bins, ["kubectl-accesskey", "kubectl_complete-accesskey", "vgate"]);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );
});
