// OpenAPI v3, as kube-apiserver publishes it: `/openapi/v3` lists one document per group/version
// (with a content hash kubectl caches by), and `/openapi/v3/apis/<group>/<version>` has the paths
// and component schemas. kubectl needs it to tell that the server validates fields itself
// (the `fieldValidation` parameter on PATCH) and which patch types a kind takes: built-ins list
// strategic merge patch (kubectl then computes it from its compiled-in types), custom resources do
// not (kubectl sends a JSON merge patch). CRD schemas are published so `kubectl explain` works.
// /openapi/v2 is not served: kubectl reads it only as protobuf and copes without it.

import { createHash } from "node:crypto";
import { isBuiltin } from "./builtin-types.js";
import type { ResourceRegistry, ResourceType } from "./resources.js";

type Json = Record<string, unknown>;

const PATCH_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml",
];
const STRATEGIC = "application/strategic-merge-patch+json";

/** The `/openapi/v3` discovery document. */
export function openApiV3Root(registry: ResourceRegistry): Json {
  const paths: Json = {};
  for (const { group, versions } of registry.groups()) {
    for (const version of versions) {
      const key = gvPath(group, version);
      const doc = openApiV3Document(registry, group, version);
      if (doc) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(doc)}` };
    }
  }
  return { paths };
}

/** `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`, or null when not served. */
export function openApiV3Document(
  registry: ResourceRegistry,
  group: string,
  version: string,
): Json | null {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return null;
  const paths: Json = {};
  const schemas: Json = { ...META_SCHEMAS };
  for (const type of types) {
    Object.assign(paths, pathsOf(type));
    const schema = componentSchema(type);
    if (schema) schemas[definitionName(type)] = schema;
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.31.0" },
    paths,
    components: { schemas },
  };
}

const gvPath = (group: string, version: string): string =>
  group ? `apis/${group}/${version}` : `api/${version}`;

function hashOf(doc: Json): string {
  return createHash("sha512").update(JSON.stringify(doc)).digest("hex").toUpperCase();
}

/** kube's definition names reverse the group: `sh.loft.management.v1.OwnedAccessKey`. */
export function definitionName(type: ResourceType): string {
  if (isBuiltin(type)) {
    const pkg = type.group === "" ? "core" : type.group.replace(/\.k8s\.io$/, "");
    return `io.k8s.api.${pkg}.${type.version}.${type.kind}`;
  }
  return `${type.group.split(".").reverse().join(".")}.${type.version}.${type.kind}`;
}

function pathsOf(type: ResourceType): Json {
  const gvk = { group: type.group, version: type.version, kind: type.kind };
  const base = `/${gvPath(type.group, type.version)}${type.namespaced ? "/namespaces/{namespace}" : ""}/${type.resource}`;
  const op = (action: string, extra: Json = {}): Json => ({
    operationId: `${action}${type.kind}`,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    responses: { "200": { description: "OK" } },
    ...extra,
  });
  const has = (verb: string): boolean => type.verbs.includes(verb);
  const collection: Json = {};
  if (has("list")) collection["get"] = op("list");
  if (has("create")) collection["post"] = op("post", { parameters: writeParams() });
  const item: Json = {};
  if (has("get")) item["get"] = op("get");
  if (has("update")) item["put"] = op("put", { parameters: writeParams() });
  if (has("delete")) item["delete"] = op("delete");
  if (has("patch")) item["patch"] = op("patch", patchOperation(type));
  const out: Json = { [base]: collection };
  if (Object.keys(item).length > 0) out[`${base}/{name}`] = item;
  for (const sub of type.subresources ?? []) {
    if (sub.name !== "status") continue;
    out[`${base}/{name}/status`] = {
      get: op("get"),
      put: op("put", { parameters: writeParams() }),
      patch: op("patch", patchOperation(type)),
    };
  }
  return out;
}

function writeParams(): Json[] {
  return ["dryRun", "fieldManager", "fieldValidation"].map((name) => ({
    name,
    in: "query",
    schema: { type: "string", uniqueItems: true },
  }));
}

function patchOperation(type: ResourceType): Json {
  const types = isBuiltin(type) ? [...PATCH_TYPES, STRATEGIC] : PATCH_TYPES;
  const schema = { $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" };
  return {
    parameters: [
      ...writeParams(),
      { name: "force", in: "query", schema: { type: "boolean", uniqueItems: true } },
    ],
    requestBody: {
      content: Object.fromEntries(types.map((t) => [t, { schema }])),
      required: true,
    },
  };
}

/**
 * A CRD version's schema with the GVK extension kubectl looks for. Built-ins have none here: with
 * no component for a kind, kubectl takes patch metadata from its compiled-in Go types, which is
 * what kube's own published schemas say.
 */
function componentSchema(type: ResourceType): Json | null {
  if (!type.schema) return null;
  const schema = structuredClone(type.schema);
  const props = (schema["properties"] ?? {}) as Json;
  props["metadata"] = {
    allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }],
    description: "Standard object's metadata.",
  };
  schema["properties"] = props;
  schema["x-kubernetes-group-version-kind"] = [
    { group: type.group, version: type.version, kind: type.kind },
  ];
  return schema;
}

const META_SCHEMAS: Json = {
  "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": {
    description:
      "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
    type: "object",
  },
  "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
    description:
      "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
    type: "object",
    properties: {
      name: { type: "string" },
      namespace: { type: "string" },
      generateName: { type: "string" },
      labels: { type: "object", additionalProperties: { type: "string" } },
      annotations: { type: "object", additionalProperties: { type: "string" } },
      finalizers: { type: "array", items: { type: "string" } },
      resourceVersion: { type: "string" },
      uid: { type: "string" },
    },
  },
};
