// Host copies of virtual objects as vCluster's syncer writes them (single-namespace mode, v0.34:
// translate.HostMetadata, addHostAnnotations, labels.go addScopingLabels), and a patch set per
// kind, for the /mutate/patches tests.

import { randomUUID } from "node:crypto";
import type { LoadedVCluster, PatchSet } from "../../../webhook/src/config/loaded-vcluster.js";
import {
  PATCH_KINDS,
  customResourceKind,
  type PatchKind,
} from "../../../webhook/src/config/patch-kinds.js";
import { hostName, safeConcatName } from "../../../webhook/src/patches/host-names.js";
import type { PatchSpec } from "../../../webhook/src/patches/types.js";
import { objectReview } from "../../support/reviews.js";

type Json = Record<string, unknown>;

export const VC = { name: "my-vcluster", namespace: "vcluster-my-vcluster" };

export function toHostKind(key: string): PatchKind {
  return PATCH_KINDS.find((k) => k.section === "toHost" && k.key === key)!;
}

/** A custom resource synced to the host: widgets.example.com, kind Widget. */
export const WIDGETS: PatchKind = {
  ...customResourceKind("toHost", "widgets.example.com", true),
  kind: "Widget",
  versions: ["v1"],
};

const TEAM: PatchSpec = {
  path: 'metadata.annotations["team"]',
  expression: '"tenant-" + value',
  reverseExpression: 'value.startsWith("tenant-") ? value.slice(7) : value',
};

/** Per kind: its patches, the virtual object, and what the patches make of it on the host. */
export interface KindCase {
  kind: PatchKind;
  apiVersion: string;
  patches: PatchSpec[];
  virtual: Json;
  /** Reads the value the kind-specific patch rewrites. */
  field(object: Json): unknown;
  expected: unknown;
}

const meta = (name: string): Json => ({
  name,
  namespace: "team-a",
  uid: randomUUID(),
  annotations: { team: "a" },
  labels: { app: name },
});

