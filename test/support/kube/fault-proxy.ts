// A fault-injecting HTTPS proxy in front of a real kube-apiserver, for the faults a real server
// cannot be made to produce on demand: being down, being slow, a watch that ends or expires, a 500
// during one request. Everything else is the real server's answer, passed through untouched. It
// also records the requests it receives (method, path, query, body), so tests can count and
// inspect what a client asked.
//
// Upstream it authenticates with its own client certificate when given one (so one proxy speaks
// for one user); otherwise it forwards the client's Authorization header.

import { createServer, request, Agent, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { CertAndKey } from "./pki.js";

export interface RecordedRequest {
  method: string;
  path: string;
  /** "" or "?a=b&...", as sent. */
  query: string;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The request body as text (its first 64 KiB), once it has been read. */
  body: string;
  /** The HTTP status it was answered with, once answered (injected or the server's). */
  answer?: number;
}

const MAX_RECORDED_BODY = 64 * 1024;

export type DownMode = false | "503" | "refuse";

export interface InjectedAnswer {
  status: number;
  /** Sent as JSON, or as it is when a string. */
  body: unknown;
}

export interface FaultProxyOptions {
  /** The real API server, https://127.0.0.1:PORT. */
  upstream: string;
  /** CA of the upstream server. */
  upstreamCa: string;
  /** Upstream identity; without it the client's Authorization header is forwarded. */
  client?: CertAndKey;
  /** The proxy's own serving certificate (for 127.0.0.1). */
  serving: CertAndKey;
  /** Keep at most this many records (the newest); 10000. */
  maxRecords?: number;
}

export interface FaultProxy {
  /** https://127.0.0.1:PORT */
  url: string;
  /** The requests received, oldest first. */
  requests: RecordedRequest[];
  /**
   * "503": every request is answered 503 ServiceUnavailable (as a load balancer in front of a
   * stopped API server answers) and open watches end; "refuse": connections are reset.
   */
  setDown(mode: DownMode | true): void;
  /** Holds every request this long before forwarding it. */
  setDelay(ms: number): void;
  /**
   * Holds every request that matches until `release()` is called, however long that takes (a
   * race made by order, not by timing); requests after the release pass.
   */
  hold(match: (r: RecordedRequest) => boolean): { release(): void };
  /** Ends every open watch stream (as an API server restart would); returns how many. */
  endWatches(): number;
  /** The watch requests whose streams are open now. */
  openWatches(): RecordedRequest[];
  /** Answers the next `times` requests that match with `answer` instead of forwarding them. */
  inject(match: (r: RecordedRequest) => boolean, answer: InjectedAnswer, times?: number): void;
  close(): Promise<void>;
}

/** kube's Status body for `code`/`reason`, as kube-apiserver writes it. */
export function kubeStatus(code: number, reason: string, message: string): Record<string, unknown> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  };
}

