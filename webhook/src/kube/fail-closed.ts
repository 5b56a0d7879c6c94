// Every check that needs the API server fails closed: when it cannot be asked, the admission request
// is refused with 503 and a message that says which check was skipped and why.

import { KubeError, newServiceUnavailable } from "../shared/status.js";

export { describeAnswer, describeError } from "./controller/answer-text.js";

/** `cannot <check>: <why>`, with credentials removed by `redact`. */
export function unavailable(
  check: string,
  why: string,
  redact: (text: string) => string,
): KubeError {
  return newServiceUnavailable(redact(`cannot ${check}: ${why}`));
}
