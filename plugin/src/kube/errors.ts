// Errors of talking to the API server: an error answer (vgate's one error type, KubeError, which
// carries the answer's metav1.Status; webhook/src/shared/answer-error.ts decodes it), no answer at
// all, or a kubeconfig that cannot be used. cli/errors.ts prints them the way kubectl does.

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
