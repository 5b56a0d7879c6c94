// The README's "Access keys as credentials" block, run as written against the test cluster (its
// kube-apiserver wired with manifests/apiserver/, a real vgate), with plugin/bin first on PATH, the
// admin KUBECONFIG and a directory of its own; each line must show what its comment promises
// (runPromisedBlock). The cluster tier runs it again on a real node (test/cluster/install.test.ts).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { comment, docBlock, runPromisedBlock } from "../support/readme-blocks.js";
import { sharedCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";

const lines = docBlock("kubectl create namespace web-prod");
const ready = HAVE_KUBE && HAVE_ANY_KUBECTL;
const why = !HAVE_KUBE ? KUBE_SKIP_REASON : ANY_KUBECTL_SKIP_REASON;

describe("README: the access keys as credentials block", function () {
  it("promises a denial outside the scope and one for a disabled key", () => {
    assert.ok(lines.some((l) => comment(l).endsWith("outside the key's scope")));
    assert.ok(lines.some((l) => comment(l).endsWith("access key disabled")));
  });

  (ready ? it : it.skip)(`runs as written${why}`, async function () {
    this.timeout(120_000);
    const cluster = await sharedCluster();
    const dir = mkdtempSync(join(tmpdir(), "vgate-readme-keys-"));
    try {
      await runPromisedBlock(lines, dir, {
        ...process.env,
        HOME: dir,
        KUBECONFIG: cluster.kubeconfigPath,
        PATH: `${resolve(repoRoot, "plugin/bin")}${delimiter}${process.env["PATH"] ?? ""}`,
      });
    } finally {
      // Whatever the block left behind when it failed half-way.
      await cluster.admin.request("DELETE", `/apis/${cluster.group}/v1/ownedaccesskeys/deploy`);
      await cluster.admin.request("DELETE", "/api/v1/namespaces/web-prod");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
