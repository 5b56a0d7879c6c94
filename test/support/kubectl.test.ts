// The kubectl the tests compare with is the cluster's own version (docs/decisions.md ARCH-40): the
// one make kube builds, first on PATH for every child, and its minor version the API server's.

import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { sharedCluster } from "./cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "./kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON, kubectlFor, MATCHING_KUBECTL } from "./kubectl.js";

interface Version {
  major: string;
  minor: string;
  gitVersion: string;
}

function run(file: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((done) => {
    execFile(file, args, { timeout: 30_000 }, (err, stdout) =>
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout }),
    );
  });
}

(HAVE_KUBECTL ? describe : describe.skip)(`test support: kubectl${KUBECTL_SKIP_REASON}`, () => {
  it("`kubectl` on the tests' PATH is the matching kubectl, alone in its directory", async () => {
    const first = (process.env["PATH"] ?? "").split(delimiter)[0]!;
    assert.deepEqual(readdirSync(first), ["kubectl"]);
    const r = await run("kubectl", ["version", "--client", "-o", "json"]);
    assert.equal(r.code, 0);
    const mine = await run(MATCHING_KUBECTL!, ["version", "--client", "-o", "json"]);
    assert.equal(r.stdout, mine.stdout);
    assert.notEqual(dirname(MATCHING_KUBECTL!), first);
  });

  (HAVE_KUBE ? it : it.skip)(
    `its version is the test rig's kube-apiserver's${KUBE_SKIP_REASON}`,
    async function () {
      this.timeout(120_000);
      const cluster = await sharedCluster();
      const cacheDir = await mkdtemp(join(tmpdir(), "vgate-kubectl-version-"));
      try {
        const r = await kubectlFor(cluster.kubeconfigPath, cacheDir)(["version", "-o", "json"]);
        assert.equal(r.code, 0, r.stderr);
        const v = JSON.parse(r.stdout) as { clientVersion: Version; serverVersion: Version };
        assert.equal(v.clientVersion.major, v.serverVersion.major);
        assert.equal(v.clientVersion.minor, v.serverVersion.minor);
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    },
  );
});
