// The README's `kubectl accesskey` block, run as written (one bash script, from the checkout, with
// the test cluster's admin KUBECONFIG and a HOME of its own): every line succeeds, and a line whose
// comment is a table header prints that header.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { docBlock } from "../support/readme-blocks.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { pluginCluster, type PluginCluster } from "./plugin-cluster.js";
import { testTempDir } from "../support/temp-dir.js";

const lines = docBlock("export PATH=$PWD/plugin/bin:$PATH");
const ready = HAVE_KUBE && HAVE_ANY_KUBECTL;
const why = !HAVE_KUBE ? KUBE_SKIP_REASON : ANY_KUBECTL_SKIP_REASON;
const MARK = "@@@README-LINE@@@";

/** The comment after a command (`  # …`), if any. */
const comment = (line: string): string => /\s#\s(.*)$/.exec(line)?.[1] ?? "";
const words = (text: string): string => text.trim().split(/\s+/).join(" ");

describe("README: the kubectl accesskey block", function () {
  it("puts this checkout's plugin/bin on the PATH first", () => {
    assert.match(lines[0]!, /^export PATH=\$PWD\/plugin\/bin:\$PATH\b/);
  });

  (ready ? it : it.skip)(`runs as written${why}`, async function () {
    this.timeout(120_000);
    const env: PluginCluster = await pluginCluster();
    await env.cleanup(["ci"]);
    const home = testTempDir("accesskey-readme-");
    const script = [
      "set -euo pipefail",
      ...lines.flatMap((l, i) => [`echo '${MARK}${i}'`, l]),
    ].join("\n");
    const r = await new Promise<{ code: number; out: string; err: string }>((done) =>
      execFile(
        "bash",
        ["-c", script],
        {
          cwd: repoRoot,
          env: { ...process.env, HOME: home, KUBECONFIG: env.admin },
          timeout: 100_000,
        },
        (e, out, err) =>
          done({ code: e ? (typeof e.code === "number" ? e.code : 1) : 0, out, err }),
      ),
    );
    try {
      assert.equal(r.code, 0, `${r.out}\n${r.err}`);
      const outputs = r.out.split(new RegExp(`${MARK}\\d+\\n`)).slice(1);
      assert.equal(outputs.length, lines.length);
      lines.forEach((line, i) => {
        const promised = comment(line);
        if (/^[A-Z ]+$/.test(promised)) {
          assert.equal(words(outputs[i]!.split("\n")[0]!), words(promised), line);
        }
      });
      const kc = join(home, "ci.kubeconfig");
      assert.ok(existsSync(kc));
      assert.match(readFileSync(kc, "utf8"), /token: "[A-Za-z0-9_-]{43}"/);
    } finally {
      await env.cleanup(["ci"]);
    }
  });
});
