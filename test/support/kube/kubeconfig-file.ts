// A real kubeconfig file, as `kind` or `kubectl config` would write it: the server, its CA inline,
// and a bearer-token or client-certificate user.

import { writeFile } from "node:fs/promises";

export interface KubeconfigFields {
  server: string;
  caPem: string;
  /** Used for the cluster, context and user names. */
  name: string;
  /** A bearer token, or else a client certificate and key (PEM). */
  token?: string;
  client?: { cert: string; key: string };
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");

function userLines(f: KubeconfigFields): string[] {
  if (f.client) {
    return [
      `    client-certificate-data: ${b64(f.client.cert)}`,
      `    client-key-data: ${b64(f.client.key)}`,
    ];
  }
  return [`    token: ${f.token ?? ""}`];
}

export function kubeconfigYaml(f: KubeconfigFields): string {
  const ca = b64(f.caPem);
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
    ...userLines(f),
    "",
  ].join("\n");
}

export async function writeKubeconfig(path: string, fields: KubeconfigFields): Promise<string> {
  await writeFile(path, kubeconfigYaml(fields), { mode: 0o600 });
  return path;
}
