// The express application: admission routes, health, readiness and metrics, served over node:https.

import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from "express";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { asKubeError, KubeError } from "../shared/status.js";
import { deny } from "../admission/respond.js";
import {
  decodeAdmissionReview,
  type AdmissionRequest,
  type AdmissionReviewResponse,
} from "../admission/review.js";
import type { Logger } from "./logger.js";
import { recordRequest, type Metrics } from "./metrics.js";
import {
  clientErrorHandler,
  defaultBodyLimits,
  parseJsonBody,
  readBody,
  requireJson,
  RETRY_AFTER_SECONDS,
  sendStatus,
  type BodyLimits,
  type BodyRefusal,
} from "./body.js";
import { scrubReview, scrubText, SecretValues } from "./scrub.js";
import { DEFAULT_ADMISSION_TIMEOUT_MS, DEFAULT_MAX_IN_FLIGHT } from "./limits.js";
import type { TlsMaterial } from "./tls.js";
import { CLIENT_CERT_MESSAGES, clientCertRefusal, type ClientCertPolicy } from "./client-auth.js";
import type { TLSSocket } from "node:tls";
import type { ReviewAnswer } from "../auth/contracts.js";

export type Admit = (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;

/**
 * A TokenReview or SubjectAccessReview route: the parsed JSON body in, the review to send back
 * out. A body that is no such review throws a KubeError (400); the answer is otherwise always HTTP
 * 200 with the decision inside, as kube-apiserver expects of its webhooks.
 */
export type Review = (body: unknown) => ReviewAnswer;

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

function objectName(req: AdmissionRequest): string {
  const meta = (req.object ?? req.oldObject)?.metadata as Record<string, unknown> | undefined;
  const pick = (v: unknown): string => (typeof v === "string" ? v : "");
  return req.name || pick(meta?.name) || pick(meta?.generateName);
}

function admissionHandler(path: string, admit: Admit, opts: AppOptions) {
  const route = path.replace(/^\//, "");
  const inFlight = opts.metrics.inFlight.labels(route);
  return async (req: Request, res: Response): Promise<void> => {
    const started = process.hrtime.bigint();
    inFlight.inc();
    let parsed: unknown;
    let secrets: SecretValues | undefined;
    // Only answers with text (denials, warnings, errors) need the request's secret values.
    const secretsOf = () => (secrets ??= SecretValues.of(parsed));
    let request: AdmissionRequest | null = null;
    let code = 200;
    let allowed = "error";
    let failure: string | undefined;
    try {
      parsed = parseJsonBody(req.body);
      request = decodeAdmissionReview(parsed);
      const decided = withDeadline(admit(request), opts.admissionTimeoutMs);
      const review = scrubReview(await decided, secretsOf);
      allowed = String(review.response.allowed);
      code = review.response.allowed ? 200 : (review.response.status?.code ?? 400);
      if (code >= 500) failure = review.response.status?.message;
      sendReview(res, review);
    } catch (err) {
      const e = asKubeError(err);
      code = e.code;
      if (request) {
        // A decoded request always gets an AdmissionReview answer, even when something broke.
        allowed = "false";
        sendReview(res, scrubReview(deny(request.uid, e), secretsOf));
      } else {
        sendStatus(res, e, secretsOf());
      }
      if (e.code >= 500) failure = scrubText(e.message, secretsOf());
    } finally {
      inFlight.dec();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const labels = { route, operation: request?.operation ?? "unknown", allowed };
      recordRequest(opts.metrics, labels, seconds);
      // One line per request; a 5xx answer (vgate or what it depends on failed) is the same line
      // at error level, with the reason.
      opts.logger[code >= 500 ? "error" : "info"](
        {
          route,
          uid: request?.uid,
          operation: request?.operation,
          name: request ? objectName(request) : undefined,
          user: request?.userInfo.username,
          allowed: allowed === "true",
          code,
          latencyMs: Math.round(seconds * 1e6) / 1e3,
          error: failure,
        },
        "admission",
      );
    }
  };
}

/**
 * `decision`, or a 504 Timeout once `ms` have passed: the request is then denied (fail closed) while
 * the late work winds down by its own timeouts (the API client's, the patch sandbox's).
 */
function withDeadline<T>(decision: Promise<T>, ms = DEFAULT_ADMISSION_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new KubeError(504, "Timeout", `the admission decision took longer than ${ms / 1000}s`),
        ),
      ms,
    );
  });
  decision.catch(() => undefined);
  return Promise.race([decision, late]).finally(() => clearTimeout(timer));
}

/**
 * The metric label of the route a request matched: the path its handler was registered with
 * (express sets req.route for route handlers), never the request's own path, so that no client can
 * make new series. "unmatched" outside a route.
 */
function routeLabel(req: Request): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === "string" ? path.replace(/^\//, "") : "unmatched";
}

/**
 * Past `max` requests at once, answers 429 with Retry-After, as kube-apiserver's own limiter does;
 * client-go (which kube-apiserver calls webhooks with) waits that long and retries within the
 * webhook's timeout. The request is not read: Node discards its body once the answer is written.
 */
