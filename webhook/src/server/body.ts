// Reading an admission request body: JSON only, at most 3 MiB, valid UTF-8, bounded nesting.
// Every failure is a metav1.Status with the right HTTP code (400, 413 or 415); nothing here can
// crash the process or keep a request hanging.

import express, { type NextFunction, type Request, type Response } from "express";
import { isUtf8 } from "node:buffer";
import { KubeError, newBadRequest } from "../api/status.js";

/** kube-apiserver caps request bodies at 3 MiB; an AdmissionReview of a valid object fits. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** Deeper than any OwnedAccessKey can be; keeps recursive code downstream safe. */
export const MAX_JSON_DEPTH = 100;

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

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Throws a 400 when JSON text nests deeper than `max`. Scans the bytes once, before JSON.parse, so
 * hostile depth never reaches the parser or any recursive code, and nothing is allocated.
 */
export function assertJsonDepth(bytes: Uint8Array, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) throw newBadRequest(`request body is nested deeper than ${max} levels`);
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
}

/** Throws a 400 when a parsed value nests deeper than `max`; visits containers only. */
export function assertValueDepth(value: unknown, max = MAX_JSON_DEPTH): void {
  const values: object[] = [];
  const depths: number[] = [];
  if (typeof value === "object" && value !== null) {
    values.push(value);
    depths.push(1);
  }
  while (values.length) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth > max) throw newBadRequest(`request body is nested deeper than ${max} levels`);
    if (Array.isArray(v)) {
      for (const child of v) pushContainer(child, depth + 1, values, depths);
    } else {
      // for...in over a JSON.parse result visits exactly its own keys, without an array per object.
      for (const key in v)
        pushContainer((v as Record<string, unknown>)[key], depth + 1, values, depths);
    }
  }
}

function pushContainer(child: unknown, depth: number, values: object[], depths: number[]): void {
  if (typeof child === "object" && child !== null) {
    values.push(child);
    depths.push(depth);
  }
}

/**
 * Bodies above this size are checked for nesting before parsing (so a 3 MiB `[[[[…` never becomes
 * a million arrays); smaller ones are parsed first, which V8 does iteratively at any depth, and
 * their containers walked, which costs far less than scanning every byte.
 */
const PRESCAN_BYTES = 64 * 1024;

/** Decodes and parses the raw body; throws a 400 KubeError that says what was wrong. */
export function parseJsonBody(body: unknown): unknown {
  if (!Buffer.isBuffer(body) || body.length === 0) throw newBadRequest("request body is empty");
  if (!isUtf8(body)) throw newBadRequest("request body is not valid UTF-8");
  const large = body.length > PRESCAN_BYTES;
  if (large) assertJsonDepth(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw newBadRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!large) assertValueDepth(parsed);
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