const isWatch = (r: RecordedRequest): boolean =>
  /[?&]watch=(true|1)(&|$)/.test(r.query) || r.path.includes("/watch/");

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const requests: RecordedRequest[] = [];
  const maxRecords = opts.maxRecords ?? 10_000;
  const watches = new Map<ServerResponse, RecordedRequest>();
  const sockets = new Set<Socket>();
  const injections: {
    match: (r: RecordedRequest) => boolean;
    answer: InjectedAnswer;
    left: number;
  }[] = [];
  let down: DownMode = false;
  let delayMs = 0;
  const holds: { match: (r: RecordedRequest) => boolean; waiting: (() => void)[] | null }[] = [];
  const upstream = new URL(opts.upstream);
  const agent = new Agent({
    keepAlive: true,
    ca: opts.upstreamCa,
    ...(opts.client ? { cert: opts.client.cert, key: opts.client.key } : {}),
  });

  /** Objects are sent as JSON, strings as they are. */
  const reply = (res: ServerResponse, status: number, body: unknown, rec?: RecordedRequest) => {
    if (rec) rec.answer = status;
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(text),
    });
    res.end(text);
  };

  const forward = (req: IncomingMessage, res: ServerResponse, rec: RecordedRequest) => {
    const headers = { ...req.headers, host: upstream.host };
    if (opts.client) delete headers["authorization"];
    const up = request(
      {
        protocol: "https:",
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
        agent,
      },
      (upRes) => {
        if (down && isWatch(rec)) {
          // Went down while this watch waited for its answer: it ends like the open ones did.
          upRes.destroy();
          return void res.destroy();
        }
        rec.answer = upRes.statusCode ?? 502;
        res.writeHead(rec.answer, upRes.headers);
        if (isWatch(rec)) {
          // kube-apiserver flushes a watch's headers at once; Node would hold them until the first
          // event, and a client's deadline for the answer would then end a quiet watch.
          res.flushHeaders();
          watches.set(res, rec);
          res.once("close", () => watches.delete(res));
        }
        upRes.pipe(res);
        res.once("close", () => upRes.destroy());
      },
    );
    up.on("error", (err) => {
      if (!res.headersSent) reply(res, 502, kubeStatus(502, "InternalError", err.message), rec);
      else res.destroy();
    });
    req.pipe(up);
  };

  const server: Server = createServer(
    { cert: opts.serving.cert, key: opts.serving.key },
    (req, res) => {
      const url = new URL(req.url ?? "/", "https://proxy");
      const rec: RecordedRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: url.search,
        at: Date.now(),
        body: "",
      };
      req.on("data", (chunk: Buffer) => {
        if (rec.body.length < MAX_RECORDED_BODY) {
          rec.body += chunk.toString("utf8").slice(0, MAX_RECORDED_BODY - rec.body.length);
        }
      });
      requests.push(rec);
      if (requests.length > maxRecords) requests.splice(0, requests.length - maxRecords);
      const go = () => {
        if (down === "503") {
          req.resume();
          return reply(
            res,
            503,
            kubeStatus(
              503,
              "ServiceUnavailable",
              "the server is currently unable to handle the request",
            ),
            rec,
          );
        }
        const injected = injections.find((i) => i.left > 0 && i.match(rec));
        if (injected) {
          injected.left--;
          req.resume();
          return reply(res, injected.answer.status, injected.answer.body, rec);
        }
        forward(req, res, rec);
      };
      const held = holds.find((h) => h.waiting !== null && h.match(rec));
      if (held || delayMs > 0) {
        // Hold the body meanwhile: the recording listener above would otherwise let it flow past
        // before go() pipes it on, and a delayed POST would reach the API server without a body.
        req.pause();
        if (held) held.waiting!.push(go);
        else setTimeout(go, delayMs);
      } else go();
    },
  );
  // Idle connections stay open as long as kube-apiserver keeps them (k8s.io/apiserver
  // secure_serving.go: IdleTimeout 90 s), not Node's 5 s: a client's race with an idle close would
  // otherwise show up here far more often than against the real server.
  server.keepAliveTimeout = 90_000;
  server.on("connection", (socket: Socket) => {
    if (down === "refuse") return socket.destroy();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const endWatches = (): number => {
    const open = [...watches.keys()];
    for (const res of open) res.destroy();
    watches.clear();
    return open.length;
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    setDown: (mode) => {
      down = mode === true ? "503" : mode;
      if (!down) return;
      endWatches();
      if (down === "refuse") for (const s of sockets) s.destroy();
    },
    setDelay: (ms) => (delayMs = ms),
    hold: (match) => {
      const h: (typeof holds)[number] = { match, waiting: [] };
      holds.push(h);
      return {
        release: () => {
          const waiting = h.waiting ?? [];
          h.waiting = null;
          for (const go of waiting) go();
        },
      };
    },
    endWatches,
    openWatches: () => [...watches.values()],
    inject: (match, answer, times = 1) => injections.push({ match, answer, left: times }),
    close: () =>
      new Promise<void>((resolve) => {
        endWatches();
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
