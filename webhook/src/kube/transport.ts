// HTTP to kube-apiserver with the credentials of a KubeConfig. client-node's generated clients build
// a fresh https.Agent (and TLS handshake) per call and have no per-call deadline; admission is on the
// request path of kube-apiserver, so we keep one keep-alive agent and put a deadline on every call.

import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

export interface TransportOptions {
  /** Deadline for one request, from sending to the last byte of the answer. */
  timeoutMs: number;
  /** How long computed auth headers are reused (exec and token-file credentials rotate). */
  authTtlMs?: number;
  /** Answers larger than this are cut off and reported as a failure. */
  maxBodyBytes?: number;
}

export interface KubeResponse {
  status: number;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

/** A request that got no HTTP answer: refused, reset, TLS failure, or the deadline passed. */
export class TransportError extends Error {
  override readonly name = "TransportError";
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

interface Endpoint {
  url: URL;
  agent: http.Agent;
}

interface AuthHeaders {
  headers: Record<string, string>;
  at: number;
}

const DEFAULT_AUTH_TTL_MS = 10_000;
const DEFAULT_MAX_BODY = 16 * 1024 * 1024;
const MAX_SECRETS = 16;

export class KubeTransport {
  private endpoint: Promise<Endpoint> | undefined;
  private auth: AuthHeaders | undefined;
  private readonly secrets = new Set<string>();

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: TransportOptions,
  ) {}

  /** Sends one request; resolves with any HTTP answer, rejects with TransportError otherwise. */
  async request(method: string, path: string, body?: unknown): Promise<KubeResponse> {
    let endpoint: Endpoint;
    let headers: Record<string, string>;
    try {
      endpoint = await this.connect();
      headers = await this.authHeaders();
    } catch (err) {
      throw new TransportError(`cannot use the kubeconfig: ${this.redact(errorText(err))}`, false);
    }
    const res = await this.send(endpoint, headers, method, path, body);
    // A 401 may mean the token rotated under us: compute headers afresh next time.
    if (res.status === 401) this.auth = undefined;
    return res;
  }

  /** Replaces every credential we send with a placeholder, for error messages. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("<redacted>");
    return out;
  }

  close(): void {
    void this.endpoint?.then((e) => e.agent.destroy()).catch(() => undefined);
    this.endpoint = undefined;
  }

  private connect(): Promise<Endpoint> {
    this.endpoint ??= createEndpoint(this.kc);
    const pending = this.endpoint;
    // Do not cache a failure: the CA file may appear later (e.g. a mounted secret).
    pending.catch(() => {
      if (this.endpoint === pending) this.endpoint = undefined;
    });
    return pending;
  }

  private async authHeaders(): Promise<Record<string, string>> {
    const now = Date.now();
    const ttl = this.options.authTtlMs ?? DEFAULT_AUTH_TTL_MS;
    if (this.auth && now - this.auth.at < ttl) return this.auth.headers;
    const opts: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const headers = stringHeaders(opts);
    const authorization = headers["Authorization"];
    if (authorization) this.rememberSecret(authorization);
    this.auth = { headers, at: now };
    return headers;
  }

  /** Remembers the credential (and the whole header) so redact() can remove it from messages. */
  private rememberSecret(authorization: string): void {
    const credential = authorization.replace(/^(Bearer|Basic)\s+/i, "");
    for (const secret of [authorization, credential])
      if (secret.length >= 8) this.secrets.add(secret);
    // Rotated tokens accumulate; the oldest ones no longer appear anywhere.
    for (const old of this.secrets) if (this.secrets.size > MAX_SECRETS) this.secrets.delete(old);
  }

  private send(
    endpoint: Endpoint,
    auth: Record<string, string>,
    method: string,
    path: string,
    body: unknown,
  ): Promise<KubeResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const { url, agent } = endpoint;
    const headers: Record<string, string> = { ...auth, Accept: "application/json" };
    if (payload) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    const client = url.protocol === "http:" ? http : https;
    return new Promise<KubeResponse>((resolve, reject) => {
      let timedOut = false;
      const fail = (err: Error) => {
        const message = `API server unreachable: ${this.redact(err.message)}`;
        reject(
          timedOut ? timeoutError(this.options.timeoutMs) : new TransportError(message, false),
        );
      };
      const req = client.request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: url.port,
          path: joinPath(url.pathname, path),
          method,
          agent,
          headers,
        },
        (res) => this.collect(res, resolve, fail),
      );
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(timeoutError(this.options.timeoutMs));
      }, this.options.timeoutMs);
      req.on("close", () => clearTimeout(timer));
      req.on("error", fail);
      req.end(payload);
    });
  }

  private collect(
    res: http.IncomingMessage,
    resolve: (r: KubeResponse) => void,
    fail: (e: Error) => void,
  ): void {
    const limit = this.options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    res.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) res.destroy(new Error(`answer larger than ${limit} bytes`));
      else chunks.push(chunk);
    });
    res.on("error", fail);
    res.on("end", () => {
      ended = true;
      resolve({ status: res.statusCode ?? 0, body: parseBody(Buffer.concat(chunks).toString()) });
    });
    res.on("close", () => {
      if (!ended) fail(new Error("connection closed before the answer was complete"));
    });
  }
}

async function createEndpoint(kc: KubeConfig): Promise<Endpoint> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("the current context names no cluster");
  const url = new URL(cluster.server);
  const opts: https.RequestOptions = {};
  // client-node resolves CA, client certificates, skip-verify and the proxy agent here.
  await kc.applyToHTTPSOptions(opts);
  if (cluster.proxyUrl && opts.agent instanceof http.Agent) return { url, agent: opts.agent };
  const tls: https.AgentOptions = {
    keepAlive: true,
    maxSockets: 64,
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    pfx: opts.pfx,
    passphrase: opts.passphrase,
    servername: opts.servername,
  };
  if (opts.rejectUnauthorized !== undefined) tls.rejectUnauthorized = opts.rejectUnauthorized;
  const agent =
    url.protocol === "http:" ? new http.Agent({ keepAlive: true }) : new https.Agent(tls);
  return { url, agent };
}

/** The headers client-node computed (Authorization, Impersonate-User, ...) as plain strings. */
function stringHeaders(opts: https.RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  const given = opts.headers ?? {};
  for (const [name, value] of Object.entries(given)) {
    if (typeof value === "string" || typeof value === "number") out[name] = String(value);
  }
  // Basic auth from username/password in the kubeconfig.
  if (opts.auth) out["Authorization"] = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
  return out;
}

/** The server URL may carry a path prefix (e.g. https://host/kubernetes/management). */
function joinPath(prefix: string, path: string): string {
  return prefix.replace(/\/+$/, "") + path;
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function timeoutError(ms: number): TransportError {
  return new TransportError(`API server did not answer within ${ms} ms`, true);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
