// `make apiserver`: the API server emulator and a real `vgate serve`, wired together through the
// manifests, in the foreground until Ctrl-C. Writes an admin kubeconfig to .apiserver/kubeconfig.
//
//   node dist/test/support/playground.js [--port=6443] [--dir=.apiserver]

import { copyFile, mkdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startEmulatedCluster } from "./cluster.js";
import { repoRoot } from "./fixtures.js";

const HELP = `Usage: make apiserver [PORT=6443]

Starts the Kubernetes API server emulator with the OwnedAccessKey CRD and vgate's webhooks from
manifests/, and a real vgate serve behind them. Writes an admin kubeconfig to .apiserver/kubeconfig
and vgate's log to .apiserver/vgate.log. Ctrl-C stops both.

Options:
  --port=N    the API server's port (default 6443; 0 picks a free one)
  --dir=PATH  where the kubeconfig and vgate.log go (default .apiserver)
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
  console.log("starting the API server emulator and vgate ...");
  const cluster = await startEmulatedCluster({ ...(port ? { apiPort: port } : {}), vgateLog });
  const kubeconfig = join(dir, "kubeconfig");
  await copyFile(cluster.kubeconfigPath, kubeconfig);
  const rel = (p: string) => relative(process.cwd(), p) || p;
  console.log(`
API server  ${cluster.api.url}   (kubernetes-admin, system:masters)
vgate       ${cluster.vgateUrl}   (log: ${rel(vgateLog)})

Point kubectl at it:
  export KUBECONFIG=${kubeconfig}
  kubectl get ownedaccesskeys
  kubectl apply -f webhook/examples/ownedaccesskey.yaml
  kubectl get oak example-key -o yaml

Ctrl-C stops both.`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
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
