// The generic REST handlers for stored objects: which verb a request to a resource URL runs (get,
// list, create, update, patch, delete, deletecollection; the status subresource for types that
// declare it), and the read verbs themselves.

import { newNotFound } from "../../../webhook/src/api/status.js";
import { createObject } from "./create.js";
import { deleteCollection, deleteObject } from "./delete.js";
import { methodNotAllowed, pathNotFound } from "./errors.js";
import { groupResource, type ObjectRequest, type Reply } from "./object-request.js";
import { parseLimit, readPage } from "./paging.js";
import { apiVersionOf } from "./resources.js";
import { isEverything, parseSelectors, selects } from "./selectors.js";
import { patchObject, updateObject } from "./update.js";

export type { ObjectRequest, ObjectValidator, Reply } from "./object-request.js";
export { acceptAll } from "./object-request.js";

export async function handleObjects(req: ObjectRequest): Promise<Reply> {
  const { info, type } = req;
  if (info.subresource) {
    // An undeclared subresource is not served at all; a declared one only by its own verbs.
    if (!(type.subresources ?? []).some((s) => s.name === info.subresource)) throw pathNotFound();
    if (info.subresource !== "status") throw methodNotAllowed();
    if (!["get", "update", "patch"].includes(info.verb)) throw methodNotAllowed();
  }
  switch (info.verb) {
    case "get":
      return { status: 200, body: getObject(req) };
    case "list":
      return { status: 200, body: listObjects(req) };
    case "create":
      // POST to a named object is not a route kube serves.
      if (info.name) throw methodNotAllowed();
      return createObject(req);
    case "update":
      return updateObject(req);
    case "patch":
      return patchObject(req);
    case "delete":
      return deleteObject(req);
    case "deletecollection":
      return deleteCollection(req);
    default:
      throw methodNotAllowed();
  }
}

function getObject(req: ObjectRequest): object {
  const obj = req.store.get(req.type, req.info.namespace, req.info.name);
  if (!obj) throw newNotFound(groupResource(req.type), req.info.name);
  return obj;
}

/** A list page: label and field selectors, limit and continue, the revision it reflects. */
function listObjects(req: ObjectRequest): object {
  const { type, query } = req;
  const selectors = parseSelectors(query, type);
  const page = readPage(
    req.store,
    type,
    req.info.namespace,
    {
      limit: parseLimit(query),
      continueToken: query.get("continue") ?? "",
      countRemaining: isEverything(selectors),
    },
    (obj) => selects(selectors, obj),
  );
  const metadata: Record<string, unknown> = { resourceVersion: String(page.revision) };
  if (page.continue) metadata["continue"] = page.continue;
  if (page.remainingItemCount !== undefined)
    metadata["remainingItemCount"] = page.remainingItemCount;
  return {
    apiVersion: apiVersionOf(type.group, type.version),
    kind: `${type.kind}List`,
    metadata,
    items: page.items,
  };
}
