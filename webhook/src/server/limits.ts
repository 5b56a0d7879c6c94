// How much the server takes on at once, and how long an admission decision may take. Apart from
// app.ts so that flag parsing can show the defaults without loading express.

/**
 * Requests handled at once, across the review routes. kube-apiserver's own limit (its
 * --max-requests-inflight) is 400; vgate answers from caches in well under a millisecond, so 400
 * at once means it is far behind and should shed, as kube-apiserver does, rather than queue.
 */
export const DEFAULT_MAX_IN_FLIGHT = 400;
/**
 * The deadline of an admission decision: below the webhook configurations' timeoutSeconds (10), so
 * that kube-apiserver passes vgate's own denial (504 Timeout, failing closed) on to the client
 * instead of its own webhook timeout. The denial does not yet say which call was slow.
 */
export const DEFAULT_ADMISSION_TIMEOUT_MS = 9_000;
