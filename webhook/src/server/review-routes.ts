// The review routes (admission, TokenReview, SubjectAccessReview) on plain node:http, without
// express. They are nearly all of vgate's traffic, and a profile under load put more of a call's
// CPU in express's per-request work (prototype swaps, the router's layers and closures, its send
// path) than in vgate's rules. Each request passes the same steps, in the same order, that the
// express middleware chain had: client certificate, in-flight limit, media type, body (size,
// encoding, shared budget, time), then the handler with its deadline, metrics and log line.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { asKubeError, KubeError } from "../shared/status.js";
import { deny } from "../admission/respond.js";
import {
  decodeAdmissionReview,
  type AdmissionRequest,
  type AdmissionReviewResponse,
} from "../admission/review.js";
import type { ReviewAnswer } from "../auth/contracts.js";
import type { Logger } from "./logger.js";
import { recordRequest, type Metrics } from "./metrics.js";
import {
  contentTypeRefusal,
  parseJsonBody,
  readBody,
  RETRY_AFTER_SECONDS,
  sendStatus,
  type BodyLimits,
  type BodyRead,
  type BodyRefusal,
} from "./body.js";
import { scrubReview, scrubText, SecretValues } from "./scrub.js";
import { DEFAULT_ADMISSION_TIMEOUT_MS } from "./limits.js";
import { CLIENT_CERT_MESSAGES, clientCertRefusal, type ClientCertPolicy } from "./client-auth.js";

