// What a fuzzed request got back, judged: an AdmissionReview/TokenReview/SubjectAccessReview of
// the right kind (HTTP 200; an AdmissionReview echoes the request's uid), or a 4xx metav1.Status
// whose code is the HTTP status. Anything else (a 5xx, a malformed answer, no answer within the
// deadline, a dropped connection) is a failure.

import type { Answer } from "../soak/timed-client.js";
import type { FuzzInput } from "./mutations.js";

export interface Judged {
  /** "200 AdmissionReview", "400 Status", ... for the counts. */
  outcome: string;
  /** Why this answer is wrong; undefined when it is acceptable. */
  problem?: string;
}

type Json = Record<string, unknown>;

const REVIEW_KIND: Record<string, string> = {
  "/validate/ownedaccesskeys": "AdmissionReview",
  "/mutate/ownedaccesskeys": "AdmissionReview",
  "/mutate/endpoints": "AdmissionReview",
  "/authenticate": "TokenReview",
  "/authorize": "SubjectAccessReview",
};

export function judge(input: FuzzInput, answer: Answer): Judged {
  if (answer.error === "TIMEOUT")
    return { outcome: "hang", problem: "no answer within the deadline" };
  if (answer.error)
    return {
      outcome: "transport error",
      problem: `transport error ${answer.error}${answer.reused ? ` on a reused connection, after ${answer.previous}` : ""}`,
    };
  let body: Json;
  try {
    body = JSON.parse(answer.text) as Json;
  } catch {
    return {
      outcome: `${answer.status} not JSON`,
      problem: `HTTP ${answer.status}, not JSON: ${answer.text.slice(0, 120)}`,
    };
  }
  if (answer.status === 200) return judgeReview(input, body);
  const outcome = `${answer.status} ${String(body.kind)}`;
  if (answer.status < 400 || answer.status >= 500)
    return { outcome, problem: `HTTP ${answer.status}: ${answer.text.slice(0, 200)}` };
  const wellFormed =
    body.kind === "Status" &&
    body.apiVersion === "v1" &&
    body.status === "Failure" &&
    body.code === answer.status &&
    typeof body.message === "string";
  return wellFormed
    ? { outcome }
    : {
        outcome,
        problem: `a ${answer.status} that is not a metav1.Status: ${answer.text.slice(0, 200)}`,
      };
}

function judgeReview(input: FuzzInput, body: Json): Judged {
  const kind = REVIEW_KIND[input.route]!;
  const outcome = `200 ${String(body.kind)}`;
  if (body.kind !== kind)
    return { outcome, problem: `HTTP 200 but kind ${String(body.kind)}, not ${kind}` };
  if (kind !== "AdmissionReview") {
    const status = body.status as Json | undefined;
    const field = kind === "TokenReview" ? "authenticated" : "allowed";
    return typeof status?.[field] === "boolean"
      ? { outcome }
      : { outcome, problem: `no status.${field}` };
  }
  const response = body.response as Json | undefined;
  if (typeof response?.allowed !== "boolean") return { outcome, problem: "no response.allowed" };
  const sentUid = uidOf(input.body);
  if (response.uid !== sentUid)
    return {
      outcome,
      problem: `response.uid ${JSON.stringify(response.uid)} is not the request's ${JSON.stringify(sentUid)}`,
    };
  const code = (response.status as Json | undefined)?.code;
  if (typeof code === "number" && code >= 500)
    return {
      outcome: `${outcome} (${code})`,
      problem: `denied with code ${code}: ${JSON.stringify(response.status)}`,
    };
  return { outcome };
}

/** request.uid of the body as JSON.parse reads it (the last of repeated keys). */
function uidOf(body: Buffer): unknown {
  try {
    return (JSON.parse(body.toString("utf8")) as { request?: { uid?: unknown } }).request?.uid;
  } catch {
    return undefined;
  }
}
