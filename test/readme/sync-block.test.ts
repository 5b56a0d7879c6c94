// The README's `vgate sync` block, run as written (bash, with this checkout's vgate first on PATH)
// against the shared cluster, which plays both the virtual cluster and the host: it becomes ready
// on :8081, takes the Lease, syncs a selector-less Service's Endpoints with the example config's
// expression, serves /metrics on :8080, and stops with status 0 on SIGTERM.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { symlinkSync } from "node:fs";
import http from "node:http";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { sharedCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { KubeObject } from "../support/kube/kube-client.js";
import { until } from "../support/until.js";
import { docBlock } from "../support/readme-blocks.js";
import { testTempDir } from "../support/temp-dir.js";

const HOST_NS = "vcluster-my-vcluster";
const LEASE = "vgate-sync-my-vcluster";

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", () => resolve({ status: 0, body: "" }));
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

(HAVE_KUBE ? describe : describe.skip)(
  `README: the vgate sync block${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);

    it("syncs, serves probes and metrics on the default ports, and exits 0 on SIGTERM", async () => {
      for (const port of [8080, 8081]) {
        assert.ok(await portFree(port), `port ${port} is in use: the block uses the default ports`);
      }
      const cluster = await sharedCluster();
      const virtualNs = `readme-sync-${randomBytes(3).toString("hex")}`;
      const ns = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      await cluster.admin.create(ns(virtualNs));
      const hostNsCreated = (await cluster.admin.get(ns(HOST_NS))) === null;
      if (hostNsCreated) await cluster.admin.create(ns(HOST_NS));
      const bin = testTempDir("vgate-readme-bin-");
      symlinkSync(join(repoRoot, "webhook/bin/vgate"), join(bin, "vgate"));
      const command = docBlock("vgate sync --config").join("\n");
      const child = spawn("bash", ["-c", `exec ${command}`], {
        cwd: repoRoot,
        env: {
          ...process.env,
          PATH: `${bin}${delimiter}${process.env["PATH"] ?? ""}`,
          VIRTUAL_KUBECONFIG: cluster.kubeconfigPath,
          HOST_KUBECONFIG: cluster.kubeconfigPath,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((resolve) =>
        child.on("exit", (code) => resolve(code)),
      );
      const hostName = `db-x-${virtualNs}-x-my-vcluster`;
      try {
        // A process that exits, or never gets ready, fails with what it said.
        let readyz = "";
        try {
          await until(
            async () => {
              if (child.exitCode !== null) assert.fail(`vgate sync exited (${child.exitCode})`);
              const r = await get("http://127.0.0.1:8081/readyz");
              readyz = `${r.status} ${r.body}`;
              return r.status === 200;
            },
            "ready",
            30_000,
          );
        } catch (err) {
          assert.fail(`${(err as Error).message}; /readyz: ${readyz}; vgate sync said:\n${out}`);
        }
        await cluster.admin.create({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "db", namespace: virtualNs },
          spec: { ports: [{ port: 5432 }], clusterIP: "None" },
        } as KubeObject);
        await cluster.admin.create({
          apiVersion: "v1",
          kind: "Endpoints",
          metadata: { name: "db", namespace: virtualNs, annotations: { owner: "alice" } },
          subsets: [{ addresses: [{ ip: "10.2.0.1" }], ports: [{ port: 5432 }] }],
        } as KubeObject);
        const copy = () =>
          cluster.admin.get<KubeObject>({
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: hostName, namespace: HOST_NS },
          });
        await until(async () => (await copy()) !== null, `host Endpoints ${hostName}`, 30_000);
        const annotations = (await copy())!.metadata["annotations"] as Record<string, string>;
        assert.equal(annotations["owner"], "tenant-alice");
        const metrics = (await get("http://127.0.0.1:8080/metrics")).body;
        assert.match(
          metrics,
          new RegExp(`^leader_election_master_status\\{name="${LEASE}"\\} 1$`, "m"),
        );
        child.kill("SIGTERM");
        assert.equal(await exited, 0, out);
        assert.match(out, /"msg":"stopped"/);
        const lease = await cluster.admin.request<{ spec: { holderIdentity?: string } }>(
          "GET",
          `/apis/coordination.k8s.io/v1/namespaces/${HOST_NS}/leases/${LEASE}`,
        );
        assert.ok(!lease.body.spec.holderIdentity, "the Lease is released");
      } finally {
        child.kill("SIGKILL");
        await cluster.admin.delete(ns(virtualNs));
        if (hostNsCreated) {
          await cluster.admin.delete(ns(HOST_NS));
        } else {
          await cluster.admin.delete({
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: hostName, namespace: HOST_NS },
          });
          await cluster.admin.delete({
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: LEASE, namespace: HOST_NS },
          });
        }
      }
    });
  },
);