export type Admit = (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;

/**
 * A TokenReview or SubjectAccessReview route: the parsed JSON body in, the review to send back
 * out. A body that is no such review throws a KubeError (400); the answer is otherwise always HTTP
 * 200 with the decision inside, as kube-apiserver expects of its webhooks.
 */
export type Review = (body: unknown) => ReviewAnswer;

export interface ReviewRouteOptions {
  logger: Logger;
  metrics: Metrics;
  /** Admission routes: path -> handler, e.g. "/validate/ownedaccesskeys". */
  routes: Record<string, Admit>;
  /** Authentication and authorization routes: path -> handler, e.g. "/authenticate". */
  reviews: Record<string, Review>;
  bodyLimits: BodyLimits;
  maxInFlight: number;
  admissionTimeoutMs?: number;
  clientCerts: { policy: ClientCertPolicy; admission: boolean };
}

/** Serves one review route: any method (POST is handled, the others get 405). */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The review routes by exact path (case and trailing slash matter, as kube-apiserver calls them). */
export function reviewRoutes(opts: ReviewRouteOptions): Map<string, RouteHandler> {
  const shared: Shared = { current: 0, opts };
  const table = new Map<string, RouteHandler>();
  for (const [path, admit] of Object.entries(opts.routes)) {
    table.set(
      path,
      route(path, opts.clientCerts.admission, admissionHandler(path, admit, opts), shared),
    );
  }
  for (const [path, review] of Object.entries(opts.reviews)) {
    table.set(path, route(path, true, reviewHandler(path, review, opts), shared));
  }
  return table;
}

/** The path of a request's origin-form target, without its query (kube-apiserver adds ?timeout=). */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** What the routes share: the requests in flight across all of them. */
interface Shared {
  current: number;
  opts: ReviewRouteOptions;
}

type Handler = (res: ServerResponse, body: Buffer) => void;

function route(path: string, needsCert: boolean, handle: Handler, shared: Shared): RouteHandler {
  const { opts } = shared;
  const label = path.replace(/^\//, "");
  const read: BodyRead = readBody(opts.bodyLimits, (why, err) =>
    bodyRefused(opts, label, why, err),
  );
  const max = opts.maxInFlight;
  const release = () => shared.current--;
  return (req, res) => {
    if (req.method !== "POST") {
      sendStatus(
        res,
        new KubeError(405, "MethodNotAllowed", "only POST is allowed on review routes"),
      );
      return;
    }
    if (needsCert && !certAccepted(req, res, opts, label)) return;
    // Past `max` requests at once, 429 with Retry-After, as kube-apiserver's own limiter does;
    // client-go (which kube-apiserver calls webhooks with) waits that long and retries within the
    // webhook's timeout. The request is not read: Node discards its body once the answer is written.
    if (shared.current >= max) {
      opts.metrics.bodiesRefused.inc({ route: label, reason: "too-many-requests" });
      opts.logger.info(
        { route: label, code: 429, limit: max },
        "request refused: too many in flight",
      );
      sendStatus(
        res,
        new KubeError(
          429,
          "TooManyRequests",
          `too many requests in flight (limit ${max}); retry after ${RETRY_AFTER_SECONDS}s`,
          { retryAfterSeconds: RETRY_AFTER_SECONDS },
        ),
      );
      return;
    }
    shared.current++;
    res.once("close", release);
    const refusal = contentTypeRefusal(req.headers["content-type"]);
    if (refusal) {
      sendStatus(res, refusal);
      return;
    }
    read(req, res, (body) => handle(res, body));
  };
}

/**
 * Whether the connection has a client certificate the policy accepts; if not, answers 401 before
 * the body is read. Counted by route and reason; logged at debug, so that a prober cannot flood the
 * log.
 */
function certAccepted(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ReviewRouteOptions,
  label: string,
): boolean {
  const refusal = clientCertRefusal(req.socket as TLSSocket, opts.clientCerts.policy);
  if (refusal === null) return true;
  opts.metrics.clientCertRefused.inc({ route: label, reason: refusal });
  opts.logger.debug(
    { route: label, code: 401, reason: refusal },
    "request refused: client certificate",
  );
  // The refusal belongs to the connection: a client must reconnect, and present another
  // certificate, or be checked against a CA bundle that changed meanwhile.
  res.setHeader("Connection", "close");
  sendStatus(res, new KubeError(401, "Unauthorized", CLIENT_CERT_MESSAGES[refusal]));
  return false;
}

/**
 * Counts a body refused before its request was handled, and logs it: a shed body (429: vgate was
 * full) at info, like other 4xx answers; a client's own fault (too large, compressed, stalled) at
 * debug, so that a hostile client cannot flood the log.
 */
function bodyRefused(
  opts: ReviewRouteOptions,
  route: string,
  why: BodyRefusal,
  err: KubeError,
): void {
  opts.metrics.bodiesRefused.inc({ route, reason: why });
  opts.logger[why === "shed" ? "info" : "debug"](
    { route, code: err.code, reason: why, error: err.message },
    "request refused",
  );
}

function objectName(req: AdmissionRequest): string {
  const meta = (req.object ?? req.oldObject)?.metadata as Record<string, unknown> | undefined;
  const pick = (v: unknown): string => (typeof v === "string" ? v : "");
  return req.name || pick(meta?.name) || pick(meta?.generateName);
}

function admissionHandler(path: string, admit: Admit, opts: ReviewRouteOptions): Handler {
  const route = path.replace(/^\//, "");
  const inFlight = opts.metrics.inFlight.labels(route);
  return async (res, body) => {
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
      parsed = parseJsonBody(body);
      request = decodeAdmissionReview(parsed);
      const review = scrubReview(
        await withDeadline(admit(request), opts.admissionTimeoutMs),
        secretsOf,
      );
      allowed = String(review.response.allowed);
      code = review.response.allowed ? 200 : (review.response.status?.code ?? 400);
      if (code >= 500) failure = review.response.status?.message;
      sendJson(res, review);
    } catch (err) {
      const e = asKubeError(err);
      code = e.code;
      if (request) {
        // A decoded request always gets an AdmissionReview answer, even when something broke.
        allowed = "false";
        sendJson(res, scrubReview(deny(request.uid, e), secretsOf));
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
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new KubeError(504, "Timeout", `the admission decision took longer than ${ms / 1000}s`),
        ),
      ms,
    );
    decision.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err as Error);
      },
    );
  });
}

/**
 * A TokenReview or SubjectAccessReview: synchronous (answered from the watch caches), so the whole
 * request is one turn of the event loop. The log line names the key, never the token.
 */
function reviewHandler(path: string, review: Review, opts: ReviewRouteOptions): Handler {
  const route = path.replace(/^\//, "");
  return (res, body) => {
    const started = process.hrtime.bigint();
    let code = 200;
    let log: ReviewAnswer["log"] | undefined;
    let error: string | undefined;
    let parsed: unknown;
    try {
      parsed = parseJsonBody(body);
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
 * A review answer, always HTTP 200 (the decision is inside), with the headers express's res.json
 * set.
 */
function sendJson(res: ServerResponse, body: object): void {
  const payload = JSON.stringify(body);
  res.writeHead(200, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(payload),
  });
  res.end(payload);
}
