// What every object handler gets (one request to a resource URL, with the server's admission and
// schema-validation hooks) and gives back (a status, a body and admission warnings), plus the small
// steps the write verbs share: decoding a body, the admission calls, the server-owned metadata.

import { randomUUID } from "node:crypto";
import { newBadRequest } from "../../../webhook/src/api/status.js";
import type { AdmissionAttributes, AdmissionHook, AdmissionOperation } from "./admission-types.js";
import type { UserIdentity } from "./authorizer.js";
import type { QualifiedResource } from "./errors.js";
import type { RequestInfo } from "./request-info.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import type { KubeObject, ObjectStore } from "./store.js";

export interface Reply {
  status: number;
  body: unknown;
  /** Admission warnings; the server sends each as a `Warning: 299 - "..."` header. */
  warnings?: string[];
}

/**
 * Schema validation and pruning of a custom resource (or any type), run between mutating and
 * validating admission. Returns the object to store; throws a 422 KubeError when invalid.
 */
export type ObjectValidator = (
  type: ResourceType,
  obj: KubeObject,
  oldObj: KubeObject | null,
) => KubeObject | Promise<KubeObject>;

export const acceptAll: ObjectValidator = (_type, obj) => obj;

export interface ObjectRequest {
  store: ObjectStore;
  type: ResourceType;
  info: RequestInfo;
  query: URLSearchParams;
  /** Parsed JSON, or the raw text for a PATCH whose media type is not JSON. */
  body: unknown;
  /** The Content-Type header, as sent. */
  contentType: string;
  user: UserIdentity;
  admission: AdmissionHook;
  validateObject: ObjectValidator;
}

export const groupResource = (type: ResourceType): QualifiedResource => ({
  group: type.group,
  resource: type.resource,
});

/** One write's admission calls; collects the warnings of both phases in order. */
export class Admission {
  readonly warnings: string[] = [];

  constructor(
    private readonly req: ObjectRequest,
    private readonly operation: AdmissionOperation,
    private readonly dryRun: boolean,
    private readonly options: Record<string, unknown>,
  ) {}

  async mutate(
    name: string,
    object: KubeObject | null,
    oldObject: KubeObject | null,
  ): Promise<KubeObject | null> {
    const out = await this.req.admission.mutate(this.attrs(name, object, oldObject));
    this.warnings.push(...out.warnings);
    return out.object;
  }

  async validate(
    name: string,
    object: KubeObject | null,
    oldObject: KubeObject | null,
  ): Promise<void> {
    const out = await this.req.admission.validate(this.attrs(name, object, oldObject));
    this.warnings.push(...out.warnings);
  }

  private attrs(
    name: string,
    object: KubeObject | null,
    oldObject: KubeObject | null,
  ): AdmissionAttributes {
    return {
      type: this.req.type,
      subresource: this.req.info.subresource,
      operation: this.operation,
      // deletecollection across namespaces: each object's own namespace.
      namespace: this.req.info.namespace || ((object ?? oldObject)?.metadata.namespace ?? ""),
      name,
      object: object && structuredClone(object),
      oldObject: oldObject && structuredClone(oldObject),
      user: this.req.user,
      dryRun: this.dryRun,
      options: this.options,
    };
  }
}

/** Decodes a create or update body as kube's JSON decoder does: apiVersion and kind must match. */
export function decodeObject(type: ResourceType, body: unknown): KubeObject {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw newBadRequest("the body of the request was not a JSON object");
  }
  const obj = structuredClone(body) as Record<string, unknown>;
  const apiVersion = apiVersionOf(type.group, type.version);
  if (obj["apiVersion"] !== undefined && obj["apiVersion"] !== apiVersion) {
    throw newBadRequest(
      `the API version in the data (${String(obj["apiVersion"])}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (obj["kind"] !== undefined && obj["kind"] !== type.kind) {
    throw newBadRequest(`Object kind ${String(obj["kind"])} does not match ${type.kind}`);
  }
  const meta = obj["metadata"] ?? {};
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    throw newBadRequest("metadata must be an object");
  }
  return { ...obj, apiVersion, kind: type.kind, metadata: meta as KubeObject["metadata"] };
}

/**
 * rest.EnsureObjectNamespaceMatchesRequestNamespace: an empty namespace takes the request's, a
 * cluster-scoped object loses any, a different one is 400.
 */
export function ensureNamespace(type: ResourceType, namespace: string, obj: KubeObject): void {
  const meta = obj.metadata;
  if (!type.namespaced) {
    delete meta.namespace;
    return;
  }
  if (meta.namespace && meta.namespace !== namespace) {
    throw newBadRequest(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  }
  meta.namespace = namespace;
}

/** rest.WipeObjectMetaSystemFields: the create handler drops these before admission. */
export function wipeSystemFields(meta: KubeObject["metadata"]): void {
  for (const f of [
    "creationTimestamp",
    "uid",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
  ]) {
    Reflect.deleteProperty(meta, f);
  }
}

/** rest.FillObjectMetaSystemFields: storage sets them after mutating admission. */
export function fillSystemFields(meta: KubeObject["metadata"]): void {
  meta["creationTimestamp"] = now();
  meta["uid"] = randomUUID();
}

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}
