// The README's "Access keys as credentials" block, run as written against the test cluster (its
// kube-apiserver wired with manifests/apiserver/, a real vgate), with plugin/bin first on PATH, the
// admin KUBECONFIG and a directory of its own. Each line runs in one shell, in order; a line whose
// comment promises an error must fail with exactly that text, a promised table header or message
// must be printed, and every other line must succeed.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { readmeBlock } from "./blocks.js";
import { sharedCluster } from "../support/cluster.js";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";

const lines = readmeBlock(repoFile("README.md"), "kubectl create namespace web-prod");
const ready = HAVE_KUBE && HAVE_KUBECTL;
const why = !HAVE_KUBE ? KUBE_SKIP_REASON : KUBECTL_SKIP_REASON;

/** The comment after a command (`  # …`), if any. */
const comment = (line: string): string => /\s#\s(.*)$/.exec(line)?.[1] ?? "";
const words = (text: string): string => text.trim().split(/\s+/).join(" ");

describe("README: the access keys as credentials block", function () {
  it("promises a denial outside the scope and one for a disabled key", () => {
    assert.ok(lines.some((l) => comment(l).endsWith("outside the key's scope")));
    assert.ok(lines.some((l) => comment(l).endsWith("access key disabled")));
  });

  (ready ? it : it.skip)(`runs as written${why}`, async function () {
    this.timeout(120_000);
    const cluster = await sharedCluster();
    const dir = mkdtempSync(join(tmpdir(), "vgate-readme-keys-"));
    const script = lines
      .map(
        (l, i) => `{\n${l}\n} >"${dir}/out.${i}" 2>"${dir}/err.${i}"; echo $? >"${dir}/code.${i}"`,
      )
      .join("\n");
    try {
      await new Promise<void>((done) =>
        execFile(
          "bash",
          ["-c", script],
          {
            cwd: dir,
            env: {
              ...process.env,
              HOME: dir,
              KUBECONFIG: cluster.kubeconfigPath,
              PATH: `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`,
            },
            timeout: 100_000,
          },
          () => done(),
        ),
      );
      lines.forEach((line, i) => {
        const read = (what: string) => readFileSync(join(dir, `${what}.${i}`), "utf8");
        const code = Number(read("code"));
        const [out, err] = [read("out"), read("err")];
        const promised = comment(line);
        if (promised.startsWith("Error from server")) {
          assert.equal(code, 1, `${line}\n${out}${err}`);
          assert.equal(err.trim(), promised, line);
          return;
        }
        assert.equal(code, 0, `${line}\n${out}${err}`);
        if (/^[A-Z ]+$/.test(promised)) assert.equal(words(out.split("\n")[0]!), words(promised));
        else if (promised) assert.ok(`${out}${err}`.includes(promised), `${line}\n${out}${err}`);
      });
    } finally {
      // Whatever the block left behind when it failed half-way.
      await cluster.admin.request("DELETE", `/apis/${cluster.group}/v1/ownedaccesskeys/deploy`);
      await cluster.admin.request("DELETE", "/api/v1/namespaces/web-prod");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
