// A kubeconfig and the connection settings it gives: what vgate needs from client-node's
// KubeConfig, without loading it. client-node's package entry (and config.js itself) imports the
// generated API clients, which cost about 70 MB of resident memory and 28 MB of live heap; a
// webhook pays for that heap on every major GC. The entries are read by kubeconfig-entries.ts,
// exec plugins run by exec-credential.ts and token files (what the webhook uses in a pod) read by
// TokenFileAuth below; only the legacy Azure, GCP and OIDC auth providers load client-node's
// public KubeConfig. All of it is applied the way KubeConfig.applyToHTTPSOptions does.

import { readFileSync } from "node:fs";
import { cannotRead } from "./file-error.js";
import http from "node:http";
import type https from "node:https";
import { isAbsolute, join } from "node:path";
import type { Cluster, Context, KubeConfig, User } from "@kubernetes/client-node";
import { parseKubeconfigText } from "./kubeconfig-document.js";
import { clustersOf, contextsOf, usersOf } from "./kubeconfig-entries.js";
import { ExecCredentialAuth } from "./exec-credential.js";

export type { Cluster, Context, User };

/** What client-node's authenticators do (its auth.ts Authenticator), as this file uses them. */
interface Authenticator {
  isAuthProvider(user: User): boolean;
  applyAuthentication(user: User, opts: https.RequestOptions): Promise<void>;
}

export class ClientConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext = "";
  private readonly exec = new ExecCredentialAuth();
  private readonly tokenFile = new TokenFileAuth();
  private readonly legacy = new LegacyAuthProvider();

  /**
   * Parses kubeconfig YAML (or JSON) with client-node's rules for each entry. A text that is not
   * usable throws KubeconfigContentError, which says where, never what the text holds.
   */
  loadFromString(text: string): void {
    // kubectl reads kubeconfig as YAML 1.1 (go-yaml), so `yes` and `no` are booleans there too.
    const obj = parseKubeconfigText(text);
    this.clusters = clustersOf(obj["clusters"]);
    this.contexts = contextsOf(obj["contexts"]);
    this.users = usersOf(obj["users"]);
    const current = obj["current-context"];
    this.currentContext = typeof current === "string" ? current : "";
  }

  /** One cluster and one user, as the current context (client-node's loadFromClusterAndUser). */
  loadFromClusterAndUser(cluster: Cluster, user: User): void {
    this.clusters = [cluster];
    this.users = [user];
    this.currentContext = "loaded-context";
    this.contexts = [{ name: this.currentContext, cluster: cluster.name, user: user.name }];
  }

  /** File references relative to the kubeconfig's directory, as kubectl resolves them. */
  makePathsAbsolute(dir: string): void {
    const abs = (file: string | undefined) => (file && !isAbsolute(file) ? join(dir, file) : file);
    for (const c of this.clusters) c.caFile = abs(c.caFile);
    for (const u of this.users) {
      u.certFile = abs(u.certFile);
      u.keyFile = abs(u.keyFile);
    }
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  getContextObject(name: string): Context | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }

  getCurrentCluster(): Cluster | null {
    const ctx = this.getContextObject(this.currentContext);
    return (ctx && this.clusters.find((c) => c.name === ctx.cluster)) ?? null;
  }

  getCurrentUser(): User | null {
    const ctx = this.getContextObject(this.currentContext);
    return (ctx && this.users.find((u) => u.name === ctx.user)) ?? null;
  }

  /**
   * TLS material, auth headers and (for a proxy-url) an agent for the current context, as
   * client-node's KubeConfig.applyToHTTPSOptions sets them. Exec plugins and token files are asked
   * on every call (they cache what they may).
   */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    // The cluster's TLS settings hold without a user too (an anonymous context, or --server and
    // --insecure-skip-tls-verify alone), as in client-go.
    applyTls(opts, cluster, user);
    if (user) {
      await this.applyAuthorization(opts, user);
      if (user.username) opts.auth = `${user.username}:${user.password ?? ""}`;
    }
    if (cluster?.proxyUrl) opts.agent = await proxyAgent(cluster, opts);
  }

  private async applyAuthorization(opts: https.RequestOptions, user: User): Promise<void> {
    const headers = (opts.headers ??= {}) as Record<string, string>;
    if (user.impersonateUser) headers["Impersonate-User"] = user.impersonateUser;
    if (user.exec || user.authProvider) {
      await this.authenticator(user)?.applyAuthentication(user, opts);
    }
    if (user.token) headers["Authorization"] = `Bearer ${user.token}`;
  }

  /**
   * The authenticator for a user, in client-node's order: Azure, GCP, exec, token file, OIDC. Exec
   * plugins and token files are ours; the legacy auth providers go through client-node's public
   * KubeConfig, loaded only for a user that names one.
   */
  private authenticator(user: User): Authenticator | undefined {
    const name = (user.authProvider as { name?: unknown } | null | undefined)?.name;
    if (name === "azure" || name === "gcp") return this.legacy;
    if (this.exec.isAuthProvider(user)) return this.exec;
    if (this.tokenFile.isAuthProvider(user)) return this.tokenFile;
    if (name === "oidc") return this.legacy;
    return undefined;
  }
}

