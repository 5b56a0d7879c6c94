// A kubeconfig for CI that logs in with an access key: the server and CA of the current context,
// the key as bearer token (the documented "static kubeconfig" of an access key).

import { readFileSync } from "node:fs";
import { CliError } from "../cli/errors.js";
import type { Connection } from "../kube/connect.js";
import { fileProblem } from "./secret-file.js";

export async function keyKubeconfig(
  connection: Connection,
  name: string,
  key: string,
): Promise<string> {
  const cluster = connection.config.getCurrentCluster();
  const clusterLines = [`    server: ${JSON.stringify(connection.server)}`];
  const ca = cluster?.caFile ? readCa(cluster.caFile) : cluster?.caData;
  if (ca) clusterLines.push(`    certificate-authority-data: ${ca}`);
  if (cluster?.skipTLSVerify) clusterLines.push("    insecure-skip-tls-verify: true");
  if (cluster?.tlsServerName)
    clusterLines.push(`    tls-server-name: ${JSON.stringify(cluster.tlsServerName)}`);
  if (cluster?.proxyUrl) clusterLines.push(`    proxy-url: ${JSON.stringify(cluster.proxyUrl)}`);
  const n = JSON.stringify(name);
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${n}`,
    "  cluster:",
    ...clusterLines,
    "contexts:",
    `- name: ${n}`,
    "  context:",
    `    cluster: ${n}`,
    `    user: ${n}`,
    `current-context: ${n}`,
    "preferences: {}",
    "users:",
    `- name: ${n}`,
    "  user:",
    `    token: ${JSON.stringify(key)}`,
    "",
  ].join("\n");
}

function readCa(file: string): string {
  try {
    return readFileSync(file).toString("base64");
  } catch (err) {
    throw new CliError(
      `cannot read the certificate-authority file ${JSON.stringify(file)} of the kubeconfig: ${fileProblem(err)}`,
    );
  }
}
