// vgate installed on the node rig with the Helm chart, as docs/helm-chart.md says: its install
// block runs as written (bash, the rig's admin kubeconfig, helm on PATH with its homes in the rig's
// folder, a working directory where manifests/, charts/ and webhook/ are this checkout's; charts/
// is a copy, so a test can put a newer chart there), with vgate's image loaded onto the node. Then
// kube-apiserver is wired to vgate's token and authorization webhooks as for the kustomize install.

import { mkdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { docBlock } from "../readme-blocks.js";
import type { RigImage } from "../node/images.js";
import type { NodeRig } from "../node/node-rig.js";
import {
  bash,
  userEnv,
  userWorkDir,
  wireAndWait,
  type Certificates,
  type VgateInstall,
} from "../node/vgate-install.js";
import { helmBinary, helmEnv } from "./helm-binary.js";

export const HELM_INSTALL_FIRST_LINE = "# Install with Helm:";
/** docs/helm-chart.md's install block with certificates.mode=certManager. */
export const HELM_CERT_MANAGER_INSTALL_FIRST_LINE = "# Install with Helm and cert-manager:";

/**
 * The environment of a user of this checkout with Helm: the rig's kubeconfig, the plugin and helm
 * on PATH, Helm's homes under `home`.
 */
export function helmUserEnv(rig: NodeRig, home: string): NodeJS.ProcessEnv {
  const bin = join(home, "bin");
  mkdirSync(bin, { recursive: true });
  try {
    symlinkSync(helmBinary(), join(bin, "helm"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const user = userEnv(rig);
  const helm = helmEnv(home, rig.adminKubeconfig);
  return {
    ...user,
    HELM_CACHE_HOME: helm["HELM_CACHE_HOME"],
    HELM_CONFIG_HOME: helm["HELM_CONFIG_HOME"],
    HELM_DATA_HOME: helm["HELM_DATA_HOME"],
    PATH: `${bin}${delimiter}${user["PATH"] ?? ""}`,
  };
}

/**
 * Installs vgate with docs/helm-chart.md's install block onto `rig`, or with
 * `certificates: "cert-manager"` its cert-manager block (cert-manager must run), and wires
 * kube-apiserver.
 */
export async function installVgateWithHelm(
  rig: NodeRig,
  image: RigImage,
  opts: { certificates?: Certificates } = {},
): Promise<VgateInstall> {
  await rig.loadImage(image);
  const workDir = userWorkDir(rig, ["charts"]);
  const env = helmUserEnv(rig, join(workDir, ".helm"));
  const first =
    opts.certificates === "cert-manager"
      ? HELM_CERT_MANAGER_INSTALL_FIRST_LINE
      : HELM_INSTALL_FIRST_LINE;
  const output = await bash(docBlock(first).join("\n"), workDir, env, 600_000);
  return { workDir, env, output, ...(await wireAndWait(rig)) };
}
