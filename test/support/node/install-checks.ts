// What the cluster tier checks on an installed vgate, whichever way it was installed (the README's
// kustomize block, or the Helm chart): the replicas Ready through their probes and running the
// expected image, kube-apiserver reaching the admission webhooks through the Service, and a key
// logging in through the token and authorization webhooks, and the docs' credentials and
// troubleshooting blocks showing what they promise.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { docBlock, runPromisedBlock } from "../readme-blocks.js";
import type { RigImage } from "./images.js";
import type { NodeRig } from "./node-rig.js";
import { bash, tokenKubeconfig, type VgateInstall } from "./vgate-install.js";

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: {
    containers: { livenessProbe?: unknown; readinessProbe?: unknown; startupProbe?: unknown }[];
  };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; imageID: string; image: string }[];
  };
}

/** Exactly `replicas` vgate pods, each Running, Ready through its probes, never restarted, on `image`. */
export async function assertReplicasReady(
  rig: NodeRig,
  image: RigImage,
  replicas: number,
): Promise<void> {
  const pods = JSON.parse(
    (
      await rig.kubectl([
        "-n",
        "vgate-system",
        "get",
        "pods",
        "-l",
        "app.kubernetes.io/name=vgate,app.kubernetes.io/component=webhook",
        "-o",
        "json",
      ])
    ).stdout,
  ) as { items: Pod[] };
  const live = pods.items.filter((p) => !p.metadata.deletionTimestamp);
  assert.equal(live.length, replicas, `${replicas} replicas`);
  for (const pod of live) {
    const c = pod.spec.containers[0]!;
    assert.ok(c.startupProbe && c.readinessProbe && c.livenessProbe, "the Deployment's probes");
    assert.equal(pod.status.phase, "Running");
    assert.ok(pod.status.conditions?.some((x) => x.type === "Ready" && x.status === "True"));
    const s = pod.status.containerStatuses![0]!;
    assert.equal(s.ready, true);
    assert.equal(s.restartCount, 0, `${pod.metadata.name} never restarted`);
    assert.equal(s.image, image.ref, "the image the install names");
  }
}

/** kube-apiserver calls both admission webhooks through the Service, and vgate answers. */
export async function assertAdmissionThroughService(rig: NodeRig, workDir: string): Promise<void> {
  // Only vgate refuses an OwnedAccessKey without spec.key when keys are stored hashed.
  const keyless = {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name: "keyless" },
    spec: { user: "alice", type: "User" },
  };
  const r = await rig.kubectl(["create", "--dry-run=server", "-f", "-"], {
    input: JSON.stringify(keyless),
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /spec\.key: Required value: vgate stores keys hashed/);
  const ok = await rig.kubectl([
    "create",
    "--dry-run=server",
    "-f",
    join(workDir, "webhook/examples/webhook-check.yaml"),
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /created \(server dry run\)/);
}

/** Creates the key `name` for `user` with the plugin; a kubeconfig that logs in with it alone. */
export async function createKeyLogin(
  rig: NodeRig,
  install: Pick<VgateInstall, "workDir" | "env">,
  name: string,
  user: string,
): Promise<string> {
  const key = (
    await bash(
      `kubectl accesskey create ${name} --user ${user} --ttl 1h`,
      install.workDir,
      install.env,
    )
  ).trim();
  assert.ok(key.length >= 32, "the plugin printed the key");
  return tokenKubeconfig(rig, key, name);
}

/** `kubectl auth whoami` with `kubeconfig` names `user`. */
export async function assertLogsInAs(
  install: Pick<VgateInstall, "workDir" | "env">,
  kubeconfig: string,
  user: string,
): Promise<void> {
  const who = await bash(
    `kubectl --kubeconfig ${kubeconfig} auth whoami -o jsonpath='{.status.userInfo.username}'`,
    install.workDir,
    install.env,
  ).catch(async (err: Error) => {
    err.message += `\n${await loginDiagnostics(install)}`;
    throw err;
  });
  assert.equal(who.trim(), user);
}

/**
 * Why a login may have failed, without the key: the token path's answer to an unknown token
 * (vgate's "invalid access key" means the path works and the key was not found), and the tail of
 * every vgate replica's log.
 */
async function loginDiagnostics(install: Pick<VgateInstall, "workDir" | "env">): Promise<string> {
  const tail = (script: string) =>
    bash(`${script} 2>&1 || true`, install.workDir, install.env).catch((e: Error) => e.message);
  const probe = {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token: `diagnostics-${randomBytes(16).toString("hex")}` },
  };
  const review = await tail(
    `echo '${JSON.stringify(probe)}' | kubectl create -f - -o jsonpath='{.status.error}'`,
  );
  const logs = await tail(
    "kubectl -n vgate-system logs -l app.kubernetes.io/name=vgate --prefix --tail=30",
  );
  return `an unknown token's TokenReview: ${review}\nvgate's logs:\n${logs}`;
}

/**
 * A key logs in through the token and authorization webhooks, is refused once disabled, and a
 * garbage token is nobody.
 */
export async function assertKeyLogin(
  rig: NodeRig,
  install: Pick<VgateInstall, "workDir" | "env">,
  name: string,
): Promise<void> {
  const kubeconfig = await createKeyLogin(rig, install, name, "ci-bot");
  await assertLogsInAs(install, kubeconfig, "ci-bot");
  await bash(`kubectl accesskey disable ${name}`, install.workDir, install.env);
  const denied = await bash(
    `kubectl --kubeconfig ${kubeconfig} get pods -n default 2>&1 || true`,
    install.workDir,
    install.env,
  );
  assert.match(denied, /access key disabled|Unauthorized/);
  const stranger = tokenKubeconfig(rig, "not-a-key-".repeat(4), `${name}-stranger`);
  const s = await bash(
    `kubectl --kubeconfig ${stranger} get pods 2>&1 || true`,
    install.workDir,
    install.env,
  );
  assert.match(s, /Unauthorized/);
}

/** The docs' credentials block, run as written, shows what its comments promise. */
export async function assertCredentialsBlock(
  rig: NodeRig,
  install: Pick<VgateInstall, "env">,
): Promise<void> {
  const dir = mkdtempSync(join(rig.dir, "credentials-"));
  await runPromisedBlock(docBlock("kubectl create namespace web-prod"), dir, {
    ...install.env,
    HOME: dir,
  });
}

/** The docs' troubleshooting block answers healthy, and vgate's metrics reach the API server. */
export async function assertTroubleshootingBlock(
  install: Pick<VgateInstall, "workDir" | "env">,
): Promise<void> {
  const lines = docBlock("# Are vgate's pods up?").filter((l) => !l.startsWith("#"));
  for (const line of lines) {
    await bash(line, install.workDir, install.env);
  }
  const metrics = await bash(
    "kubectl get --raw /api/v1/namespaces/vgate-system/services/https:vgate:443/proxy/metrics",
    install.workDir,
    install.env,
  );
  assert.match(metrics, /^vgate_/m, "vgate's metrics through the API server's service proxy");
}
