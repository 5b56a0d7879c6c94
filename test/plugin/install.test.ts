// `make install-plugin PREFIX=…` (its copy step, from this build): both executables land in
// PREFIX/bin and work from there with only node, outside the checkout (no node_modules, no
// package.json), and kubectl finds them on the PATH.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";

const bundled = existsSync(join(repoRoot, "plugin/dist/kubectl-accesskey.mjs"));
const why = bundled ? "" : " (skipped: plugin/dist is not built; make build)";

function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd = tmpdir()) {
  return new Promise<{ code: number; out: string; err: string }>((done) =>
    execFile(file, args, { env, cwd, timeout: 120_000 }, (e, out, err) =>
      done({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, out, err }),
    ),
  );
}

describe("make install-plugin", function () {
  this.timeout(120_000);
  const prefix = mkdtempSync(join(tmpdir(), "accesskey-prefix-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(prefix, "bin")}${delimiter}${process.env["PATH"] ?? ""}`,
  };
  delete env["KUBECONFIG"];

  (bundled ? it : it.skip)(
    `installs both executables into PREFIX/bin, runnable outside the checkout${why}`,
    async () => {
      const make = await run(
        "make",
        ["--no-print-directory", "install-plugin-files", `PREFIX=${prefix}`],
        process.env,
        repoRoot,
      );
      assert.equal(make.code, 0, make.err);
      const bin = join(prefix, "bin/kubectl-accesskey");
      assert.ok(!realpathSync(bin).startsWith(repoRoot), "a copy, not a link into the checkout");
      const help = await run(bin, ["--help"], env);
      assert.equal(help.code, 0, help.err);
      assert.match(help.out, /^ {2}create +Create an access key/m);
      const complete = await run(join(prefix, "bin/kubectl_complete-accesskey"), ["rot"], env);
      assert.equal(complete.out, "rotate\tGive an access key a new secret and print it once\n:4\n");
    },
  );

  (bundled && HAVE_KUBECTL ? it : it.skip)(
    `kubectl finds the installed plugin${why || KUBECTL_SKIP_REASON}`,
    async () => {
      const r = await run(
        "kubectl",
        ["accesskey", "whoami", "--server", "https://127.0.0.1:1"],
        env,
      );
      assert.equal(r.code, 1);
      assert.equal(
        r.err,
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n",
      );
    },
  );
});
