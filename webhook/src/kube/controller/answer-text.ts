// Why an API server's answer or a failed request did not give what was needed, in one line for a
// log or an error: `API server answered 403 Forbidden: ...`. Generic: the watch cache words its
// failures with it, and kube/fail-closed.ts its 503s.

import { KubeError } from "../../shared/status.js";
import { TransportError, type KubeResponse } from "../../shared/transport.js";

const MAX_DETAIL = 300;

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
