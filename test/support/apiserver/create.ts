// create (POST to a collection), in kube-apiserver's order: decode and check the body, validate
// CreateOptions, wipe system metadata, mutating admission, generateName and system metadata,
// PrepareForCreate and validation (names: 422 Invalid), schema validation, validating admission,
// then storage (409 AlreadyExists). With dryRun=All nothing is stored and the answer has no
// resourceVersion, as kube's dry-run storage answers.

import { randomInt } from "node:crypto";
import { newAlreadyExists, newInvalid } from "../../../webhook/src/api/status.js";
import { internalError } from "./errors.js";
import { validateLabels, validateObjectName } from "./name-validation.js";
import { validateFinalizers, validateOwnerReferences } from "./object-meta.js";
import {
  Admission,
  decodeObject,
  ensureNamespace,
  fillSystemFields,
  wipeSystemFields,
  type ObjectRequest,
  type Reply,
} from "./object-request.js";
import type { KubeObject } from "./store.js";
import { nameRule, prepareForCreate } from "./type-strategy.js";
import { parseWriteOptions, type WriteOptions } from "./write-options.js";

// names.SimpleNameGenerator: 5 random characters from this alphabet after the prefix (cut to 58).
const NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

export function generateName(prefix: string): string {
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return prefix.slice(0, 58) + suffix;
}

export async function createObject(req: ObjectRequest): Promise<Reply> {
  const options = parseWriteOptions("CreateOptions", req.query);
  const obj = decodeObject(req.type, req.body);
  wipeSystemFields(obj.metadata);
  ensureNamespace(req.type, req.info.namespace, obj);
  return storeNew(req, obj, options);
}

/** The create path from admission on; also what an update of a missing object runs when allowed. */
export async function storeNew(
  req: ObjectRequest,
  obj: KubeObject,
  options: WriteOptions,
): Promise<Reply> {
  const { type, store } = req;
  const admission = new Admission(req, "CREATE", options.dryRun, options.object);
  // Mutating webhooks see the object before generateName runs (AdmissionRequest.name is "").
  const requestName = typeof obj.metadata.name === "string" ? obj.metadata.name : "";
  let current = (await admission.mutate(requestName, obj, null)) ?? obj;
  const meta = current.metadata;
  const prefix = meta["generateName"];
  if (!meta.name && typeof prefix === "string" && prefix) meta.name = generateName(prefix);
  fillSystemFields(meta);
  prepareForCreate(type, current);
  const errs = [
    ...validateObjectName(meta, nameRule(type)),
    ...validateLabels(meta["labels"]),
    ...validateOwnerReferences(meta["ownerReferences"]),
    ...validateFinalizers(meta["finalizers"]),
  ];
  if (errs.length) throw newInvalid({ group: type.group, kind: type.kind }, meta.name ?? "", errs);
  current = await req.validateObject(type, current, null);
  await admission.validate(requestName, current, null);
  const name = current.metadata.name;
  // etcd3 storage refuses an object that already carries a resourceVersion.
  if (current.metadata["resourceVersion"]) {
    throw internalError("resourceVersion should not be set on objects to be created");
  }
  const namespace = current.metadata.namespace ?? "";
  if (store.has(type, namespace, name)) throw newAlreadyExists(type, name);
  const body = options.dryRun ? current : store.put(type, current);
  return { status: 201, body, warnings: admission.warnings };
}
