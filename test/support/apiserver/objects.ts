// The generic REST handlers for stored objects: get, list, create and delete, with kube's answers
// (NotFound, AlreadyExists, Invalid, BadRequest) and generateName.

import { randomInt } from "node:crypto";
import { required } from "../../../webhook/src/api/field-errors.js";
import {
  newAlreadyExists,
  newBadRequest,
  newInvalid,
  newNotFound,
} from "../../../webhook/src/api/status.js";
import { methodNotAllowed } from "./errors.js";
import type { RequestInfo } from "./request-info.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import type { KubeObject, ObjectStore } from "./store.js";

export interface Reply {
  status: number;
  body: unknown;
}

// names.SimpleNameGenerator: 5 random characters from this alphabet after the prefix (cut to 58).
const NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

export function handleObjects(
  store: ObjectStore,
  type: ResourceType,
  info: RequestInfo,
  body: unknown,
): Reply {
  if (info.subresource) throw methodNotAllowed();
  switch (info.verb) {
    case "get":
      return { status: 200, body: getObject(store, type, info) };
    case "list":
      return { status: 200, body: listObjects(store, type, info.namespace) };
    case "create":
      return { status: 201, body: createObject(store, type, info.namespace, body) };
    case "delete":
      return { status: 200, body: deleteObject(store, type, info) };
    default:
      throw methodNotAllowed();
  }
}

function getObject(store: ObjectStore, type: ResourceType, info: RequestInfo): KubeObject {
  const obj = store.get(type, info.namespace, info.name);
  if (!obj) throw newNotFound(type, info.name);
  return obj;
}

function listObjects(store: ObjectStore, type: ResourceType, namespace: string): object {
  return {
    apiVersion: apiVersionOf(type.group, type.version),
    kind: `${type.kind}List`,
    metadata: { resourceVersion: store.currentRevision() },
    items: store.list(type, namespace),
  };
}

function deleteObject(store: ObjectStore, type: ResourceType, info: RequestInfo): KubeObject {
  const obj = store.remove(type, info.namespace, info.name);
  if (!obj) throw newNotFound(type, info.name);
  return obj;
}

function createObject(
  store: ObjectStore,
  type: ResourceType,
  namespace: string,
  body: unknown,
): KubeObject {
  const obj = checkBody(type, namespace, body);
  const meta = obj.metadata;
  if (!meta.name && typeof meta["generateName"] === "string" && meta["generateName"]) {
    meta.name = generateName(meta["generateName"]);
  }
  if (!meta.name) {
    const err = required("metadata.name", "name or generateName is required");
    throw newInvalid({ group: type.group, kind: type.kind }, "", [err]);
  }
  if (store.has(type, namespace, meta.name)) throw newAlreadyExists(type, meta.name);
  return store.put(type, obj);
}

/** Decodes a create body the way kube's JSON decoder and rest.BeforeCreate do. */
function checkBody(type: ResourceType, namespace: string, body: unknown): KubeObject {
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
  const metadata = meta as KubeObject["metadata"];
  if (type.namespaced) {
    if (metadata.namespace && metadata.namespace !== namespace) {
      throw newBadRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    metadata.namespace = namespace;
  }
  return { ...obj, apiVersion, kind: type.kind, metadata } as KubeObject;
}

function generateName(prefix: string): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return prefix.slice(0, 58) + suffix;
}
