// The valid bodies the fuzzer starts from, one set per route: fixed (no random uids or keys), so
// that a seed alone reproduces a run. Each is what kube-apiserver sends: OwnedAccessKey
// AdmissionReviews (CREATE, UPDATE, DELETE, generateName, admin and not), Endpoints
// AdmissionReviews as vCluster's syncer writes them, TokenReviews and SubjectAccessReviews (v1 and
// v1beta1, with and without the access-key extra).

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { accessKeyExtra } from "../../webhook/src/auth/contracts.js";
import type { JsonObject } from "../../webhook/src/patches/types.js";
import { translateEndpointsToHost } from "../../webhook/src/sync/translate-endpoints.js";
import { repoRoot } from "../support/fixtures.js";
import { review } from "../support/reviews.js";

type Json = Record<string, unknown>;

export const ROUTES = [
  "/validate/ownedaccesskeys",
  "/mutate/ownedaccesskeys",
  "/mutate/endpoints",
  "/authenticate",
  "/authorize",
] as const;
export type Route = (typeof ROUTES)[number];

export interface Base {
  name: string;
  route: Route;
  body: Json;
}

/** The vCluster vgate's /mutate/endpoints serves in the fuzz rig (--vcluster-name/-namespace). */
export const VCLUSTER = { name: "my-vcluster", namespace: "vcluster-my-vcluster" };

const KEY = "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz";

function key(name: string, more: Json = {}): Json {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name, ...more },
    spec: {
      user: "alice",
      type: "User",
      key: KEY,
      displayName: "fuzz",
      ttl: 3600,
      scope: { projects: [{ project: "default" }] },
    },
  };
}

function accessKeyBases(): Base[] {
  const stored = key("fuzz-key", {
    uid: "6b1d0c52-1d7c-4a8e-9c37-2f4a9d1e0b77",
    resourceVersion: "7",
    creationTimestamp: "2026-01-01T00:00:00Z",
  });
  const updated = { ...stored, spec: { ...(stored.spec as Json), description: "rotated" } };
  const uid = "0c5e9a77-3f21-4d0b-8e6a-5b9d2c1f4e80";
  const admin = { uid, groups: ["system:masters"] };
  const reviews: [string, Json][] = [
    ["CREATE (admin)", review({ object: key("fuzz-new"), ...admin })],
    ["CREATE (alice)", review({ object: key("fuzz-new"), uid })],
    ["CREATE generateName", review({ object: key("", { generateName: "fuzz-" }), name: "", uid })],
    ["UPDATE", review({ operation: "UPDATE", object: updated, oldObject: stored, ...admin })],
    ["DELETE", review({ operation: "DELETE", object: null, oldObject: stored, ...admin })],
  ];
  return reviews.flatMap(([name, body]) => [
    { name: `validate ${name}`, route: "/validate/ownedaccesskeys" as const, body },
    { name: `mutate ${name}`, route: "/mutate/ownedaccesskeys" as const, body },
  ]);
}

function endpointsBases(): Base[] {
  const virtual = parseYaml(
    readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
  ) as JsonObject;
  const host = translateEndpointsToHost(virtual, { ...VCLUSTER, config: {} }) as Json;
  const meta = host.metadata as Json;
  const request = (operation: string, oldObject: Json | null): Json => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "9a3e1c55-7b2d-4f60-8c14-3e5f7a9b1d22",
      kind: { group: "", version: "v1", kind: "Endpoints" },
      resource: { group: "", version: "v1", resource: "endpoints" },
      name: meta.name,
      namespace: meta.namespace,
      operation,
      userInfo: { username: `system:serviceaccount:${VCLUSTER.namespace}:vc-${VCLUSTER.name}` },
      object: host,
      oldObject,
      dryRun: false,
    },
  });
  return [
    { name: "endpoints CREATE", route: "/mutate/endpoints", body: request("CREATE", null) },
    { name: "endpoints UPDATE", route: "/mutate/endpoints", body: request("UPDATE", host) },
  ];
}

function reviewBases(): Base[] {
  const tokenReview = (version: string): Json => ({
    apiVersion: `authentication.k8s.io/${version}`,
    kind: "TokenReview",
    metadata: { creationTimestamp: null },
    spec: { token: KEY, audiences: ["https://kubernetes.default.svc"] },
    status: { user: {} },
  });
  const accessReview = (version: string, extra: boolean): Json => ({
    apiVersion: `authorization.k8s.io/${version}`,
    kind: "SubjectAccessReview",
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: { namespace: "default", verb: "list", version: "v1", resource: "pods" },
      user: "alice",
      [version === "v1" ? "groups" : "group"]: ["system:authenticated"],
      uid: "6b1d0c52-1d7c-4a8e-9c37-2f4a9d1e0b77",
      ...(extra ? { extra: { [accessKeyExtra("loft.sh")]: ["fuzz-key"] } } : {}),
    },
    status: { allowed: false },
  });
  const nonResource = accessReview("v1", true);
  (nonResource.spec as Json).resourceAttributes = undefined;
  (nonResource.spec as Json).nonResourceAttributes = { path: "/healthz", verb: "get" };
  return [
    ...["v1", "v1beta1"].map((v) => ({
      name: `TokenReview ${v}`,
      route: "/authenticate" as const,
      body: tokenReview(v),
    })),
    ...["v1", "v1beta1"].flatMap((v) =>
      [true, false].map((extra) => ({
        name: `SubjectAccessReview ${v}${extra ? " (key)" : ""}`,
        route: "/authorize" as const,
        body: accessReview(v, extra),
      })),
    ),
    {
      name: "SubjectAccessReview non-resource",
      route: "/authorize",
      body: JSON.parse(JSON.stringify(nonResource)) as Json,
    },
  ];
}

export function fuzzBases(): Base[] {
  return [...accessKeyBases(), ...endpointsBases(), ...reviewBases()];
}
