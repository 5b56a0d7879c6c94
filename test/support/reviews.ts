// Builders for AdmissionReview requests, shaped like the wire fixture
// test/fixtures/k8s-wire/admission.k8s.io.v1.AdmissionReview.json (a CREATE as kube-apiserver
// sends it; see test/fixtures/README.md): objectReview for any kind, resource and operation;
// review for OwnedAccessKeys.

import { randomBytes, randomUUID } from "node:crypto";
import { fixture } from "./fixtures.js";

type Json = Record<string, unknown>;

export interface ReviewInput {
  operation?: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  object?: Json | null;
  oldObject?: Json | null;
  name?: string;
  username?: string;
  groups?: string[];
  group?: string;
  uid?: string;
  dryRun?: boolean;
}

export function accessKey(
  name: string,
  spec: Json = {},
  metadata: Json = {},
  group = "management.loft.sh",
): Json {
  return {
    apiVersion: `${group}/v1`,
    kind: "OwnedAccessKey",
    metadata: { name, ...metadata },
    // A key of its own each time: vgate refuses a key another stored object already has.
    spec: { user: "alice", type: "User", key: randomBytes(32).toString("base64url"), ...spec },
  };
}

/** The `options` kube sends with each operation (CREATE's are the fixture's own). */
function optionsFor(operation: string, createOptions: unknown): Json | null {
  const meta = { apiVersion: "meta.k8s.io/v1" };
  switch (operation) {
    case "CREATE":
      return createOptions as Json;
    case "UPDATE":
      return { kind: "UpdateOptions", ...meta };
    case "DELETE":
      return { kind: "DeleteOptions", ...meta };
    default:
      return null;
  }
}

/** A group/version/kind or group/version/resource, as AdmissionRequest carries them. */
export interface GroupVersion {
  group: string;
  version: string;
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** An AdmissionReview about any object: what kube-apiserver would send for it. */
export interface ObjectReviewInput {
  /** The object's kind; group and version come from `apiVersion` when not given. */
  kind: string;
  apiVersion?: string;
  group?: string;
  version?: string;
  /** The plural resource, e.g. "endpoints", "endpointslices", "ownedaccesskeys". */
  resource: string;
  subResource?: string;
  operation?: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  object: Json | null;
  oldObject?: Json | null;
  /** Default: the object's (else the old object's) metadata.name / metadata.namespace. */
  name?: string;
  namespace?: string;
  userInfo?: UserInfo;
  uid?: string;
  dryRun?: boolean;
}

/** AdmissionRequest's string fields with `omitempty`. */
const OMIT_EMPTY = new Set(["subResource", "requestSubResource", "name", "namespace"]);

function groupVersion(input: ObjectReviewInput): GroupVersion {
  const apiVersion =
    input.apiVersion ?? ((input.object ?? input.oldObject)?.apiVersion as string | undefined);
  const [g, v] = apiVersion?.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return { group: input.group ?? g ?? "", version: input.version ?? v ?? "v1" };
}

/**
 * Takes the repository's wire fixture and fills it with the request asked for, in the field order
 * of Go's admission/v1 AdmissionRequest, with empty strings left out as its `omitempty` does (a
 * cluster-scoped resource has no namespace; a CREATE with only generateName has no name; most
 * requests have no subResource). The `options` are those kube sends with the operation.
 */
export function objectReview(input: ObjectReviewInput): Json {
  const wire = fixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
  const fromWire = wire.request as Json;
  const operation = input.operation ?? "CREATE";
  const meta = ((input.object ?? input.oldObject)?.metadata ?? {}) as Json;
  const gv = groupVersion(input);
  const kind = { ...gv, kind: input.kind };
  const resource = { ...gv, resource: input.resource };
  const user = input.userInfo ?? { username: "alice", groups: ["system:authenticated"] };
  const request: Json = {
    uid: input.uid ?? randomUUID(),
    kind,
    resource,
    subResource: input.subResource ?? "",
    requestKind: kind,
    requestResource: resource,
    requestSubResource: input.subResource ?? "",
    name: input.name ?? (meta.name as string | undefined) ?? "",
    namespace: input.namespace ?? (meta.namespace as string | undefined) ?? "",
    operation,
    userInfo: {
      username: user.username,
      uid: user.uid ?? "u-1",
      groups: user.groups ?? [],
      extra: user.extra ?? {},
    },
    object: input.object,
    oldObject: input.oldObject ?? null,
    dryRun: input.dryRun ?? false,
    options: optionsFor(operation, fromWire.options),
  };
  const omitted = Object.entries(request).filter(([k, v]) => !(OMIT_EMPTY.has(k) && v === ""));
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: Object.fromEntries(omitted),
  };
}

/** An AdmissionReview about an OwnedAccessKey (cluster-scoped), by default a CREATE by alice. */
export function review(input: ReviewInput): Json {
  const group = input.group ?? "management.loft.sh";
  const object = input.object === undefined ? accessKey(input.name ?? "k1") : input.object;
  const name =
    input.name ?? ((object?.metadata as Json | undefined)?.name as string | undefined) ?? "";
  return objectReview({
    kind: "OwnedAccessKey",
    group,
    version: "v1",
    resource: "ownedaccesskeys",
    operation: input.operation ?? "CREATE",
    object,
    oldObject: input.oldObject ?? null,
    name,
    // Cluster-scoped: never a namespace, whatever the object says.
    namespace: "",
    userInfo: {
      username: input.username ?? "alice",
      uid: "u-1",
      groups: input.groups ?? ["system:authenticated"],
      extra: {},
    },
    ...(input.uid === undefined ? {} : { uid: input.uid }),
    dryRun: input.dryRun ?? false,
  });
}
