// Builders for AdmissionReview requests about OwnedAccessKeys, shaped like the wire fixture
// test/fixtures/k8s-wire/admission.k8s.io.v1.AdmissionReview.json (a CREATE as kube-apiserver
// sends it; see test/fixtures/README.md).

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

/**
 * Takes the repository's wire fixture and fills it with the OwnedAccessKey request asked for. The
 * fixture's field order is kept, and empty strings are left out as Go's `omitempty` does (a
 * cluster-scoped resource has no namespace; a CREATE with only generateName has no name).
 */
export function review(input: ReviewInput): Json {
  const wire = fixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
  const group = input.group ?? "management.loft.sh";
  const request = { ...(wire.request as Json) };
  const operation = input.operation ?? "CREATE";
  const obj = input.object === undefined ? accessKey(input.name ?? "k1") : input.object;
  const name =
    input.name ?? ((obj?.metadata as Json | undefined)?.name as string | undefined) ?? "";
  Object.assign(request, {
    uid: input.uid ?? randomUUID(),
    kind: { group, version: "v1", kind: "OwnedAccessKey" },
    resource: { group, version: "v1", resource: "ownedaccesskeys" },
    requestKind: { group, version: "v1", kind: "OwnedAccessKey" },
    requestResource: { group, version: "v1", resource: "ownedaccesskeys" },
    name,
    operation,
    userInfo: {
      username: input.username ?? "alice",
      uid: "u-1",
      groups: input.groups ?? ["system:authenticated"],
      extra: {},
    },
    object: obj,
    oldObject: input.oldObject ?? null,
    dryRun: input.dryRun ?? false,
    options: optionsFor(operation, request.options),
  });
  if (name === "") delete request.name;
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request };
}
