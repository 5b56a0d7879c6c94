// AdmissionReview admission.k8s.io/v1: the wire types and a strict decoder. Anything that is not a
// well-formed v1 AdmissionReview is a 400 with a message that says what is wrong, never a crash.

import { newBadRequest } from "../shared/status.js";
import type { Status } from "../shared/status.js";
import type { UserInfo } from "../api/user-info.js";
import { isObject } from "../shared/json.js";

/** AdmissionRequest.operation. */
export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";
const OPERATIONS: readonly Operation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource: string;
  name: string;
  namespace: string;
  operation: Operation;
  userInfo: UserInfo;
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
  dryRun: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patch?: string;
  patchType?: "JSONPatch";
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: "AdmissionReview";
  response: AdmissionResponse;
}

type Json = Record<string, unknown>;

function own(obj: Json, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function str(obj: Json, key: string, path: string, optional = true): string {
  const v = own(obj, key);
  if (v === undefined || v === null) {
    if (optional) return "";
    throw newBadRequest(`invalid AdmissionReview: ${path}.${key} is required`);
  }
  if (typeof v !== "string") {
    throw newBadRequest(
      `invalid AdmissionReview: ${path}.${key} must be a string, got ${typeName(v)}`,
    );
  }
  return v;
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function optionalObject(obj: Json, key: string, path: string): Json | null {
  const v = own(obj, key);
  if (v === undefined || v === null) return null;
  if (!isObject(v)) {
    throw newBadRequest(
      `invalid AdmissionReview: ${path}.${key} must be an object, got ${typeName(v)}`,
    );
  }
  return v;
}

function stringList(v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) {
    throw newBadRequest(`invalid AdmissionReview: ${path} must be a list of strings`);
  }
  return v as string[];
}

function decodeUserInfo(req: Json): UserInfo {
  const u = optionalObject(req, "userInfo", "request");
  if (!u) throw newBadRequest("invalid AdmissionReview: request.userInfo is required");
  const user: UserInfo = {
    username: str(u, "username", "request.userInfo"),
    groups: stringList(own(u, "groups"), "request.userInfo.groups"),
  };
  const uid = str(u, "uid", "request.userInfo");
  if (uid) user.uid = uid;
  const extra = optionalObject(u, "extra", "request.userInfo");
  if (extra) {
    const decoded: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
    for (const [k, v] of Object.entries(extra)) {
      decoded[k] = stringList(v, `request.userInfo.extra[${JSON.stringify(k)}]`);
    }
    user.extra = decoded;
  }
  return user;
}

function decodeGVK(req: Json): GroupVersionKind {
  const k = optionalObject(req, "kind", "request");
  if (!k) throw newBadRequest("invalid AdmissionReview: request.kind is required");
  return {
    group: str(k, "group", "request.kind"),
    version: str(k, "version", "request.kind"),
    kind: str(k, "kind", "request.kind", false),
  };
}

function decodeGVR(req: Json): GroupVersionResource {
  const r = optionalObject(req, "resource", "request");
  if (!r) throw newBadRequest("invalid AdmissionReview: request.resource is required");
  return {
    group: str(r, "group", "request.resource"),
    version: str(r, "version", "request.resource"),
    resource: str(r, "resource", "request.resource", false),
  };
}

function decodeOperation(req: Json): Operation {
  const op = str(req, "operation", "request", false);
  if (!(OPERATIONS as readonly string[]).includes(op)) {
    throw newBadRequest(
      `invalid AdmissionReview: request.operation ${JSON.stringify(op)} is not one of ${OPERATIONS.join(", ")}`,
    );
  }
  return op as Operation;
}

/** Decodes a parsed JSON body into an AdmissionRequest, or throws a 400 KubeError. */
export function decodeAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) {
    throw newBadRequest(`expected an AdmissionReview object, got ${typeName(body)}`);
  }
  const apiVersion = own(body, "apiVersion");
  const kind = own(body, "kind");
  if (apiVersion !== ADMISSION_API_VERSION || kind !== "AdmissionReview") {
    throw newBadRequest(
      `expected kind AdmissionReview in apiVersion ${ADMISSION_API_VERSION}, got ${JSON.stringify(kind ?? null)} in ${JSON.stringify(apiVersion ?? null)}; configure the webhook with admissionReviewVersions: ["v1"]`,
    );
  }
  const req = optionalObject(body, "request", "");
  if (!req) throw newBadRequest("invalid AdmissionReview: request is required");
  const uid = str(req, "uid", "request", false);
  if (!uid) throw newBadRequest("invalid AdmissionReview: request.uid must not be empty");
  const dryRun = own(req, "dryRun");
  if (dryRun !== undefined && dryRun !== null && typeof dryRun !== "boolean") {
    throw newBadRequest("invalid AdmissionReview: request.dryRun must be a boolean");
  }
  return {
    uid,
    kind: decodeGVK(req),
    resource: decodeGVR(req),
    subResource: str(req, "subResource", "request"),
    name: str(req, "name", "request"),
    namespace: str(req, "namespace", "request"),
    operation: decodeOperation(req),
    userInfo: decodeUserInfo(req),
    object: optionalObject(req, "object", "request"),
    oldObject: optionalObject(req, "oldObject", "request"),
    dryRun: dryRun === true,
  };
}
