// HTTP to kube-apiserver with the credentials of a KubeConfig. client-node's generated clients build
// a fresh https.Agent (and TLS handshake) per call and have no per-call deadline; admission is on the
// request path of kube-apiserver, so we keep one keep-alive agent and put a deadline on every call.

import http from "node:http";
import https from "node:https";
import { StringDecoder } from "node:string_decoder";
import { TLSSocket } from "node:tls";
import type { ClientConfig as KubeConfig } from "./client-config.js";

export interface TransportOptions {
  /** Deadline for one request, from sending to the last byte of the answer. */
  timeoutMs: number;
  /** How long computed auth headers are reused (exec and token-file credentials rotate). */
  authTtlMs?: number;
  /** Answers larger than this are cut off and reported as a failure. */
  maxBodyBytes?: number;
  /**
   * Deadline for opening a TCP connection, and for its TLS handshake once connected, as Go's
   * net.Dialer Timeout and http.Transport TLSHandshakeTimeout bound them for client-go (30 s and
   * 10 s). Unset: only `timeoutMs` bounds them.
   */
  connectTimeoutMs?: number;
  tlsHandshakeTimeoutMs?: number;
}

export interface KubeResponse {
  status: number;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  /** The answer's headers (e.g. `warning`), when there was a complete answer. */
  headers?: http.IncomingHttpHeaders;
}

/** Per-request additions, for clients other than the webhook (the kubectl plugin). */
export interface RequestExtras {
  /** Instead of application/json, e.g. application/json-patch+json. */
  contentType?: string;
  /** More headers, e.g. Impersonate-Group (repeated: an array). */
  headers?: Record<string, string | string[]>;
}

/** A long-lived answer (a watch) read line by line. */
export interface OpenStream {
  /**
   * Settles when the stream ends: with the status (and, unless 200, the parsed body) of the answer,
   * or with a TransportError when there was no answer, the connection broke, or abort() was called.
   */
  done: Promise<KubeResponse>;
  abort(): void;
}

/**
 * What kind of failure a TransportError is: the socket's errno code (ECONNREFUSED, ECONNRESET, …),
 * or one of the transport's own deadlines.
 */
export type TransportFailure =
  "ConnectTimeout" | "TLSHandshakeTimeout" | "RequestTimeout" | "Kubeconfig" | (string & {});

/**
 * A request that got no HTTP answer: refused, reset, TLS failure, or the deadline passed. What it
 * is, is in `failure` (and `timedOut`), never to be read from the message.
 */
export class TransportError extends Error {
  override readonly name = "TransportError";
  /** What went wrong, without the "API server unreachable: " the message starts with for logs. */
  readonly detail: string;
  constructor(
    message: string,
    readonly timedOut: boolean,
    /** Unset when nothing more specific is known. */
    readonly failure?: TransportFailure,
    /** The socket, TLS or DNS error behind it (`cause`), for a command to explain. */
    options?: ErrorOptions & { detail?: string },
  ) {
    super(message, options);
    this.detail = options?.detail ?? message;
  }
}

interface Endpoint {
  url: URL;
  agent: http.Agent;
  /** For long-lived streams: they must not hold one of `agent`'s kept-alive sockets. */
  streamAgent: http.Agent;
  /** TLS settings sent with each request, for proxy agents that take them per connection. */
  tls?: https.RequestOptions;
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
  async request(
    method: string,
    path: string,
    body?: unknown,
    extras?: RequestExtras,
  ): Promise<KubeResponse> {
    const { endpoint, headers } = await this.prepare();
    const res = await this.send(endpoint, headers, method, path, body, extras);
    // A 401 may mean the token rotated under us: compute headers afresh next time.
    if (res.status === 401) this.auth = undefined;
    return res;
  }

  /** The connection and the current auth headers; a kubeconfig that cannot be used is a TransportError. */
  private async prepare(): Promise<{ endpoint: Endpoint; headers: Record<string, string> }> {
    try {
      return { endpoint: await this.connect(), headers: await this.authHeaders() };
    } catch (err) {
      throw new TransportError(
        `cannot use the kubeconfig: ${this.redact(errorText(err))}`,
        false,
        "Kubeconfig",
        { cause: err },
      );
    }
  }

