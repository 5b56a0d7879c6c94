// The KubeError of an error answer from kube-apiserver: its metav1.Status as it is, or, for a body
// that is no Status, client-go's generic reason for the code (apierrors.NewGenericServerResponse).

import type { StatusCause } from "./field-errors.js";
import { KubeError, type StatusDetails, type StatusReason } from "./status.js";
import type { KubeResponse } from "./transport.js";

const REASONS: Record<number, StatusReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  503: "ServiceUnavailable",
  504: "Timeout",
};

export function answerError(res: KubeResponse): KubeError {
  const body = res.body as
    { kind?: unknown; reason?: unknown; message?: unknown; details?: unknown } | undefined;
  const reason = REASONS[res.status] ?? "InternalError";
  if (body && typeof body === "object" && body.kind === "Status") {
    return new KubeError(
      res.status,
      typeof body.reason === "string" && body.reason ? (body.reason as StatusReason) : reason,
      typeof body.message === "string" ? body.message : "",
      statusDetails(body.details),
    );
  }
  const text = typeof res.body === "string" ? res.body.trim() : "";
  return new KubeError(
    res.status,
    reason,
    `an error on the server (${JSON.stringify(text || "unknown")}) has prevented the request from succeeding`,
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The answer's details (which object, and why), keeping only well-typed fields; else undefined. */
function statusDetails(value: unknown): StatusDetails | undefined {
  if (!isRecord(value)) return undefined;
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
    details.causes = causes.filter(isRecord).map((c): StatusCause => ({
      reason: text(c["reason"]),
      message: text(c["message"]),
      field: text(c["field"]),
    }));
  }
  return details;
}
