// `make apiserver`: a real kube-apiserver and etcd (the test rig's, from `make kube`) with vgate
// installed from manifests/ and a real `vgate serve`, in the foreground until Ctrl-C. vgate runs
// with the Deployment's flags (keys stored as manifests/vgate-info.yaml says: hashed) and
// kube-apiserver with manifests/apiserver/ as it is (token cache TTL included), so a key behaves
// here as on an install. Writes an admin kubeconfig to .apiserver/kubeconfig, and the steps of a key
// login (a key-only kubeconfig: the admin one presents a client certificate) to
// .apiserver/key-login.sh.
//
//   node dist/test/support/playground.js [--port=6443] [--dir=.apiserver]

import { copyFile, mkdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { manifestServeFlags, manifestTokenCacheTtl, startVgateCluster } from "./cluster.js";
import { kubeVersions } from "./kube/binaries.js";
import { repoRoot } from "./fixtures.js";
import { keyLoginLines, writeKeyLogin } from "./play/key-login.js";

const HELP = `Usage: make apiserver [PORT=6443]

Starts kube-apiserver and etcd (built by make kube, or from KUBEBUILDER_ASSETS) with the
OwnedAccessKey CRD and vgate's webhooks from manifests/, and a real vgate serve behind them with
the install's flags (keys stored hashed) and kube-apiserver wired as manifests/apiserver/ says.
Writes an admin kubeconfig to .apiserver/kubeconfig, vgate's log to .apiserver/vgate.log, and the
steps of a key login to .apiserver/key-login.sh. Ctrl-C stops everything.

Options:
  --port=N    the API server's port (default 6443; 0 picks a free one)
  --dir=PATH  where the kubeconfig, vgate.log and key-login.sh go (default .apiserver)
  -h, --help  show this help`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "6443" },
      dir: { type: "string", default: join(repoRoot, ".apiserver") },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`error: --port must be a port number, got ${JSON.stringify(values.port)}`);
    return 2;
  }
  const dir = resolve(values.dir);
  await mkdir(dir, { recursive: true });
  const vgateLog = join(dir, "vgate.log");
  console.log(`starting kube-apiserver ${kubeVersions().kube}, etcd and vgate ...`);
  const cluster = await startVgateCluster({
    ...(port ? { port } : {}),
    vgateLog,
    vgateArgs: manifestServeFlags(),
    tokenCacheTtl: manifestTokenCacheTtl(),
  });
  const kubeconfig = join(dir, "kubeconfig");
  await copyFile(cluster.kubeconfigPath, kubeconfig);
  const rel = (p: string) => {
    const r = relative(process.cwd(), p);
    return r && !r.startsWith("..") ? r : p;
  };
  const keyLogin = keyLoginLines(dir, kubeconfig);
  const script = await writeKeyLogin(dir, keyLogin);
  console.log(`
API server  ${cluster.url}   (admin, system:masters)
vgate       ${cluster.vgateUrl}   (${manifestServeFlags().join(" ")}; log: ${rel(vgateLog)})

A key login, from the checkout (also in ${rel(script)}); the admin kubeconfig presents a client
certificate even with --token, so the key gets a kubeconfig of its own:
${keyLogin.map((l) => `  ${l}`).join("\n")}

Ctrl-C stops everything.`);
  // The cluster's processes hold no reference on this event loop (they must not keep a test run
  // alive), so a timer keeps the playground in the foreground until a signal.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  clearInterval(keepAlive);
  console.log("\nstopping ...");
  await cluster.stop();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
