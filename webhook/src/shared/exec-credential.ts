// A kubeconfig user's exec credential plugin (client.authentication.k8s.io ExecCredential), run as
// client-node's ExecAuth runs it: the command with its args and env, stdout read as the
// ExecCredential, whose status gives a bearer token and/or a client certificate and key. An
// answer with status.expirationTimestamp is reused until then; one without it, never.

import type https from "node:https";
import type { User } from "@kubernetes/client-node";

interface ExecConfig {
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[];
}

interface ExecCredential {
  status: {
    token?: string;
    clientCertificateData?: string;
    clientKeyData?: string;
    expirationTimestamp?: string;
  };
}

type Provider = { name?: unknown; config?: { exec?: ExecConfig } } | null | undefined;

export class ExecCredentialAuth {
  private readonly cache = new Map<string, ExecCredential>();

  /** `user.exec`, or an auth provider named exec or configured with one (client-node's rule). */
  isAuthProvider(user: User): boolean {
    if (user.exec) return true;
    const provider = user.authProvider as Provider;
    if (!provider) return false;
    return provider.name === "exec" || Boolean(provider.config?.exec);
  }

  async applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    const credential = await this.credential(user);
    if (!credential) return;
    const { token, clientCertificateData, clientKeyData } = credential.status;
    if (clientCertificateData) opts.cert = clientCertificateData;
    if (clientKeyData) opts.key = clientKeyData;
    if (token)
      ((opts.headers ??= {}) as Record<string, string>)["Authorization"] = `Bearer ${token}`;
  }

  private async credential(user: User): Promise<ExecCredential | null> {
    const cached = this.cache.get(user.name);
    if (cached) {
      if (Date.parse(cached.status.expirationTimestamp ?? "") > Date.now()) return cached;
      this.cache.delete(user.name);
    }
    const exec = ((user.exec as ExecConfig | undefined) ??
      (user.authProvider as Provider)?.config?.exec) as ExecConfig | undefined;
    if (!exec) return null;
    if (!exec.command) throw new Error("No command was specified for exec authProvider!");
    const env = exec.env
      ? { ...process.env, ...Object.fromEntries(exec.env.map((e) => [e.name, e.value])) }
      : undefined;
    const credential = await run(exec.command, exec.args ?? [], env);
    this.cache.set(user.name, credential);
    return credential;
  }
}

/**
 * The command's stdout as JSON; its stderr as the error when it exits with a failure. child_process
 * is loaded here, when a kubeconfig has an exec plugin: kubectl accesskey's other calls skip it.
 */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv | undefined) {
  const { spawn } = await import("node:child_process");
  return new Promise<ExecCredential>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let failed: Error | undefined;
    const child = spawn(command, args, env ? { env } : {});
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", (err) => (failed = err));
    child.on("close", (code) => {
      if (failed) return reject(failed);
      if (code !== 0) return reject(new Error(stderr));
      try {
        resolve(JSON.parse(stdout) as ExecCredential);
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}
