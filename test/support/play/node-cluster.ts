// `make cluster`: the node rig (a real node in a network namespace of its own) with vgate installed
// from the README (its image on the node, two replicas, the Service, certificates from `vgate
// certs`, kube-apiserver wired to vgate's token and authorization webhooks), in the foreground
// until Ctrl-C or SIGTERM, which tear everything down. Writes an admin kubeconfig to
// .cluster/kubeconfig that works from the host, and the steps of a key login (a key-only
// kubeconfig: the admin one presents a client certificate) to .cluster/key-login.sh. With --vcluster (make cluster VCLUSTER=1), vgate's
// Endpoints webhook is installed too, with webhook/examples/vcluster.yaml, and vCluster's own
// syncer runs a virtual cluster `vc` in the host namespace `vcluster-vc`, whose admin kubeconfig
// goes to .cluster/virtual.kubeconfig.
//
//   node dist/test/support/play/node-cluster.js [--dir=.cluster] [--vcluster]

import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { kubeVersions } from "../kube/binaries.js";
import { repoRoot } from "../fixtures.js";
import { keyLoginLines, writeKeyLogin } from "./key-login.js";
import { rigImages } from "../node/images.js";
import { startNodeRig } from "../node/node-rig.js";
import { nodeRigPrerequisites } from "../node/prerequisites.js";
import { installVgate } from "../node/vgate-install.js";
import { findVCluster } from "../vcluster/vcluster-binary.js";
import { startVCluster, type VClusterRig } from "../vcluster/vcluster-rig.js";
import { installVirtualWebhook } from "../vcluster/virtual-webhook.js";

const VCLUSTER_NAME = "vc";
const VCLUSTER_NAMESPACE = "vcluster-vc";

const HELP = `Usage: make cluster

Starts a single-node Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, containerd, kubelet and kube-proxy, from make kube and Debian's packages) inside a
network namespace of its own, loads the images of make images onto the node, installs vgate as the
README's install section says and wires kube-apiserver to vgate's token and authorization webhooks.
Writes an admin kubeconfig to .cluster/kubeconfig and the steps of a key login to
.cluster/key-login.sh. Ctrl-C (or SIGTERM) stops everything and leaves the host as it was. Needs
root.

With VCLUSTER=1 (--vcluster) it also installs vgate's Endpoints webhook (the endpoints component,
config webhook/examples/vcluster.yaml) and runs vCluster's own syncer (make kube builds it) for a
virtual cluster "vc" in the host namespace "vcluster-vc", with its telemetry off. The virtual
cluster's admin kubeconfig goes to .cluster/virtual.kubeconfig.

Options:
  --dir=PATH   where the kubeconfigs and key-login.sh go (default .cluster)
  --vcluster   also vCluster's syncer and vgate's Endpoints webhook
  -h, --help   show this help`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      dir: { type: "string", default: join(repoRoot, ".cluster") },
      vcluster: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const missing = nodeRigPrerequisites();
  const images = rigImages();
  if (missing || "missing" in images) {
    console.error(`error: ${missing ?? ("missing" in images ? images.missing : "")}`);
    return 2;
  }
  const vcluster = values.vcluster ? findVCluster() : undefined;
  if (vcluster && "missing" in vcluster) {
    console.error(`error: ${vcluster.missing}`);
    return 2;
  }
  const dir = resolve(values.dir);
  await mkdir(dir, { recursive: true });
  console.log(`starting a node (Kubernetes ${kubeVersions().kube}) ...`);
  const t0 = Date.now();
  let stopping = false;
  // A signal during start-up stops what has started so far once startNodeRig returns or fails.
  const signalled = new Promise<void>((r) => {
    process.once("SIGINT", r);
    process.once("SIGTERM", r);
  }).then(() => {
    stopping = true;
  });
  const rig = await startNodeRig({
    pause: images.found.pause,
    images: [images.found.test],
    log: (line) => console.log(`  ${line}`),
  });
  try {
    if (!stopping) {
      console.log("installing vgate from the README ...");
      const install = await installVgate(
        rig,
        images.found.vgate,
        vcluster
          ? {
              endpoints: {
                vclusterName: VCLUSTER_NAME,
                vclusterNamespace: VCLUSTER_NAMESPACE,
                config: await readFile(join(repoRoot, "webhook/examples/vcluster.yaml"), "utf8"),
              },
            }
          : {},
      );
      const kubeconfig = join(dir, "kubeconfig");
      await copyFile(rig.adminKubeconfig, kubeconfig);
      let vc: VClusterRig | undefined;
      if (vcluster && "found" in vcluster && !stopping) {
        console.log(`starting vCluster ${vcluster.found.version}'s syncer ...`);
        vc = await startVCluster(rig, vcluster.found, {
          name: VCLUSTER_NAME,
          hostNamespace: VCLUSTER_NAMESPACE,
          // vCluster's defaults, as in the README's webhook setup: its own config carries no
          // patches (open-source vCluster refuses them as a Pro feature; vgate's config has them).
          log: (line) => console.log(`  ${line}`),
        });
        await copyFile(vc.virtual.adminKubeconfig, join(dir, "virtual.kubeconfig"));
        console.log("installing vgate's webhook in the virtual cluster (manifests/README.md) ...");
        await installVirtualWebhook(install, vc.virtual.adminKubeconfig);
      }
      const keyLogin = keyLoginLines(dir, kubeconfig);
      const script = await writeKeyLogin(dir, keyLogin);
      const rel = (p: string) => {
        const r = relative(process.cwd(), p);
        return r && !r.startsWith("..") ? r : p;
      };
      console.log(`
ready in ${Math.round((Date.now() - t0) / 1000)} s

API server  ${rig.url}   (admin, system:masters)
node        ${rig.nodeName} ${rig.nodeIp}, network namespace ${rig.netns}
vgate       2 replicas in vgate-system, Service ClusterIP ${install.clusterIp}
logs        ${rel(join(rig.dir, "logs"))}/${
        vc
          ? `
vCluster    "${vc.name}" in ${vc.hostNamespace}: ${rel(join(dir, "virtual.kubeconfig"))} (admin)`
          : ""
      }

A key login, from the checkout (also in ${rel(script)}); the admin kubeconfig presents a client
certificate even with --token, so the key gets a kubeconfig of its own:
${keyLogin.map((l) => `  ${l}`).join("\n")}

Ctrl-C stops everything.`);
      const keepAlive = setInterval(() => {}, 1 << 30);
      await signalled;
      clearInterval(keepAlive);
    }
  } finally {
    console.log("\nstopping ...");
    await rig.stop();
    console.log("stopped; the host is as it was");
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
