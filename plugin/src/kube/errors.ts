// Errors of talking to the API server: an error answer (vgate's one error type, KubeError, which
// carries the answer's metav1.Status), no answer at all, or a kubeconfig that cannot be used.
// cli/errors.ts prints them the way kubectl does.

import { KubeError, type StatusReason } from "../../../webhook/src/shared/status.js";

/** A kubeconfig (or a connection flag) that cannot be used. */
export class KubeconfigError extends Error {
  override readonly name = "KubeconfigError";
}

/**
 * The API server does not serve OwnedAccessKeys in the group the plugin asked for: the CRD is not
 * installed, or vgate was installed with another group domain. `servedIn` are the groups
 * management.* that do serve them, found by discovery.
 */
export class ResourceTypeError extends Error {
  override readonly name = "ResourceTypeError";
  constructor(
    readonly resource: string,
    readonly group: string,
    readonly version: string,
    readonly servedIn: readonly string[],
  ) {
    super(`the server doesn't have a resource type "${resource}" in group "${group}"`);
  }
}

/** No HTTP answer: refused, reset, TLS failure or --request-timeout; `server` is the URL used. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  constructor(
    message: string,
    readonly server: string,
    readonly refused: boolean,
  ) {
    super(message);
  }
}

// client-go's reasons for answers without a Status body (apierrors.NewGenericServerResponse).
const REASONS: Record<number, string> = {
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

/** The error of an error answer; a body that is no Status gets client-go's generic wording. */
export function serverError(code: number, body: unknown): KubeError {
  const b = body as { kind?: unknown; reason?: unknown; message?: unknown } | undefined;
  if (b && typeof b === "object" && b.kind === "Status") {
    // The server's reason as it is, even one vgate itself never sends.
    const reason = (
      typeof b.reason === "string" ? b.reason : (REASONS[code] ?? "")
    ) as StatusReason;
    return new KubeError(code, reason, typeof b.message === "string" ? b.message : "");
  }
  const reason = REASONS[code] ?? "InternalError";
  const text = typeof body === "string" ? body.trim() : "";
  const message =
    code === 404
      ? "the server could not find the requested resource"
      : `an error on the server (${JSON.stringify(text || "unknown")}) has prevented the request from succeeding`;
  return new KubeError(code, reason as StatusReason, message);
}
