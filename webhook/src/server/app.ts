// The HTTPS server: the review routes on plain node:http (review-routes.ts), and health,
// readiness, metrics and everything else through express.

import express, { type NextFunction, type Request, type Response } from "express";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { asKubeError, KubeError } from "../shared/status.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { clientErrorHandler, defaultBodyLimits, sendStatus, type BodyLimits } from "./body.js";
import { scrubText } from "./scrub.js";
import { DEFAULT_MAX_IN_FLIGHT } from "./limits.js";
import type { TlsMaterial } from "./tls.js";
import type { ClientCertPolicy } from "./client-auth.js";
import type { TLSSocket } from "node:tls";
import { pathOf, reviewRoutes, type Admit, type Review } from "./review-routes.js";

export type { Admit, Review };

export interface AppOptions {
  logger: Logger;
  metrics: Metrics;
  /** Admission routes: path -> handler, e.g. "/validate/ownedaccesskeys". */
  routes: Record<string, Admit>;
  /** Authentication and authorization routes: path -> handler, e.g. "/authenticate". */
  reviews?: Record<string, Review>;
  /**
   * Readiness beyond TLS being loaded: true, or why not (API discovery, the key cache); omitted in
   * --dev.
   */
  ready?: () => Promise<true | string>;
  /** Size, time and shared-budget limits of request bodies; body.ts's defaults when omitted. */
  bodyLimits?: BodyLimits;
  /** Review requests (admission, token, authorization) handled at once; more get 429. */
  maxInFlight?: number;
  /** An admission request not decided within this is denied with a 504 Timeout. */
  admissionTimeoutMs?: number;
  /** True once the server is shutting down: /readyz then answers 503. */
  draining?: () => boolean;
  /**
   * Client certificates (client-auth.ts): the review routes always require one that the policy
   * accepts (none is accepted without a configured CA); admission routes only with `admission`.
   */
  clientCerts?: { policy: ClientCertPolicy; admission: boolean };
}

/**
 * The request listener: a request whose path is a review route's goes straight to it (any
 * method; POST is served, the others get 405), everything else to express. A review path that
 * only express's URL parsing finds (an absolute-form target) reaches the same route through
 * express.
 */
export function createApp(opts: AppOptions): RequestListener {
  const limits = opts.bodyLimits ?? defaultBodyLimits();
  opts.metrics.watchBodyBytes(() => limits.budget.bytesInUse);
  const routes = reviewRoutes({
    logger: opts.logger,
    metrics: opts.metrics,
    routes: opts.routes,
    reviews: opts.reviews ?? {},
    bodyLimits: limits,
    maxInFlight: opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    admissionTimeoutMs: opts.admissionTimeoutMs,
    clientCerts: opts.clientCerts ?? {
      policy: { configured: false, allowedNames: [] },
      admission: false,
    },
  });
  const app = expressApp(opts, routes);
  return (req: IncomingMessage, res: ServerResponse) => {
    const route = routes.get(pathOf(req.url));
    if (route) route(req, res);
    else app(req, res);
  };
}

function expressApp(
  opts: AppOptions,
  routes: Map<string, (req: IncomingMessage, res: ServerResponse) => void>,
): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // kube-apiserver calls the exact paths of the webhook configurations: /Validate/... or
  // /authenticate/ are not vgate's routes, and get 404.
  app.set("case sensitive routing", true);
  app.set("strict routing", true);
  for (const [path, route] of routes) {
    app.all(path, (req: Request, res: Response) => route(req, res));
  }
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok");
  });
  app.get("/readyz", async (_req, res) => {
    if (opts.draining?.()) {
      res.status(503).type("text/plain").send("not ready: shutting down");
      return;
    }
    const ready = opts.ready
      ? await opts.ready().catch((err: unknown) => String(err instanceof Error ? err.message : err))
      : true;
    res
      .status(ready === true ? 200 : 503)
      .type("text/plain")
      .send(ready === true ? "ok" : `not ready: ${ready}`);
  });
  app.get("/metrics", async (_req, res) => {
    res.type(opts.metrics.registry.contentType).send(await opts.metrics.registry.metrics());
  });
  app.use((req: Request, res: Response) => {
    const path = req.path.length > 200 ? `${req.path.slice(0, 200)}...` : req.path;
    sendStatus(res, new KubeError(404, "NotFound", `no route for ${req.method} ${path}`));
  });
  app.use(clientErrorHandler);
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const message = scrubText(err instanceof Error ? err.message : String(err));
    opts.logger.error({ err: message }, "unhandled error");
    if (!res.headersSent) sendStatus(res, asKubeError(err));
  });
  return app;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
  setTls(tls: TlsMaterial): void;
}

/**
 * How long a connection may take for each step before it is closed. A client that stalls must not
 * hold a connection, or memory, for long: kube-apiserver sends each request whole, at once.
 */
export const CONNECTION_LIMITS = {
  /** From the TCP connection to a finished TLS handshake (Node's default: 120 s). */
  handshakeTimeout: 5_000,
  /** From a request's first byte to its last header. */
  headersTimeout: 5_000,
  /**
   * From a request's first byte to its last body byte. body.ts cuts admission bodies sooner (a 2 s
   * gap or 5 s in all); this bounds everything else.
   */
  requestTimeout: 10_000,
  /**
   * How often Node checks the two timeouts above; its default, 30 s, would let a stalled request
   * live up to 30 s past them.
   */
  connectionsCheckingInterval: 1_000,
  /** Idle between requests, unchanged: kube-apiserver reuses its connections for many requests. */
  keepAliveTimeout: 65_000,
} as const;

function secureContextOf(tls: TlsMaterial): { cert: string; key: string; ca?: string } {
  return tls.clientCa === undefined
    ? { cert: tls.cert, key: tls.key }
    : { cert: tls.cert, key: tls.key, ca: tls.clientCa };
}

/**
 * Serves `app` over HTTPS; resolves once listening. `tls.clientCa` verifies client certificates;
 * whether it is given cannot change later (setTls may change the CA itself).
 */
export async function listen(
  app: RequestListener,
  tls: TlsMaterial,
  port: number,
  host = "0.0.0.0",
): Promise<RunningServer> {
  // With a client CA the handshake asks for a certificate but never fails for lack of one: the
  // routes that need it answer 401 with a reason (requireClientCert), the others serve anyone.
  const server = createHttpsServer(
    {
      ...secureContextOf(tls),
      requestCert: tls.clientCa !== undefined,
      rejectUnauthorized: false,
      minVersion: "TLSv1.2",
      ...CONNECTION_LIMITS,
    },
    app,
  );
  // A connection's client certificate is checked once (client-auth.ts): it must not change under
  // it through a TLS 1.2 renegotiation.
  server.on("secureConnection", (socket: TLSSocket) => socket.disableRenegotiation());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  return {
    server,
    port: actual,
    url: `https://${shownHost}:${actual}`,
    setTls: (next) => server.setSecureContext(secureContextOf(next)),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
