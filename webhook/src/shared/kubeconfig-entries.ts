// The clusters, users and contexts of a kubeconfig (as parseKubeconfigText returns it, each entry
// checked there), as the Cluster, User and Context objects client-node's KubeConfig holds: the same
// fields with the same defaults, so client-node's authenticators read them as they read its own.

import { readFileSync } from "node:fs";
import type { Cluster, Context, User } from "@kubernetes/client-node";

type Entry = Record<string, unknown>;

/** The entries of a list; client-node ignores a list that is not one. */
function entries(list: unknown): Entry[] {
  return Array.isArray(list) ? (list as Entry[]) : [];
}

/** A field of an entry's body (`cluster:`, `user:`), as the YAML gave it. */
function field<T>(body: unknown, key: string): T {
  return (body as Entry)[key] as T;
}

export function clustersOf(list: unknown): Cluster[] {
  return entries(list).map((e) => {
    const c = e["cluster"];
    return {
      caData: field(c, "certificate-authority-data"),
      caFile: field(c, "certificate-authority"),
      name: e["name"] as string,
      server: field<string>(c, "server").replace(/\/$/, ""),
      skipTLSVerify: field(c, "insecure-skip-tls-verify") === true,
      tlsServerName: field(c, "tls-server-name"),
      proxyUrl: field(c, "proxy-url"),
    };
  });
}

export function usersOf(list: unknown): User[] {
  return entries(list).map((e) => {
    const u = e["user"];
    // A user without `user:` has every field null, as in client-node.
    const get = <T>(key: string): T => (u ? field<T>(u, key) : (null as T));
    return {
      authProvider: get("auth-provider"),
      certData: get("client-certificate-data"),
      certFile: get("client-certificate"),
      exec: get("exec"),
      keyData: get("client-key-data"),
      keyFile: get("client-key"),
      name: e["name"] as string,
      token: tokenOf(u),
      password: get("password"),
      username: get("username"),
      impersonateUser: get("as"),
    };
  });
}

/** `token`, else the contents of `token-file`, read once, when the kubeconfig is loaded. */
function tokenOf(user: unknown): string | undefined {
  if (!user) return undefined;
  const token = field<string | undefined>(user, "token");
  if (token) return token;
  const file = field<string | undefined>(user, "token-file");
  return file ? readFileSync(file).toString() : undefined;
}

export function contextsOf(list: unknown): Context[] {
  return entries(list).map((e) => {
    const c = e["context"];
    return {
      cluster: field<string>(c, "cluster"),
      name: e["name"] as string,
      user: field<string>(c, "user") || (undefined as unknown as string),
      namespace: field<string>(c, "namespace") || undefined,
    };
  });
}
