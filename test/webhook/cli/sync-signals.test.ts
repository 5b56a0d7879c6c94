// `vgate sync` as a process on SIGTERM, with a reconcile in flight (an expression that spins until
// the sandbox's deadline kills it): the first signal lets that reconcile finish and then exits 0;
// a second signal exits at once with status 1. The shared cluster plays both clusters.

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { until } from "../../support/until.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const SPIN = `sync:
  toHost:
    endpoints:
      enabled: true
      patches:
        - path: metadata.annotations.spin
          expression: '(() => { while (true) {} })()'
`;

interface Run {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

(HAVE_KUBE ? describe : describe.skip)(`vgate sync signals${KUBE_SKIP_REASON}`, function () {
  this.timeout(120_000);
  let cluster: VgateCluster;
  let dir: string;
  const suffix = randomBytes(3).toString("hex");
  const virtualNs = `sig-v-${suffix}`;
  const hostNs = `sig-h-${suffix}`;
  const runs: Run[] = [];

  function start(vc: string, patchTimeout: string): Run {
    const child = spawn(
      bin,
      [
        "sync",
        `--config=${join(dir, "vcluster.yaml")}`,
        `--virtual-kubeconfig=${cluster.kubeconfigPath}`,
        `--host-kubeconfig=${cluster.kubeconfigPath}`,
        `--vcluster-name=${vc}`,
        `--vcluster-namespace=${hostNs}`,
        "--leader-elect=false",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
        `--patch-timeout=${patchTimeout}`,
        "--patch-workers=1",
        "--shutdown-timeout=50s",
        "--log-level=debug",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const run = {
      child,
      out: () => out,
      exited: new Promise<number | null>((r) => child.on("exit", (code) => r(code))),
    };
    runs.push(run);
    return run;
  }

  /** A selector-less Service and Endpoints whose annotation makes the expression spin. */
  async function spinning(name: string): Promise<void> {
    const meta = { name, namespace: virtualNs };
    await cluster.admin.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: meta,
      spec: { ports: [{ port: 80 }], clusterIP: "None" },
    } as KubeObject);
    await cluster.admin.create({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { ...meta, annotations: { spin: "x" } },
      subsets: [{ addresses: [{ ip: "10.3.0.1" }], ports: [{ port: 80 }] }],
    } as KubeObject);
  }

  /** Deletes what spinning(name) made, and waits until the Endpoints are gone. */
  async function removeSpinning(name: string): Promise<void> {
    const meta = { name, namespace: virtualNs };
    for (const kind of ["Endpoints", "Service"]) {
      await cluster.admin.delete({ apiVersion: "v1", kind, metadata: meta } as KubeObject);
    }
    await until(
      async () =>
        (await cluster.admin.request("GET", `/api/v1/namespaces/${virtualNs}/endpoints/${name}`))
          .status === 404,
      `endpoints ${name} deleted`,
    );
  }

  /**
   * Waits for the reconcile of `name` to start. Generous (the machine may be busy with other test
   * files); a process that exits first fails at once, and a failure shows what it printed.
   */
  async function reconciling(run: Run, name: string): Promise<void> {
    let exited: number | null | undefined;
    void run.exited.then((code) => (exited = code));
    try {
      await until(
        () => {
          assert.equal(
            exited,
            undefined,
            `vgate sync exited (${exited}) before reconciling ${name}`,
          );
          return run.out().includes(`"endpoints":"${virtualNs}/${name}","msg":"reconciling"`);
        },
        `a reconcile of ${name} in flight`,
        45_000,
      );
    } catch (err) {
      (err as Error).message += `\nvgate sync printed:\n${run.out().slice(-4000)}`;
      throw err;
    }
  }

  before(async () => {
    cluster = await sharedCluster();
    dir = mkdtempSync(join(tmpdir(), "vgate-sync-signals-"));
    writeFileSync(join(dir, "vcluster.yaml"), SPIN);
    for (const name of [virtualNs, hostNs]) {
      await cluster.admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    }
  });

  after(async () => {
    for (const run of runs) run.child.kill("SIGKILL");
    for (const name of [virtualNs, hostNs]) {
      await cluster?.admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("SIGTERM lets the reconcile in flight finish, then exits 0", async () => {
    const run = start(`sig-a-${suffix}`, "3s");
    await spinning("graceful");
    await reconciling(run, "graceful");
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 0, run.out());
    const out = run.out();
    const failed = out.indexOf(
      `"endpoints":"${virtualNs}/graceful"`,
      out.indexOf('"msg":"received signal; shutting down"'),
    );
    assert.ok(failed > 0, `the reconcile in flight finished after the signal:\n${out}`);
    assert.ok(out.indexOf('"msg":"stopped"') > failed, out);
    // The next test's vgate sync runs one reconcile at a time (--patch-workers=1); left here, this
    // Endpoints would spin first for the whole 60 s deadline and hold up the one it waits for.
    await removeSpinning("graceful");
  });

  it("a second signal exits at once with status 1", async () => {
    const run = start(`sig-b-${suffix}`, "60s");
    await spinning("hurried");
    await reconciling(run, "hurried");
    run.child.kill("SIGTERM");
    await until(() => run.out().includes("received signal; shutting down"), "the first signal");
    const waited = await Promise.race([
      run.exited.then(() => "exited"),
      new Promise((r) => setTimeout(() => r("running"), 500)),
    ]);
    assert.equal(waited, "running", "still waiting for the reconcile in flight");
    run.child.kill("SIGTERM");
    assert.equal(await run.exited, 1, run.out());
    assert.match(run.out(), /"msg":"second signal: exiting at once"/);
  });
});
