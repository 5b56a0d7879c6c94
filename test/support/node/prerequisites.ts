// What the node rig needs, checked before anything starts, so that the cluster tier skips with a
// reason that says what to do instead of failing half-way.

import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { kubeCacheDir } from "../kube/binaries.js";

export const NODE_BINARIES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kube-proxy",
] as const;

/** Debian's packages and what each provides the rig. */
const HOST_TOOLS: readonly [string, string][] = [
  ["/usr/bin/containerd", "containerd"],
  ["/usr/bin/ctr", "containerd"],
  ["/usr/bin/containerd-shim-runc-v2", "containerd"],
  ["/usr/sbin/runc", "runc"],
  ["/usr/lib/cni/bridge", "containernetworking-plugins"],
  ["/usr/lib/cni/host-local", "containernetworking-plugins"],
  ["/usr/lib/cni/portmap", "containernetworking-plugins"],
  ["/usr/lib/cni/loopback", "containernetworking-plugins"],
  ["/usr/sbin/iptables", "iptables"],
  ["/usr/sbin/conntrack", "conntrack"],
  ["/usr/bin/nsenter", "util-linux"],
  ["/usr/bin/curl", "curl"],
];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Why the node rig cannot run here (what to do about it), or undefined when it can. */
export function nodeRigPrerequisites(): string | undefined {
  if (process.platform !== "linux") return "the node rig runs on Linux only";
  if (process.getuid?.() !== 0) {
    return "the node rig needs root (network namespaces, mounts, cgroups, iptables): run it as root";
  }
  const bins = kubeCacheDir();
  const noBins = NODE_BINARIES.filter((b) => !executable(join(bins, b)));
  if (noBins.length > 0) {
    return `no ${noBins.join(", ")} in ${bins}: run \`make kube\` (needs Go >= 1.26)`;
  }
  const packages = [...new Set(HOST_TOOLS.filter(([p]) => !executable(p)).map(([, pkg]) => pkg))];
  if (packages.length > 0) {
    return `missing Debian packages: run \`bash test/kube/node-setup.sh\` (apt-get install ${packages.join(" ")})`;
  }
  return undefined;
}
