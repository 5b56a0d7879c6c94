// The one error type of vgate. It carries a Kubernetes metav1.Status shape, so any failure can be
// returned to kube-apiserver, written to a client, or printed by the plugin the way kubectl would.

import { aggregateText, toCause, type FieldError, type StatusCause } from "./field-errors.js";

export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Invalid"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "ServerTimeout"
  | "Timeout"
  | "InternalError"
  | "ServiceUnavailable"
  | "TooManyRequests"
  | "Expired"
  | "Gone";

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status */
export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Success" | "Failure";
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A group-qualified resource, e.g. `ownedaccesskeys.management.loft.sh`. */
export interface GroupResource {
  group: string;
  resource: string;
}
/** A group-qualified kind, e.g. `OwnedAccessKey.management.loft.sh`. */
export interface GroupKind {
  group: string;
  kind: string;
}

const qualified = (name: string, group: string): string => (group ? `${name}.${group}` : name);

export class KubeError extends Error {
  override readonly name = "KubeError";
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  get causes(): StatusCause[] {
    return this.details?.causes ?? [];
  }

  toStatus(): Status {
    const status: Status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** 422 Invalid, as apierrors.NewInvalid: `Kind.group "name" is invalid: <errors>`. */
export function newInvalid(gk: GroupKind, name: string, errors: readonly FieldError[]): KubeError {
  return new KubeError(
    422,
    "Invalid",
    `${qualified(gk.kind, gk.group)} ${JSON.stringify(name)} is invalid: ${aggregateText(errors)}`,
    { name, group: gk.group, kind: gk.kind, causes: errors.map(toCause) },
  );
}

/** 409 AlreadyExists, as apierrors.NewAlreadyExists. */
export function newAlreadyExists(gr: GroupResource, name: string, prefix = ""): KubeError {
  return new KubeError(
    409,
    "AlreadyExists",
    `${prefix}${qualified(gr.resource, gr.group)} ${JSON.stringify(name)} already exists`,
    { name, group: gr.group, kind: gr.resource },
  );
}

/** 409 AlreadyExists after generateName ran out of names, as apierrors.NewGenerateNameConflict. */
export function newGenerateNameConflict(
  gr: GroupResource,
  name: string,
  retryAfterSeconds: number,
): KubeError {
  return new KubeError(
    409,
    "AlreadyExists",
    `${qualified(gr.resource, gr.group)} ${JSON.stringify(name)} already exists, the server was not able to generate a unique name for the object`,
    { name, group: gr.group, kind: gr.resource, retryAfterSeconds },
  );
}

/** 403 Forbidden, as apierrors.NewForbidden: `resource.group "name" is forbidden: <why>`. */
export function newForbidden(gr: GroupResource, name: string, why: string): KubeError {
  return new KubeError(
    403,
    "Forbidden",
    `${qualified(gr.resource, gr.group)} ${JSON.stringify(name)} is forbidden: ${why}`,
    { name, group: gr.group, kind: gr.resource },
  );
}

export function newNotFound(gr: GroupResource, name: string): KubeError {
  return new KubeError(
    404,
    "NotFound",
    `${qualified(gr.resource, gr.group)} ${JSON.stringify(name)} not found`,
    { name, group: gr.group, kind: gr.resource },
  );
}

export function newBadRequest(message: string): KubeError {
  return new KubeError(400, "BadRequest", message);
}

export function newInternalError(message: string): KubeError {
  return new KubeError(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [{ reason: "InternalError", message, field: "" }],
  });
}

/** 503: a check needs the API server and it could not be reached. We fail closed. */
export function newServiceUnavailable(message: string): KubeError {
  return new KubeError(503, "ServiceUnavailable", message);
}

/** Accepts anything thrown and returns a KubeError; unknown errors become 500 InternalError. */
export function asKubeError(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return newInternalError(message);
}
