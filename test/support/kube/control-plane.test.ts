// The test rig itself: a real kube-apiserver and etcd start on loopback, enforce RBAC, report the
// pinned version, and leave nothing behind, whether stopped or killed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:https";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { repoRoot } from "../fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON, findKubeBinaries, kubeVersions } from "./binaries.js";
import { startControlPlane, type ControlPlane } from "./control-plane.js";
import { KubeTestClient } from "./kube-client.js";

/** Whether anything answers at `url` (any HTTP status counts as up). */
function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const get = url.startsWith("https:") ? request : httpRequest;
    const req = get(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

async function gone(urls: string[], dir: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const up = (await Promise.all(urls.map(answers))).some(Boolean);
    if (!up && !existsSync(dir)) return;
    if (Date.now() > deadline)
      assert.fail(`still running or not cleaned up: ${urls.join(" ")} ${dir}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("kube binaries lookup", () => {
  it("names make kube and KUBEBUILDER_ASSETS when the binaries are missing", () => {
    const missing = findKubeBinaries({ HOME: "/nonexistent", XDG_CACHE_HOME: "/nonexistent" });
    assert.ok("missing" in missing);
    assert.match(
      missing.missing,
      /run `make kube` \(needs Go >= 1\.26\) or set KUBEBUILDER_ASSETS/,
    );
    assert.match(missing.missing, new RegExp(`/nonexistent/vgate/kube/${kubeVersions().kube}/`));
  });

  it("takes KUBEBUILDER_ASSETS, then TEST_ASSET_* per binary, as envtest does", () => {
    const viaAssets = findKubeBinaries({ KUBEBUILDER_ASSETS: "/opt/kb" });
    assert.ok("missing" in viaAssets);
    assert.match(
      viaAssets.missing,
      /\/opt\/kb\/kube-apiserver or \/opt\/kb\/etcd \(KUBEBUILDER_ASSETS\)/,
    );
    const perBinary = findKubeBinaries({
      KUBEBUILDER_ASSETS: "/opt/kb",
      TEST_ASSET_ETCD: "/bin/sh",
    });
    assert.ok("missing" in perBinary);
    assert.doesNotMatch(perBinary.missing, /\/opt\/kb\/etcd/);
  });
});

(HAVE_KUBE ? describe : describe.skip)(
  `control plane (kube-apiserver and etcd)${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let plane: ControlPlane;
    let admin: KubeTestClient;

    before(async () => {
      plane = await startControlPlane();
      admin = new KubeTestClient(plane.url, { ca: plane.ca.cert, client: plane.adminCert });
    });
    after(async () => {
      admin?.close();
      await plane?.stop();
    });

    it("serves the pinned Kubernetes version", async () => {
      const res = await admin.request<{ gitVersion: string; major: string; minor: string }>(
        "GET",
        "/version",
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.gitVersion, kubeVersions().kube);
      assert.equal(
        `v${res.body.major}.${res.body.minor}`,
        /^v\d+\.\d+/.exec(kubeVersions().kube)![0],
      );
    });

    it("authenticates the admin's client certificate into system:masters", async () => {
      const res = await admin.request<{
        status: { userInfo: { username: string; groups: string[] } };
      }>("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "SelfSubjectReview",
      });
      assert.equal(res.status, 201);
      assert.equal(res.body.status.userInfo.username, "admin");
      assert.ok(res.body.status.userInfo.groups.includes("system:masters"));
    });

    it("authorizes with RBAC: a user without bindings is forbidden, with kube's message", async () => {
      const { clientCert } = await import("./pki.js");
      const nobody = new KubeTestClient(plane.url, {
        ca: plane.ca.cert,
        client: await clientCert(plane.ca, "nobody"),
      });
      try {
        const res = await nobody.request<{ reason: string; message: string }>(
          "GET",
          "/api/v1/namespaces",
        );
        assert.equal(res.status, 403);
        assert.equal(res.body.reason, "Forbidden");
        assert.equal(
          res.body.message,
          'namespaces is forbidden: User "nobody" cannot list resource "namespaces" in API group "" at the cluster scope',
        );
      } finally {
        nobody.close();
      }
    });

    it("stop() ends both processes and removes the working directory", async () => {
      const other = await startControlPlane();
      assert.ok(await answers(other.url));
      await other.stop();
      await gone([other.url, `${other.etcdUrl}/health`], other.dir, 1000);
    });

    it("leaves nothing behind when the process that started it is killed (SIGKILL)", async () => {
      const script = [
        `import { startControlPlane } from ${JSON.stringify(join(repoRoot, "dist/test/support/kube/control-plane.js"))};`,
        "const p = await startControlPlane();",
        "console.log(JSON.stringify({ url: p.url, etcd: p.etcdUrl, dir: p.dir }));",
        "setInterval(() => {}, 1000);",
      ].join("\n");
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      while (!out.includes("\n")) {
        if (child.exitCode !== null) assert.fail(`the starter exited: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const started = JSON.parse(out) as { url: string; etcd: string; dir: string };
      assert.ok(await answers(started.url));
      child.kill("SIGKILL");
      await gone([started.url, `${started.etcd}/health`], started.dir);
    });
  },
);
