// The virtual cluster's half of vgate's Endpoints webhook (reverseExpressions), installed as
// manifests/README.md says, command for command, from the folder the README's install ran in.

import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { repoFile } from "../fixtures.js";
import { bash, type VgateInstall } from "../node/vgate-install.js";
import { readmeBlock } from "../readme-blocks.js";

export const VIRTUAL_WEBHOOK_FIRST_LINE =
  "# In the virtual cluster: the webhook for reverseExpressions";

/**
 * Runs manifests/README.md's block with `virtual.kubeconfig` the virtual cluster's admin; for the
 * `patches` component on its own virtual-cluster.yaml, as that README's section says.
 */
export async function installVirtualWebhook(
  install: VgateInstall,
  virtualKubeconfig: string,
  component: "endpoints" | "patches" = "endpoints",
): Promise<void> {
  symlinkSync(virtualKubeconfig, join(install.workDir, "virtual.kubeconfig"));
  let block = readmeBlock(repoFile("manifests/README.md"), VIRTUAL_WEBHOOK_FIRST_LINE).join("\n");
  const file = "manifests/overlays/endpoints/virtual-cluster.yaml";
  if (!block.includes(file)) throw new Error(`the virtual webhook's block names no ${file}`);
  block = block.replace(file, `manifests/overlays/${component}/virtual-cluster.yaml`);
  await bash(block, install.workDir, install.env);
}
