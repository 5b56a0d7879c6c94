// The client kube-apiserver builds for its authentication and authorization webhooks from a
// kubeconfig-format file (--authentication-token-webhook-config-file,
// --authorization-webhook-config-file): `clusters[].cluster` is the remote service (server URL and
// its CA), `users[].user` is how the API server identifies itself to it (client certificate or
// token). The current context picks them; without one, the first cluster and user are used.

import { readFileSync } from "node:fs";
import https from "node:https";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "yaml";

export interface WebhookClientConfig {
  url: URL;
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  insecureSkipTlsVerify: boolean;
}

export interface WebhookAnswer {
  status: number;
  body: unknown;
}

type Dict = Record<string, unknown>;

/** Reads a webhook kubeconfig as clientcmd does; file paths are relative to the file itself. */
export function loadWebhookConfig(path: string): WebhookClientConfig {
  const doc = asDict(parse(readFileSync(path, "utf8")));
  const base = dirname(path);
  const context = pickContext(doc);
  const cluster = asDict(named(doc["clusters"], context.cluster)?.["cluster"]);
  const user = asDict(named(doc["users"], context.user)?.["user"]);
  const server = str(cluster["server"]);
  if (!server) throw new Error(`${path}: invalid configuration: no server found for cluster`);
  const config: WebhookClientConfig = {
    url: new URL(server),
    insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
  };
  const ca = inlineOrFile(cluster, "certificate-authority", base);
  const cert = inlineOrFile(user, "client-certificate", base);
  const key = inlineOrFile(user, "client-key", base);
  const token = str(user["token"]) || fileText(str(user["tokenFile"]), base)?.trim();
  if (ca) config.ca = ca;
  if (cert) config.cert = cert;
  if (key) config.key = key;
  if (token) config.token = token;
  return config;
}

/** POSTs a JSON review to the webhook and returns its status and parsed JSON body. */
export function postReview(
  config: WebhookClientConfig,
  body: unknown,
  timeoutMs = 30_000,
): Promise<WebhookAnswer> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json",
  };
  if (config.token) headers["Authorization"] = `Bearer ${config.token}`;
  const options: https.RequestOptions = {
    method: "POST",
    headers,
    rejectUnauthorized: !config.insecureSkipTlsVerify,
    timeout: timeoutMs,
  };
  if (config.ca) options.ca = config.ca;
  if (config.cert) options.cert = config.cert;
  if (config.key) options.key = config.key;
  return new Promise((resolvePost, reject) => {
    const req = https.request(config.url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        try {
          resolvePost({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as unknown) : {},
          });
        } catch {
          reject(new Error(`webhook answered ${res.statusCode ?? 0} with a body that is not JSON`));
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error("context deadline exceeded")));
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

function pickContext(doc: Dict): { cluster: string; user: string } {
  const current = str(doc["current-context"]);
  const ctx = current ? asDict(named(doc["contexts"], current)?.["context"]) : {};
  return { cluster: str(ctx["cluster"]), user: str(ctx["user"]) };
}

/** The entry called `name` of a kubeconfig list, or its first entry when no name is asked for. */
function named(list: unknown, name: string): Dict | undefined {
  if (!Array.isArray(list)) return undefined;
  const entries = list.map(asDict);
  return name ? entries.find((e) => e["name"] === name) : entries[0];
}

/** `<field>-data` (base64) wins over `<field>` (a file path), as in clientcmd. */
function inlineOrFile(section: Dict, field: string, base: string): string | undefined {
  const data = str(section[`${field}-data`]);
  if (data) return Buffer.from(data, "base64").toString();
  return fileText(str(section[field]), base);
}

function fileText(path: string, base: string): string | undefined {
  if (!path) return undefined;
  return readFileSync(isAbsolute(path) ? path : resolve(base, path), "utf8");
}

function asDict(value: unknown): Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Dict)
    : {};
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");
