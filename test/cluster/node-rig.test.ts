// The node rig itself: it runs pods on a real node, keeps every component inside its own network
// namespace, and leaves the host as it found it, whether stopped or killed.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import {
  diffHostState,
  hostState,
  rigProcesses,
  type HostState,
} from "../support/node/host-state.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import { NODE_BINARIES } from "../support/node/prerequisites.js";
import { until } from "../support/until.js";

const run = promisify(execFile);
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "../support/node/rig-child.js");

/** Listening sockets in the host's own network namespace, with the PIDs that hold them. */
async function hostListeners(): Promise<{ address: string; pids: number[] }[]> {
  const { stdout } = await run("ss", ["-Hltunp"]);
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => ({
      address: l.trim().split(/\s+/)[4] ?? "",
      pids: [...l.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])),
    }));
}

(HAVE_NODE ? describe : describe.skip)(`node rig${NODE_SKIP_REASON}`, function () {
  this.timeout(240_000);
  let hostBefore: HostState;
  let rig: NodeRig;
  let netnsInode: number;

  before(async () => {
    hostBefore = await hostState();
    const images = nodeImages();
    rig = await startNodeRig({ pause: images.pause, images: [images.test] });
    netnsInode = rig.netnsInode;
  });
  after(async () => rig?.stop());

  it("runs a Deployment on the node whose Service's ClusterIP answers from the host", async () => {
    const image = nodeImages().test.ref;
    const manifest = {
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web", namespace: "default" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: {
                containers: [
                  {
                    name: "httpd",
                    image,
                    imagePullPolicy: "Never",
                    command: [
                      "sh",
                      "-c",
                      'mkdir -p /www && echo "$HOSTNAME" > /www/index.html && exec httpd -f -p 8080 -h /www',
                    ],
                    readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
                  },
                ],
              },
            },
          },
        },
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "web", namespace: "default" },
          spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      ],
    };
    const apply = await rig.kubectl(["apply", "-f", "-"], { input: JSON.stringify(manifest) });
    assert.equal(apply.code, 0, apply.stderr);
    const rollout = await rig.kubectl(["rollout", "status", "deployment/web", "--timeout=120s"]);
    assert.equal(
      rollout.code,
      0,
      `${rollout.stdout}${rollout.stderr}\n${await rig.logTail("kubelet")}`,
    );
    const ip = (await rig.kubectl(["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"]))
      .stdout;
    const pods = (
      await rig.kubectl([
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[*].metadata.name}",
      ])
    ).stdout.split(" ");
    // kube-proxy programs the Service a moment after the pods are ready, and then balances at
    // random: both pods answer within a few dozen requests.
    const seen = new Set<string>();
    await until(
      async () => {
        const { stdout } = await run("curl", ["-sf", "--max-time", "5", `http://${ip}/`]).catch(
          () => ({ stdout: "" }),
        );
        if (stdout.trim()) seen.add(stdout.trim());
        return seen.size === 2;
      },
      `both pods answering through ${ip} (seen: ${[...seen].join(", ")})`,
      60_000,
    );
    assert.deepEqual([...seen].sort(), [...pods].sort());
  });

  it("keeps every component in its network namespace, with no route out and nothing listening on the host", async () => {
    const procs = rigProcesses({ dir: rig.dir, netnsInode, cgroup: "/nonexistent" });
    const components = [...NODE_BINARIES, "containerd"];
    for (const c of components) {
      const line = procs.find((l) => l.split(" ")[1]?.endsWith(`/${c}`) || l.split(" ")[1] === c);
      assert.ok(line, `${c} runs in the rig's namespace (rig processes: ${procs.join("; ")})`);
    }
    const { stdout: routes } = await rig.inNetns("ip", ["-4", "route", "show", "table", "all"]);
    assert.ok(!/^default/m.test(routes), `no default route in the namespace:\n${routes}`);
    const { stderr } = await rig
      .inNetns("ip", ["route", "get", "192.0.2.1"])
      .catch((e: { stderr: string }) => e);
    assert.match(stderr ?? "", /unreachable/i, "an address outside the rig has no route");
    const rigPids = new Set(procs.map((l) => Number(l.split(" ")[0])));
    const onHost = (await hostListeners()).filter((l) => l.pids.some((p) => rigPids.has(p)));
    assert.deepEqual(onHost, [], "nothing the rig started listens in the host's namespace");
    assert.ok(
      (await rig.inNetns("ss", ["-Hltn"])).stdout.includes(`${rig.nodeIp}:10250`),
      "the kubelet listens in the rig's namespace (so the check above sees sockets)",
    );
  });

  it("leaves interfaces, routes, iptables rules, mounts, sysctls, cgroups and processes as they were when stopped", async () => {
    const dir = rig.dir;
    await rig.stop();
    assert.deepEqual(diffHostState(hostBefore, await hostState()), []);
    assert.deepEqual(rigProcesses({ dir, netnsInode, cgroup: "/vgate-rig-" }), []);
    assert.equal(existsSync(dir), false, "the rig's directory is gone");
  });
});

(HAVE_NODE ? describe : describe.skip)(`node rig, killed${NODE_SKIP_REASON}`, function () {
  this.timeout(240_000);

  it("leaves the host as it was when the test run that started it is SIGKILLed", async () => {
    const before = await hostState();
    const child = spawn(process.execPath, [CHILD], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    await until(() => out.includes("\n") || child.exitCode !== null, "the child's rig up", 180_000);
    assert.equal(child.exitCode, null, `the child exited: ${err}`);
    const info = JSON.parse(out.trim()) as { dir: string; netnsInode: number; cgroup: string };
    assert.ok(rigProcesses(info).length > 5, "the rig runs");
    child.kill("SIGKILL");
    await until(
      () => !existsSync(info.dir) && rigProcesses(info).length === 0,
      `the keeper's teardown (the child's stderr: ${err})`,
      120_000,
    );
    assert.deepEqual(diffHostState(before, await hostState()), [], `the child's stderr: ${err}`);
  });
});