export const CASES: KindCase[] = [
  {
    kind: toHostKind("pods"),
    apiVersion: "v1",
    patches: [
      TEAM,
      { path: "spec.containers[*].image", expression: '"mirror.example.com/" + value' },
    ],
    virtual: {
      metadata: meta("web-0"),
      spec: { containers: [{ name: "web", image: "nginx:1.27" }] },
    },
    field: (o) => ((o.spec as Json).containers as Json[])[0]!.image,
    expected: "mirror.example.com/nginx:1.27",
  },
  {
    kind: toHostKind("services"),
    apiVersion: "v1",
    patches: [
      TEAM,
      {
        path: 'metadata.annotations["example.com/lb"]',
        expression: 'value + "-" + context.vcluster.name',
      },
    ],
    virtual: {
      metadata: { ...meta("web"), annotations: { team: "a", "example.com/lb": "internal" } },
      spec: { ports: [{ name: "http", port: 80, protocol: "TCP", targetPort: 8080 }] },
    },
    field: (o) => ((o.metadata as Json).annotations as Json)["example.com/lb"],
    expected: "internal-my-vcluster",
  },
  {
    kind: toHostKind("configMaps"),
    apiVersion: "v1",
    patches: [
      TEAM,
      {
        path: 'data["endpoint"]',
        expression: 'value.replace(".svc", ".svc." + context.vcluster.name)',
        reverseExpression: 'value.replace(".svc." + context.vcluster.name, ".svc")',
      },
    ],
    virtual: { metadata: meta("settings"), data: { endpoint: "db.team-a.svc" } },
    field: (o) => (o.data as Json).endpoint,
    expected: "db.team-a.svc.my-vcluster",
  },
  {
    kind: toHostKind("secrets"),
    apiVersion: "v1",
    patches: [TEAM, { path: 'metadata.labels["tier"]', expression: '"secret-" + value' }],
    virtual: {
      metadata: { ...meta("creds"), labels: { tier: "db" } },
      type: "Opaque",
      data: { password: Buffer.from("not-a-real-one").toString("base64") },
    },
    field: (o) => ((o.metadata as Json).labels as Json).tier,
    expected: "secret-db",
  },
  {
    kind: toHostKind("ingresses"),
    apiVersion: "networking.k8s.io/v1",
    patches: [TEAM, { path: "spec.rules[*].host", expression: 'value + ".tenant.example.com"' }],
    virtual: {
      metadata: meta("web"),
      spec: {
        rules: [
          {
            host: "web",
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: "web", port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
    field: (o) => ((o.spec as Json).rules as Json[])[0]!.host,
    expected: "web.tenant.example.com",
  },
  {
    kind: WIDGETS,
    apiVersion: "example.com/v1",
    patches: [TEAM, { path: "spec.size", expression: "value * 2" }],
    virtual: { metadata: meta("w1"), spec: { size: 3 } },
    field: (o) => (o.spec as Json).size,
    expected: 6,
  },
];

/** Go's GroupVersionKind.String(). */
export function gvkString(c: Pick<KindCase, "apiVersion" | "kind">): string {
  const [group, version] = c.apiVersion.includes("/")
    ? c.apiVersion.split("/")
    : ["", c.apiVersion];
  return `${group}/${version}, Kind=${c.kind.kind}`;
}

/**
 * The host copy of `c.virtual` as vCluster's syncer writes it for the vCluster `vc` into
 * `hostNamespace` (its own namespace by default). Services and Pods keep their spec here: the
 * parts vCluster rewrites on them are not what these tests look at.
 */
export function hostCopy(
  c: KindCase,
  vc: { name: string; namespace: string } = VC,
  hostNamespace = vc.namespace,
): Json {
  const v = structuredClone(c.virtual);
  const vm = v.metadata as Json;
  const name = hostName(vm.name as string, vm.namespace as string, vc.name);
  const namespaced = c.kind.namespaced;
  const annotations: Json = {
    ...(vm.annotations as Json),
    "vcluster.loft.sh/object-name": vm.name,
    "vcluster.loft.sh/object-uid": vm.uid,
    "vcluster.loft.sh/object-kind": gvkString(c),
    "vcluster.loft.sh/object-host-name": name,
  };
  const labels: Json = { ...(vm.labels as Json) };
  if (namespaced) {
    annotations["vcluster.loft.sh/object-namespace"] = vm.namespace;
    annotations["vcluster.loft.sh/object-host-namespace"] = hostNamespace;
    labels["vcluster.loft.sh/managed-by"] = vc.name;
    labels["vcluster.loft.sh/namespace"] = vm.namespace;
  } else {
    labels["vcluster.loft.sh/managed-by"] = safeConcatName(vc.namespace, "x", vc.name);
  }
  return {
    ...v,
    apiVersion: c.apiVersion,
    kind: c.kind.kind,
    metadata: {
      name,
      ...(namespaced ? { namespace: hostNamespace } : {}),
      annotations,
      labels,
    },
  };
}

export function loadedWith(sets: PatchSet[], vc = VC): LoadedVCluster {
  return {
    vcluster: { name: vc.name, namespace: vc.namespace, config: {} },
    enabled: false,
    patches: [],
    patchSets: sets,
  };
}

export function setsOf(cases: readonly KindCase[]): PatchSet[] {
  return cases.map((c) => ({ kind: c.kind, enabled: true, patches: c.patches }));
}

/** What vCluster's syncer sends about a host object of the case's kind. */
export const review = (
  c: Pick<KindCase, "kind" | "apiVersion">,
  operation: "CREATE" | "UPDATE",
  object: Json,
  oldObject: Json | null = null,
  subResource = "",
): Json =>
  objectReview({
    kind: c.kind.kind,
    apiVersion: c.apiVersion,
    resource: c.kind.resource,
    subResource,
    operation,
    object,
    oldObject,
    userInfo: { username: "system:serviceaccount:vcluster-my-vcluster:vc-my-vcluster" },
  });