/**
 * The token of `authProvider.config.tokenFile`, read again when a minute old, as client-go and
 * client-node's FileAuth do: a projected service-account token rotates under us.
 */
class TokenFileAuth implements Authenticator {
  private token: string | null = null;
  private readAt = 0;

  isAuthProvider(user: User): boolean {
    return Boolean(
      (user.authProvider as { config?: { tokenFile?: unknown } } | null)?.config?.tokenFile,
    );
  }

  applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    const file = (user.authProvider as { config: { tokenFile: string } }).config.tokenFile;
    if (this.token === null || Date.now() - this.readAt > 60_000) {
      this.token = readFileSync(file).toString("utf-8");
      this.readAt = Date.now();
    }
    if (this.token)
      (opts.headers as Record<string, string>)["Authorization"] = `Bearer ${this.token}`;
    return Promise.resolve();
  }
}

/**
 * The Azure, GCP and OIDC auth providers (long deprecated in kubectl), through client-node's public
 * KubeConfig: its package entry costs seconds and tens of MB to load, so only a user that names
 * one of them pays for it. One KubeConfig keeps their state (refreshed tokens) between calls.
 */
class LegacyAuthProvider implements Authenticator {
  private kc: Promise<KubeConfig> | undefined;

  isAuthProvider(user: User): boolean {
    const name = (user.authProvider as { name?: unknown } | null | undefined)?.name;
    return name === "azure" || name === "gcp" || name === "oidc";
  }

  async applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    this.kc ??= import("@kubernetes/client-node").then((m) => new m.KubeConfig());
    const kc = await this.kc;
    kc.loadFromClusterAndUser(
      { name: "auth", server: "https://auth.invalid", skipTLSVerify: false },
      user,
    );
    // Only the header the provider sets: TLS and the rest are applied by ClientConfig itself.
    const scratch: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(scratch);
    const auth = (scratch.headers as Record<string, string> | undefined)?.["Authorization"];
    if (auth) (opts.headers as Record<string, string>)["Authorization"] = auth;
  }
}

function applyTls(opts: https.RequestOptions, cluster: Cluster | null, user: User | null): void {
  if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
  if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
  const ca = cluster && fileOrData(cluster.caFile, cluster.caData);
  if (ca) opts.ca = ca;
  if (!user) return;
  const cert = fileOrData(user.certFile, user.certData);
  if (cert) opts.cert = cert;
  const key = fileOrData(user.keyFile, user.keyData);
  if (key) opts.key = key;
}

/** A file wins over inline base64 data, as in client-node and client-go. */
function fileOrData(file: string | undefined, data: string | undefined): Buffer | null {
  if (file) {
    try {
      return readFileSync(file);
    } catch (err) {
      // A read error of a directory names no path; the plugin words the cause with it.
      (err as NodeJS.ErrnoException).path ??= file;
      throw new Error(cannotRead(`${JSON.stringify(file)} (named in the kubeconfig)`, err), {
        cause: err,
      });
    }
  }
  if (data) return Buffer.from(data, "base64");
  return null;
}

/** The agent for a cluster reached through proxy-url (socks5://, http:// or https:// proxies). */
async function proxyAgent(cluster: Cluster, opts: https.RequestOptions): Promise<http.Agent> {
  const proxy = cluster.proxyUrl!;
  const tls = {
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    servername: opts.servername,
    ...(opts.rejectUnauthorized === undefined
      ? {}
      : { rejectUnauthorized: opts.rejectUnauthorized }),
  };
  if (proxy.startsWith("socks")) {
    // The TLS settings for the API server travel with each request (see the transport).
    // CommonJS: through its default export, the one an ESM bundle (the kubectl plugin) keeps.
    const socks = await import("socks-proxy-agent");
    const { SocksProxyAgent } = socks.default;
    return new SocksProxyAgent(proxy, { keepAlive: true });
  }
  const { HttpProxyAgent, HttpsProxyAgent } = await import("hpagent");
  return cluster.server.startsWith("https:")
    ? new HttpsProxyAgent({ ...tls, proxy, keepAlive: true })
    : new HttpProxyAgent({ proxy, keepAlive: true });
}
