// Reading an admission request body: JSON only, at most 3 MiB, valid UTF-8, bounded nesting, and
// bounded in time and in total. Every failure is a metav1.Status with the right HTTP code (400, 408,
// 413, 415 or 429); nothing here can crash the process, keep a request hanging or let bodies grow
// memory without bound.

import type { NextFunction, Request, Response } from "express";
import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { KubeError, newBadRequest } from "../shared/status.js";
import { BodyBudget, type BodyHold } from "./body-budget.js";
import { findJsonSyntaxError } from "./json-syntax.js";
import { scrubStatus, type SecretValues } from "./scrub.js";

/** kube-apiserver caps request bodies at 3 MiB; an AdmissionReview of a valid object fits. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/**
 * All bodies held at once, across connections: one of the largest, or hundreds of the usual few
 * KiB. Parsed, a body can take many times its size on the V8 heap for as long as it is answered:
 * a 3 MiB review of 100,000 annotations took vgate from ~75 to 130 MB peak RSS, and two at once to
 * 159 MB, past the 150 MB target. So a second large body waits for `Retry-After`, and small ones
 * are never kept out by large ones (body-budget.ts).
 */
export const MAX_BODY_BYTES_IN_FLIGHT = 4 * 1024 * 1024;
/**
 * kube-apiserver writes a body at once, right after the headers; a gap this long means the client
 * stalled. Generous for a congested network, short enough that stalled clients come and go.
 */
export const BODY_IDLE_MS = 2_000;
/** The whole body must arrive this soon after the headers: 3 MiB in 5 s is 600 KiB/s. */
export const BODY_DEADLINE_MS = 5_000;
/**
 * When bodies are shed: kube-apiserver's own in-flight limit answers 429 with `Retry-After: 1`, and
 * the client-go REST client it calls webhooks with waits that long on a 429 or 5xx that carries
 * Retry-After and tries again (rest.Request, checkWait), within the webhook's timeout.
 */
export const RETRY_AFTER_SECONDS = 1;
/** Deeper than any OwnedAccessKey can be; keeps recursive code downstream safe. */
export const MAX_JSON_DEPTH = 100;

export interface BodyLimits {
  maxBytes: number;
  idleMs: number;
  deadlineMs: number;
  budget: BodyBudget;
}

export function defaultBodyLimits(): BodyLimits {
  return {
    maxBytes: MAX_BODY_BYTES,
    idleMs: BODY_IDLE_MS,
    deadlineMs: BODY_DEADLINE_MS,
    budget: new BodyBudget(MAX_BODY_BYTES_IN_FLIGHT),
  };
}

/**
 * Writes `err` as a metav1.Status, its text scrubbed of `secrets` and of credential shapes. Plain
 * node:http, with the headers express's res.send would set, so that the review routes (which
 * express never sees) and express's own routes answer alike.
 */
export function sendStatus(res: ServerResponse, err: KubeError, secrets?: SecretValues): void {
  if (err.details?.retryAfterSeconds)
    res.setHeader("Retry-After", String(err.details.retryAfterSeconds));
  const payload = JSON.stringify(scrubStatus(err.toStatus(), secrets));
  res.statusCode = err.code;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(payload));
  res.end(payload);
}

/**
 * Null when the body is declared as JSON (optionally `charset=utf-8`), else the 415 to answer.
 * kube-apiserver sends exactly "application/json", checked first without parsing.
 */
