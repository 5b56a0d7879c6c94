// A real kubeconfig file, as `kind` or `kubectl config` would write it: the server, its CA inline,
// and a bearer-token user.

import { writeFile } from "node:fs/promises";

export interface KubeconfigFields {
  server: string;
  caPem: string;
  token: string;
  /** Used for the cluster, context and user names. */
  name: string;
}

export function kubeconfigYaml(f: KubeconfigFields): string {
  const ca = Buffer.from(f.caPem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${f.name}`,
    "  cluster:",
    `    server: ${f.server}`,
    `    certificate-authority-data: ${ca}`,
    "contexts:",
    `- name: ${f.name}`,
    "  context:",
    `    cluster: ${f.name}`,
    `    user: ${f.name}`,
    `current-context: ${f.name}`,
    "preferences: {}",
    "users:",
    `- name: ${f.name}`,
    "  user:",
    `    token: ${f.token}`,
    "",
  ].join("\n");
}

export async function writeKubeconfig(path: string, fields: KubeconfigFields): Promise<string> {
  await writeFile(path, kubeconfigYaml(fields), { mode: 0o600 });
  return path;
}
