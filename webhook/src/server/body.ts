// Reading an admission request body: JSON only, at most 3 MiB, valid UTF-8, bounded nesting.
// Every failure is a metav1.Status with the right HTTP code (400, 413 or 415); nothing here can
// crash the process or keep a request hanging.

import express, { type NextFunction, type Request, type Response } from "express";
import { KubeError, newBadRequest } from "../api/status.js";

/** kube-apiserver caps request bodies at 3 MiB; an AdmissionReview of a valid object fits. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Deeper than any OwnedAccessKey can be; keeps recursive code downstream safe. */
export const MAX_JSON_DEPTH = 100;

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function sendStatus(res: Response, err: KubeError): void {
  if (err.details?.retryAfterSeconds)
    res.setHeader("Retry-After", String(err.details.retryAfterSeconds));
  res.status(err.code).type("application/json").send(JSON.stringify(err.toStatus()));
}

/** 415 unless the body is declared as JSON (optionally `charset=utf-8`). */
export function requireJson(req: Request, res: Response, next: NextFunction): void {
  const type = req.headers["content-type"];
  const [mediaType = "", ...params] = (type ?? "").split(";").map((s) => s.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith("charset="))?.slice("charset=".length);
  if (mediaType === "application/json" && (!charset || charset.replace(/"/g, "") === "utf-8")) {
    next();
    return;
  }
  sendStatus(
    res,
    new KubeError(
      415,
      "UnsupportedMediaType",
      `unsupported media type ${JSON.stringify(type ?? "")}: send the AdmissionReview as application/json (UTF-8)`,
    ),
  );
}

/** Raw bytes, with body-parser enforcing the limit (413) before and while reading. */
export const rawBody = express.raw({ type: () => true, limit: MAX_BODY_BYTES, inflate: true });

/** Throws a 400 when nesting exceeds `max`; iterative, so hostile depth cannot overflow the stack. */
export function assertDepth(value: unknown, max = MAX_JSON_DEPTH): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) throw newBadRequest(`request body is nested deeper than ${max} levels`);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
}

/** Decodes and parses the raw body; throws a 400 KubeError that says what was wrong. */
export function parseJsonBody(body: unknown): unknown {
  if (!Buffer.isBuffer(body) || body.length === 0) throw newBadRequest("request body is empty");
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw newBadRequest("request body is not valid UTF-8");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw newBadRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  assertDepth(parsed);
  return parsed;
}

interface BodyParserError {
  status?: number;
  type?: string;
  message?: string;
}

/** Maps body-parser's errors (too large, aborted, bad encoding) to Status responses. */
export function bodyErrorHandler(
  err: unknown,
  _req: Request,
  res: Response,
  next: NextFunction,
): void {
  if (res.headersSent) {
    next(err);
    return;
  }
  const e = (err ?? {}) as BodyParserError;
  if (e.type === "entity.too.large" || e.status === 413) {
    sendStatus(
      res,
      new KubeError(
        413,
        "RequestEntityTooLarge",
        `request body is larger than ${MAX_BODY_BYTES} bytes (3 MiB)`,
      ),
    );
    return;
  }
  if (e.status === 415) {
    sendStatus(
      res,
      new KubeError(415, "UnsupportedMediaType", e.message ?? "unsupported content encoding"),
    );
    return;
  }
  if (e.status && e.status >= 400 && e.status < 500) {
    sendStatus(res, newBadRequest(e.message ?? "bad request"));
    return;
  }
  next(err);
}