export function contentTypeRefusal(type: string | undefined): KubeError | null {
  if (type === "application/json") return null;
  const [mediaType = "", ...params] = (type ?? "").split(";").map((s) => s.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith("charset="))?.slice("charset=".length);
  if (mediaType === "application/json" && (!charset || charset.replace(/"/g, "") === "utf-8")) {
    return null;
  }
  // The header is the client's text: shown only when short (and scrubbed, as every message is).
  const shown = type && type.length <= 100 ? ` ${JSON.stringify(type)}` : "";
  return new KubeError(
    415,
    "UnsupportedMediaType",
    `unsupported media type${shown}: send the AdmissionReview as application/json (UTF-8)`,
  );
}

/** Why a body was refused, for metrics and logs. */
export type BodyRefusal = "too-large" | "encoding" | "shed" | "idle" | "deadline";

export function tooLarge(maxBytes = MAX_BODY_BYTES): KubeError {
  const mib = maxBytes / (1024 * 1024);
  return new KubeError(
    413,
    "RequestEntityTooLarge",
    `request body is larger than ${maxBytes} bytes${Number.isInteger(mib) ? ` (${mib} MiB)` : ""}`,
  );
}

const refusals: Record<Exclude<BodyRefusal, "too-large">, (limits: BodyLimits) => KubeError> = {
  encoding: () =>
    new KubeError(
      415,
      "UnsupportedMediaType",
      "content encodings are not supported: send the AdmissionReview uncompressed",
    ),
  shed: (limits) =>
    new KubeError(
      429,
      "TooManyRequests",
      `too many request bytes in flight (limit ${limits.budget.capacity}); retry after ${RETRY_AFTER_SECONDS}s`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS },
    ),
  // apimachinery has no reason for 408; Timeout is its reason for "not done in time".
  idle: (limits) =>
    new KubeError(408, "Timeout", `request body stalled: no data for ${limits.idleMs} ms`),
  deadline: (limits) =>
    new KubeError(408, "Timeout", `request body not received within ${limits.deadlineMs} ms`),
};

function refusalError(why: BodyRefusal, limits: BodyLimits): KubeError {
  return why === "too-large" ? tooLarge(limits.maxBytes) : refusals[why](limits);
}

/** Reads a request's body within the limits, then calls `done` with it (see readBody). */
export type BodyRead = (
  req: IncomingMessage,
  res: ServerResponse,
  done: (body: Buffer) => void,
) => void;

/**
 * Reads the raw body, within the limits, and hands it to `done`. A declared Content-Length over the
 * size limit gets its 413 at once, unread. Before reading, the body takes its size from the shared
 * budget (body-budget.ts; a chunked one 64 KiB, doubling as it grows), or is refused with 429 and
 * Retry-After; it keeps it until its answer is written. A body that stalls or takes too long is
 * cut off with 408. A refused request gets its Status, nothing more of it is read, and its
 * connection is closed.
 */
export function readBody(
  limits: BodyLimits,
  onRefused: (why: BodyRefusal, err: KubeError) => void = () => undefined,
): BodyRead {
  const refuse = (res: ServerResponse, why: BodyRefusal) => {
    const err = refusalError(why, limits);
    onRefused(why, err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    closeAfterAnswer(res);
    sendStatus(res, err);
  };
  return (req, res, done) => {
    const encoding = req.headers["content-encoding"];
    if (encoding && encoding.trim().toLowerCase() !== "identity") {
      // kube-apiserver never compresses a webhook request; a compressed body would be bigger
      // inflated than the budget counted.
      refuse(res, "encoding");
      return;
    }
    // Node has checked that a Content-Length is a plain decimal number.
    const length = req.headers["content-length"];
    const declared = length === undefined ? undefined : Number(length);
    if (declared !== undefined && declared > limits.maxBytes) {
      refuse(res, "too-large");
      return;
    }
    new BodyReader(req, res, limits, declared, done, (why) => refuse(res, why)).start();
  };
}

/**
 * What a chunked body (no Content-Length) takes at first: any usual AdmissionReview fits. It takes
 * more, doubling, as it grows; kube-apiserver never sends one.
 */
const CHUNKED_FIRST_BYTES = 64 * 1024;

/**
 * Go's HTTP server waits this long between its FIN and closing a connection whose request it did
 * not read (rstAvoidanceDelay), so that the client reads the answer before the reset.
 */
const LINGER_MS = 500;
/**
 * Connections lingering at once. Under a flood of refused bodies each would hold its TLS state and
 * buffers for LINGER_MS, so memory would follow the flood's rate; past this many, a connection is
 * closed at once, as Node would close it.
 */
const MAX_LINGERING = 64;
let lingering = 0;

/**
 * Answers with `Connection: close`, and closes gently. Node destroys such a socket as soon as the
 * answer is written; with request bytes still unread the kernel then resets the connection, and a
 * client still writing its body may never see the answer (2 of 20 early 413s were lost so, to
 * Node's own client). Instead: FIN after the answer, close LINGER_MS later. Node calls destroySoon
 * once the answer is written (resOnFinish: `Connection: close` sets res._last), first resuming a
 * body nobody read (req._dump), so the rest of a too-large one is read and dropped while it
 * lingers. A client that does not read never sees the FIN or the close; vgate's side is gone all
 * the same (lingering.test.ts).
 */
function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader("Connection", "close");
  const socket = res.socket;
  if (!socket) return;
  socket.destroySoon = () => {
    if (lingering >= MAX_LINGERING) {
      socket.destroy();
      return;
    }
    lingering++;
    socket.end();
    setTimeout(() => {
      lingering--;
      socket.destroy();
    }, LINGER_MS).unref();
  };
}

/** One body being read; it holds its bytes in the budget until its answer is written. */
class BodyReader implements BodyHold {
  held = 0;
  private chunks: Buffer[] = [];
  private length = 0;
  private lastDataAt = Date.now();
  private readonly deadline: number;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly limits: BodyLimits,
    /** The Content-Length, when the request has one (else the body is chunked). */
    private readonly declared: number | undefined,
    private readonly done: (body: Buffer) => void,
    private readonly refuse: (why: BodyRefusal) => void,
  ) {
    this.deadline = this.lastDataAt + limits.deadlineMs;
  }

  start(): void {
    this.limits.budget.open(this);
    // Whether answered, refused or cut off, the bytes go back once the response is over.
    this.res.once("close", () => {
      this.stop();
      this.limits.budget.release(this);
    });
    // Listening first marks the request as being read, so that Node does not go on to read and
    // discard the rest of a refused body: fail() pauses it, and the rest stays in the kernel.
    this.req.on("data", this.onData);
    this.req.once("end", this.onEnd);
    this.timer = setTimeout(this.onTimer, this.limits.idleMs);
    const first = this.declared ?? Math.min(CHUNKED_FIRST_BYTES, this.limits.maxBytes);
    if (!this.limits.budget.take(this, first)) this.fail("shed");
  }

  shed(): void {
    this.fail("shed");
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.finished) return;
    this.length += chunk.length;
    // Node's parser never delivers more than a Content-Length; a chunked body may try.
    if (this.length > this.limits.maxBytes) return this.fail("too-large");
    if (this.length > this.held && !this.grow()) return this.fail("shed");
    this.chunks.push(chunk);
    this.lastDataAt = Date.now();
  };

  /** A chunked body takes twice what it held, so it asks the budget a few times, not per chunk. */
  private grow(): boolean {
    const want = Math.min(this.limits.maxBytes, Math.max(this.length, this.held * 2));
    return this.limits.budget.take(this, want - this.held);
  }

  private readonly onEnd = (): void => {
    if (this.finished) return;
    this.stop();
    this.limits.budget.received(this);
    this.limits.budget.shrink(this, this.length);
    const chunks = this.chunks;
    this.chunks = [];
    this.done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.length));
  };

  private readonly onTimer = (): void => {
    if (this.finished) return;
    const now = Date.now();
    if (now >= this.deadline) return this.fail("deadline");
    const idleUntil = this.lastDataAt + this.limits.idleMs;
    if (now >= idleUntil) return this.fail("idle");
    this.timer = setTimeout(this.onTimer, Math.min(idleUntil, this.deadline) - now);
  };

  private fail(why: BodyRefusal): void {
    if (this.finished) return;
    this.stop();
    // Read no more of it: what the client still sends waits in the kernel until the close.
    this.req.pause();
    this.chunks = [];
    this.limits.budget.release(this);
    this.refuse(why);
  }

  private stop(): void {
    this.finished = true;
    clearTimeout(this.timer);
    this.req.off("data", this.onData);
  }
}

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
  } catch {
    throw newBadRequest(jsonSyntaxMessage(body));
  }
  if (!large) assertValueDepth(parsed);
  return parsed;
}

/**
 * Where the JSON went wrong, by position only: V8's message quotes the text around the error, and
 * that text can be a secret.
 */
export function jsonSyntaxMessage(body: Uint8Array): string {
  const e = findJsonSyntaxError(body);
  if (!e) return "request body is not valid JSON";
  return `request body is not valid JSON: ${e.problem} at line ${e.line}, column ${e.column} (byte ${e.offset})`;
}

/**
 * Errors that express or its router raise with a client status (a malformed URI, say) become a 400
 * Status; their text is scrubbed, since it may quote the request.
 */
export function clientErrorHandler(
  err: unknown,
  _req: Request,
  res: Response,
  next: NextFunction,
): void {
  const e = (err ?? {}) as { status?: unknown; message?: unknown };
  if (res.headersSent || typeof e.status !== "number" || e.status < 400 || e.status >= 500) {
    next(err);
    return;
  }
  sendStatus(res, newBadRequest(typeof e.message === "string" ? e.message : "bad request"));
}
