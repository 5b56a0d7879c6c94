// The virtual cluster's half of vgate's Endpoints webhook (reverseExpressions), installed as
// manifests/README.md says, command for command, from the folder the README's install ran in.

import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { repoFile } from "../fixtures.js";
import { bash, type VgateInstall } from "../node/vgate-install.js";
import { readmeBlock } from "../readme-blocks.js";

export const VIRTUAL_WEBHOOK_FIRST_LINE =
  "# In the virtual cluster: the webhook for reverseExpressions";

/** Runs manifests/README.md's block with `virtual.kubeconfig` the virtual cluster's admin. */
export async function installVirtualWebhook(
  install: VgateInstall,
  virtualKubeconfig: string,
): Promise<void> {
  symlinkSync(virtualKubeconfig, join(install.workDir, "virtual.kubeconfig"));
  const block = readmeBlock(repoFile("manifests/README.md"), VIRTUAL_WEBHOOK_FIRST_LINE);
  await bash(block.join("\n"), install.workDir, install.env);
}
