// Every check that needs the API server fails closed: when it cannot be asked, the admission request
// is refused with 503 and a message that says which check was skipped and why.

import { KubeError, newServiceUnavailable } from "../shared/status.js";
import { TransportError, type KubeResponse } from "../shared/transport.js";

const MAX_DETAIL = 300;

/** `cannot <check>: <why>`, with credentials removed by `redact`. */
export function unavailable(
  check: string,
  why: string,
  redact: (text: string) => string,
): KubeError {
  return newServiceUnavailable(redact(`cannot ${check}: ${why}`));
}

/** Why an HTTP answer is not the one we needed, e.g. `API server answered 403 Forbidden: ...`. */
export function describeAnswer(res: KubeResponse): string {
  const status = statusText(res.body);
  const detail = status ?? (typeof res.body === "string" ? res.body.trim() : "");
  return `API server answered ${res.status}${detail ? ` ${clip(detail)}` : ""}`;
}

/** Why a request got no answer (TransportError) or failed otherwise. */
export function describeError(err: unknown): string {
  if (err instanceof TransportError) return err.message;
  if (err instanceof KubeError) return err.message;
  return `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}

/** `Reason: message` of a metav1.Status body, or null when the body is something else. */
function statusText(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const reason = Object.hasOwn(body, "reason") ? (body as { reason: unknown }).reason : undefined;
  const message = Object.hasOwn(body, "message") ? (body as { message: unknown }).message : "";
  if (typeof reason !== "string" || typeof message !== "string") return null;
  return message ? `${reason}: ${message}` : reason;
}

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}...` : text;
}