function inFlightLimit(max: number, opts: AppOptions) {
  let current = 0;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (current >= max) {
      const err = new KubeError(
        429,
        "TooManyRequests",
        `too many requests in flight (limit ${max}); retry after ${RETRY_AFTER_SECONDS}s`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
      const route = routeLabel(req);
      opts.metrics.bodiesRefused.inc({ route, reason: "too-many-requests" });
      opts.logger.info({ route, code: 429, limit: max }, "request refused: too many in flight");
      sendStatus(res, err);
      return;
    }
    current++;
    res.once("close", () => current--);
    next();
  };
}

/**
 * Refuses, with 401 Unauthorized and before the body is read, a request whose connection has no
 * client certificate the policy accepts. Counted by route and reason; logged at debug, so that a
 * prober cannot flood the log.
 */
function requireClientCert(policy: ClientCertPolicy, opts: AppOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const refusal = clientCertRefusal(req.socket as TLSSocket, policy);
    if (refusal === null) {
      next();
      return;
    }
    const route = routeLabel(req);
    opts.metrics.clientCertRefused.inc({ route, reason: refusal });
    opts.logger.debug({ route, code: 401, reason: refusal }, "request refused: client certificate");
    // The refusal belongs to the connection: a client must reconnect, and present another
    // certificate, or be checked against a CA bundle that changed meanwhile.
    res.setHeader("Connection", "close");
    sendStatus(res, new KubeError(401, "Unauthorized", CLIENT_CERT_MESSAGES[refusal]));
  };
}

/**
 * A TokenReview or SubjectAccessReview: synchronous (answered from the watch caches), so the whole
 * request is one turn of the event loop. The log line names the key, never the token.
 */
function reviewHandler(path: string, review: Review, opts: AppOptions) {
  const route = path.replace(/^\//, "");
  return (req: Request, res: Response): void => {
    const started = process.hrtime.bigint();
    let code = 200;
    let log: ReviewAnswer["log"] | undefined;
    let error: string | undefined;
    let parsed: unknown;
    try {
      parsed = parseJsonBody(req.body);
      const answer = review(parsed);
      log = answer.log;
      sendJson(res, answer.body);
    } catch (err) {
      const e = asKubeError(err);
      code = e.code;
      // Messages are built without the token, but pass the scrubber like every other, with the
      // request's secret values (its `token`).
      const secrets = SecretValues.of(parsed);
      error = scrubText(e.message, secrets);
      sendStatus(res, e, secrets);
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const decision = log?.decision ?? "error";
      recordRequest(opts.metrics, { route, operation: "review", allowed: decision }, seconds);
      opts.logger[code >= 500 ? "error" : "info"](
        {
          route,
          // Not "key": the redactor treats a field of that name as a secret (spec.key).
          accessKey: log?.key,
          user: log?.user,
          decision,
          reason: log?.reason,
          code,
          latencyMs: Math.round(seconds * 1e6) / 1e3,
          error,
        },
        "review",
      );
    }
  };
}

/**
 * Counts a body refused before its request was handled, and logs it: a shed body (429: vgate was
 * full) at info, like other 4xx answers; a client's own fault (too large, compressed, stalled) at
 * debug, so that a hostile client cannot flood the log.
 */
function bodyRefused(opts: AppOptions) {
  return (req: Request, why: BodyRefusal, err: KubeError): void => {
    const route = routeLabel(req);
    opts.metrics.bodiesRefused.inc({ route, reason: why });
    opts.logger[why === "shed" ? "info" : "debug"](
      { route, code: err.code, reason: why, error: err.message },
      "request refused",
    );
  };
}

/**
 * The AdmissionReview answer, always HTTP 200 (the decision is inside). Written directly, with the
 * same headers res.json sets: express's send path (charset and ETag handling) costs more than the
 * answer itself.
 */
function sendReview(res: Response, review: AdmissionReviewResponse): void {
  sendJson(res, review);
}

function sendJson(res: Response, body: object): void {
  const payload = JSON.stringify(body);
  res.writeHead(200, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(payload),
  });
  res.end(payload);
}

function notAllowed(_req: Request, res: Response): void {
  sendStatus(res, new KubeError(405, "MethodNotAllowed", "only POST is allowed on review routes"));
}

export function createApp(opts: AppOptions): express.Express {
  const limits = opts.bodyLimits ?? defaultBodyLimits();
  opts.metrics.watchBodyBytes(() => limits.budget.bytesInUse);
  const body = readBody(limits, bodyRefused(opts));
  const limit = inFlightLimit(opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, opts);
  const certs = opts.clientCerts ?? {
    policy: { configured: false, allowedNames: [] },
    admission: false,
  };
  const reviewCert = requireClientCert(certs.policy, opts);
  const admissionCert: RequestHandler[] = certs.admission ? [reviewCert] : [];
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // kube-apiserver calls the exact paths of the webhook configurations: /Validate/... or
  // /authenticate/ are not vgate's routes, and get 404.
  app.set("case sensitive routing", true);
  app.set("strict routing", true);
  // Admission routes first: the router tries layers in order, and these take nearly all requests.
  for (const [path, admit] of Object.entries(opts.routes)) {
    app.post(path, ...admissionCert, limit, requireJson, body, admissionHandler(path, admit, opts));
    app.all(path, notAllowed);
  }
  for (const [path, review] of Object.entries(opts.reviews ?? {})) {
    app.post(path, reviewCert, limit, requireJson, body, reviewHandler(path, review, opts));
    app.all(path, notAllowed);
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
  app: express.Express,
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
