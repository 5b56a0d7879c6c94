// Builders for AdmissionReview requests about OwnedAccessKeys, shaped like the wire fixture in
// ../shared/fixtures/k8s-wire/admission.k8s.io.v1.AdmissionReview.json.

import { randomUUID } from "node:crypto";
import { sharedFixture } from "./fixtures.js";

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
    spec: { user: "alice", type: "User", key: "k".repeat(43), ...spec },
  };
}

/** Takes the shared round-trip fixture and fills it with a realistic OwnedAccessKey request. */
export function review(input: ReviewInput): Json {
  const fixture = sharedFixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
  const group = input.group ?? "management.loft.sh";
  const request = { ...(fixture.request as Json) };
  const obj = input.object === undefined ? accessKey(input.name ?? "k1") : input.object;
  const name =
    input.name ?? ((obj?.metadata as Json | undefined)?.name as string | undefined) ?? "";
  Object.assign(request, {
    uid: input.uid ?? randomUUID(),
    kind: { group, version: "v1", kind: "OwnedAccessKey" },
    resource: { group, version: "v1", resource: "ownedaccesskeys" },
    requestKind: { group, version: "v1", kind: "OwnedAccessKey" },
    requestResource: { group, version: "v1", resource: "ownedaccesskeys" },
    subResource: "",
    requestSubResource: "",
    name,
    namespace: "",
    operation: input.operation ?? "CREATE",
    userInfo: {
      username: input.username ?? "alice",
      uid: "u-1",
      groups: input.groups ?? ["system:authenticated"],
      extra: {},
    },
    object: obj,
    oldObject: input.oldObject ?? null,
    dryRun: input.dryRun ?? false,
    options: null,
  });
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request };
}
