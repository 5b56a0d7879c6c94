// The KubeError of an error answer from kube-apiserver, one decoder for the server and the plugin:
// a metav1.Status as client-go decodes it (code, reason, message and details), or, for a body that
// is no Status, client-go's generic reason and message for the code
// (apierrors.NewGenericServerResponse).

import type { StatusCause } from "./field-errors.js";
import { isObject } from "./json.js";
import { KubeError, type StatusDetails, type StatusReason } from "./status.js";
import type { KubeResponse } from "./transport.js";

// client-go's reasons for answers without a Status body (apierrors.NewGenericServerResponse).
const REASONS: Record<number, StatusReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/**
 * The error of an error answer as a client sees it, and kubectl prints it: a Status keeps the
 * reason it has, even one vgate never sends, or "" ("Error from server: …"); one with no reason
 * string gets the code's.
 */
export function statusError(code: number, body: unknown): KubeError {
  const b = body as
    { kind?: unknown; reason?: unknown; message?: unknown; details?: unknown } | undefined;
  if (b && typeof b === "object" && b.kind === "Status") {
    const reason = (
      typeof b.reason === "string" ? b.reason : (REASONS[code] ?? "")
    ) as StatusReason;
    const message = typeof b.message === "string" ? b.message : "";
    return new KubeError(code, reason, message, statusDetails(b.details));
  }
  const text = typeof body === "string" ? body.trim() : "";
  const message =
    code === 404
      ? "the server could not find the requested resource"
      : `an error on the server (${JSON.stringify(text || "unknown")}) has prevented the request from succeeding`;
  return new KubeError(code, REASONS[code] ?? "InternalError", message);
}

/**
 * The error of an error answer for the server's own use (its logs, retries and `vgate certs`): an
 * answer without a reason is known by its code, as apierrors.IsNotFound and its kin know it
 * (reasonAndCodeForError), and InternalError when the code says nothing either.
 */
export function answerError(res: KubeResponse): KubeError {
  const err = statusError(res.status, res.body);
  if (err.reason) return err;
  return new KubeError(err.code, REASONS[err.code] ?? "InternalError", err.message, err.details);
}

/** The answer's details (which object, and why), keeping only well-typed fields; else undefined. */
function statusDetails(value: unknown): StatusDetails | undefined {
  if (!isObject(value)) return undefined;
  const details: StatusDetails = {};
  for (const key of ["name", "group", "kind", "uid"] as const) {
    const v = value[key];
    if (typeof v === "string") details[key] = v;
  }
  const retry = value["retryAfterSeconds"];
  if (typeof retry === "number") details.retryAfterSeconds = retry;
  const causes = value["causes"];
  if (Array.isArray(causes)) {
    // metav1.StatusCause's fields are omitempty: a missing one is "".
    const text = (v: unknown): string => (typeof v === "string" ? v : "");
    details.causes = causes.filter(isObject).map((c): StatusCause => ({
      reason: text(c["reason"]),
      message: text(c["message"]),
      field: text(c["field"]),
    }));
  }
  return details;
}