  /** Replaces every credential we send with a placeholder, for error messages. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("<redacted>");
    return out;
  }

  /**
   * GETs `path` and calls `onLine` with each line of a 200 answer as it arrives (a watch). The
   * deadline covers only the wait for the answer's headers; the stream itself may last for hours.
   */
  stream(path: string, onLine: (line: string) => void, extras: RequestExtras = {}): OpenStream {
    let req: http.ClientRequest | undefined;
    let aborted = false;
    const done = (async () => {
      const { endpoint, headers } = await this.prepare();
      if (aborted) throw new TransportError("stream aborted", false);
      const res = await new Promise<KubeResponse>((resolve, reject) => {
        req = this.openStream(endpoint, headers, path, onLine, resolve, reject, extras);
      });
      if (res.status === 401) this.auth = undefined;
      return res;
    })();
    return {
      done,
      abort: () => {
        aborted = true;
        req?.destroy(new Error("stream aborted"));
      },
    };
  }

  close(): void {
    void this.endpoint
      ?.then((e) => {
        e.agent.destroy();
        e.streamAgent.destroy();
      })
      .catch(() => undefined);
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
    extras: RequestExtras | undefined,
  ): Promise<KubeResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const { url, agent } = endpoint;
    const headers: Record<string, string | string[]> = {
      ...extras?.headers,
      ...auth,
      Accept: "application/json",
    };
    if (payload) {
      headers["Content-Type"] = extras?.contentType ?? "application/json";
      headers["Content-Length"] = String(payload.length);
    }
    return new Promise<KubeResponse>((resolve, reject) => {
      let timedOut = false;
      const fail = (err: Error) => {
        reject(timedOut ? timeoutError(this.options.timeoutMs) : this.unreachable(err));
      };
      const req = clientFor(url).request(
        requestOptions(endpoint, agent, method, path, headers),
        (res) => this.collect(res, resolve, fail),
      );
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(timeoutError(this.options.timeoutMs));
      }, this.options.timeoutMs);
      this.guardConnect(req, url.host);
      req.on("close", () => clearTimeout(timer));
      req.on("error", fail);
      req.end(payload);
    });
  }

  private openStream(
    endpoint: Endpoint,
    auth: Record<string, string>,
    path: string,
    onLine: (line: string) => void,
    resolve: (r: KubeResponse) => void,
    reject: (e: Error) => void,
    extras: RequestExtras,
  ): http.ClientRequest {
    const { url, streamAgent } = endpoint;
    const headers = { ...extras.headers, ...auth, Accept: "application/json" };
    let timedOut = false;
    const fail = (err: Error) =>
      reject(timedOut ? timeoutError(this.options.timeoutMs) : this.unreachable(err));
    const req = clientFor(url).request(
      requestOptions(endpoint, streamAgent, "GET", path, headers),
      (res) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) return this.collect(res, resolve, fail);
        this.readLines(res, onLine, () => resolve({ status: 200, body: undefined }), fail);
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(timeoutError(this.options.timeoutMs));
    }, this.options.timeoutMs);
    this.guardConnect(req, url.host);
    // A watch may be silent for minutes: let TCP notice a peer that vanished.
    req.on("socket", (socket) => socket.setKeepAlive(true, 30_000));
    req.on("close", () => clearTimeout(timer));
    req.on("error", fail);
    req.end();
    return req;
  }

  /** A TransportError for a request that failed with `err`, keeping what kind of failure it was. */
  private unreachable(err: Error): TransportError {
    if (err instanceof TransportError) return err;
    const code = (err as NodeJS.ErrnoException).code;
    const detail = this.redact(err.message);
    return new TransportError(
      `API server unreachable: ${detail}`,
      false,
      typeof code === "string" ? code : undefined,
      { cause: err, detail },
    );
  }

  /**
   * The connect and TLS handshake deadlines (options.connectTimeoutMs, tlsHandshakeTimeoutMs) for
   * a request that opens a new connection; a kept-alive connection has passed both. Like Go's, the
   * handshake's deadline starts once TCP is connected.
   */
  private guardConnect(req: http.ClientRequest, host: string): void {
    const { connectTimeoutMs, tlsHandshakeTimeoutMs } = this.options;
    if (connectTimeoutMs === undefined && tlsHandshakeTimeoutMs === undefined) return;
    req.on("socket", (socket) => {
      if (req.reusedSocket) return;
      let timer: NodeJS.Timeout | undefined;
      const stop = () => clearTimeout(timer);
      const after = (ms: number | undefined, err: () => TransportError) => {
        stop();
        if (ms !== undefined) timer = setTimeout(() => req.destroy(err()), ms);
      };
      const handshake = () => {
        if (!(socket instanceof TLSSocket)) return stop();
        after(tlsHandshakeTimeoutMs, () => tlsHandshakeTimeoutError(tlsHandshakeTimeoutMs!));
        socket.once("secureConnect", stop);
      };
      if (socket.connecting) {
        after(connectTimeoutMs, () => connectTimeoutError(host, connectTimeoutMs!));
        socket.once("connect", handshake);
      } else handshake();
      socket.once("close", stop);
      req.once("close", stop);
    });
  }

  /** Splits a streamed answer into lines; one line longer than maxBodyBytes fails the stream. */
  private readLines(
    res: http.IncomingMessage,
    onLine: (line: string) => void,
    end: () => void,
    fail: (e: Error) => void,
  ): void {
    const limit = this.options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    const decoder = new StringDecoder("utf8");
    let pending = "";
    let ended = false;
    res.on("data", (chunk: Buffer) => {
      const lines = (pending + decoder.write(chunk)).split("\n");
      pending = lines.pop() ?? "";
      if (pending.length > limit) return res.destroy(new Error(`line longer than ${limit} bytes`));
      try {
        for (const line of lines) if (line.trim() !== "") onLine(line);
      } catch (err) {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    });
    res.on("error", fail);
    res.on("end", () => {
      ended = true;
      const last = pending + decoder.end();
      if (last.trim() !== "") onLine(last);
      end();
    });
    res.on("close", () => {
      if (!ended) fail(new Error("stream closed"));
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
      resolve({
        status: res.statusCode ?? 0,
        body: parseBody(Buffer.concat(chunks).toString()),
        headers: res.headers,
      });
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
  // CA, client certificates, skip-verify and, for a proxy-url, the proxy agent.
  await kc.applyToHTTPSOptions(opts);
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
  if (cluster.proxyUrl && opts.agent instanceof http.Agent)
    return { url, agent: opts.agent, streamAgent: opts.agent, tls };
  const agent =
    url.protocol === "http:" ? new http.Agent({ keepAlive: true }) : new https.Agent(tls);
  const streams = { ...tls, keepAlive: false, maxSockets: Infinity };
  const streamAgent =
    url.protocol === "http:" ? new http.Agent({ keepAlive: false }) : new https.Agent(streams);
  return { url, agent, streamAgent };
}

function clientFor(url: URL): typeof http | typeof https {
  return url.protocol === "http:" ? http : https;
}

function requestOptions(
  { url, tls }: Endpoint,
  agent: http.Agent,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
): http.RequestOptions {
  return {
    ...tls,
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port,
    path: joinPath(url.pathname, path),
    method,
    agent,
    headers,
  };
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
  return new TransportError(`API server did not answer within ${ms} ms`, true, "RequestTimeout");
}

// Go's words for these (net/http, net): what kubectl prints after "Unable to connect to the server: ".
function tlsHandshakeTimeoutError(ms: number): TransportError {
  return new TransportError(
    `net/http: TLS handshake timeout (no TLS answer within ${ms / 1000}s)`,
    false,
    "TLSHandshakeTimeout",
  );
}

function connectTimeoutError(host: string, ms: number): TransportError {
  return new TransportError(
    `dial tcp ${host}: i/o timeout (no TCP connection within ${ms / 1000}s)`,
    false,
    "ConnectTimeout",
  );
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
