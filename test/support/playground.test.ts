// `make apiserver` as a user runs it: the playground process, kubectl (or vgate's own client)
// through the kubeconfig it writes, and Ctrl-C stopping kube-apiserver, etcd and vgate.

import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadKubeConfig } from "../../webhook/src/shared/kubeconfig.js";
import { KubeTransport } from "../../webhook/src/shared/transport.js";
import { repoRoot } from "./fixtures.js";
import { httpsRequest } from "./https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "./kube/binaries.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON, kubectlFor } from "./kubectl.js";
import { suiteTempDir } from "./temp-dir.js";

(HAVE_KUBE ? describe : describe.skip)(
  `make apiserver (the playground)${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    const dir = suiteTempDir("vgate-playground-");
    const kubeconfig = join(dir, "kubeconfig");
    let child: ChildProcessWithoutNullStreams;
    let exited: Promise<number | null>;
    let output = "";

    before(async () => {
      child = spawn(
        process.execPath,
        [join(repoRoot, "dist/test/support/playground.js"), "--port=0", `--dir=${dir}`],
        { cwd: repoRoot },
      );
      child.stdout.on("data", (c: Buffer) => (output += c.toString()));
      child.stderr.on("data", (c: Buffer) => (output += c.toString()));
      exited = new Promise((resolve) => child.once("exit", resolve));
      while (!output.includes("Ctrl-C stops everything.")) {
        if (child.exitCode !== null) assert.fail(`playground exited early:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    after(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });

    it("prints how to point kubectl at the kubeconfig it wrote, and a key login", () => {
      assert.ok(output.includes(`export KUBECONFIG=${kubeconfig}`), output);
      assert.ok(output.includes(`--kubeconfig-out ${join(dir, "demo.kubeconfig")}`), output);
      assert.ok(existsSync(join(dir, "key-login.sh")));
    });

    it("admits OwnedAccessKeys through vgate: a key is stored hashed, as installed", async () => {
      const kc = await loadKubeConfig({ kubeconfig, env: {} });
      const transport = new KubeTransport(kc!, { timeoutMs: 5000 });
      try {
        const created = await transport.request(
          "POST",
          "/apis/management.loft.sh/v1/ownedaccesskeys",
          {
            apiVersion: "management.loft.sh/v1",
            kind: "OwnedAccessKey",
            metadata: { name: "from-playground" },
            spec: {
              displayName: "pg",
              user: "admin",
              type: "User",
              key: randomBytes(32).toString("base64url"),
            },
          },
        );
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.match(
          (created.body as { spec: { key?: string } }).spec.key ?? "",
          /^sha256:[0-9a-f]{64}$/,
        );
      } finally {
        transport.close();
      }
    });

    (HAVE_ANY_KUBECTL ? it : it.skip)(
      `kubectl get oak prints the CRD's columns${ANY_KUBECTL_SKIP_REASON}`,
      async () => {
        const res = await kubectlFor(kubeconfig, join(dir, "cache"))(["get", "oak"]);
        assert.equal(res.code, 0, res.stderr);
        assert.match(res.stdout, /^NAME\s+DISPLAY NAME\s+USER\s+TYPE/m);
        assert.match(res.stdout, /from-playground\s+pg\s+admin\s+User/);
      },
    );

    it("stops kube-apiserver, etcd and vgate on Ctrl-C", async () => {
      const vgateUrl = /vgate\s+(https:\/\/\S+)/.exec(output)?.[1];
      const apiUrl = /API server\s+(https:\/\/\S+)/.exec(output)?.[1];
      assert.ok(vgateUrl && apiUrl, output);
      child.kill("SIGINT");
      assert.equal(await exited, 0, output);
      for (const url of [`${vgateUrl}/healthz`, `${apiUrl}/healthz`]) {
        const after = await httpsRequest(url).then(
          () => "still up",
          () => "down",
        );
        assert.equal(after, "down", `${url}\n${output}`);
      }
    });
  },
);
