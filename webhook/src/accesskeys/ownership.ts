// Who may manage which key (docs/decisions.md OAK-9). Admins may do anything. Everyone else may
// only create, change or delete keys whose spec.user is themselves, of type User, without team,
// subject or groups: those would let a caller act as someone else or add groups to their own
// identity.

import { formatValue } from "../shared/field-errors.js";
import { newForbidden, type KubeError } from "../shared/status.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import { isObject, isSet, own } from "./json-fields.js";
import { ownPath } from "../shared/own-path.js";
import type { KeyRequest } from "./request.js";

/** null when the request may go ahead, otherwise a 403 Forbidden. */
export function checkOwnership(req: KeyRequest): KubeError | null {
  if (req.isAdmin) return null;
  const why = denialReason(req);
  if (why === null) return null;
  return newForbidden(
    { group: req.identity.group, resource: req.identity.resource },
    objectName(req),
    why,
  );
}

function denialReason(req: KeyRequest): string | null {
  switch (req.operation) {
    case "CREATE":
      return newObjectProblem(req);
    case "UPDATE":
      return storedObjectProblem(req, "change") ?? newObjectProblem(req);
    case "DELETE":
      return req.expiredCleanup ? null : storedObjectProblem(req, "delete");
    default:
      return null;
  }
}

/** Kubernetes' reserved username prefix: service accounts, nodes, control-plane components. */
export const SYSTEM_PREFIX = "system:";

/** Admin-only fields in the order they are reported. */
const ADMIN_ONLY_FIELDS = ["team", "subject", "groups"] as const;

function newObjectProblem(req: KeyRequest): string | null {
  const spec = ownPath(req.object, ["spec"]);
  const base = ownKeysOnly(req);
  const admins = adminsText(req.adminGroups);
  const field = ADMIN_ONLY_FIELDS.find((f) => isSet(ownPath(spec, [f])));
  if (field) return `${base}; only ${admins} may set spec.${field}`;
  const user = ownPath(spec, ["user"]);
  // A key made by a service account (or node, or component) for itself would outlive the
  // identity it stands for, and is a credential nobody reviews: only admins make those.
  if (typeof user === "string" && user.startsWith(SYSTEM_PREFIX)) {
    return `${base}; only ${admins} may manage keys of ${SYSTEM_PREFIX} users (service accounts, nodes, components)`;
  }
  if (user !== req.userInfo.username) {
    return `${base}; only ${admins} may ${isSet(user) ? `manage keys of user ${formatValue(user)}` : "leave spec.user unset"}`;
  }
  const type = ownPath(spec, ["type"]);
  if (type === "User") return null;
  const typeBase = `user ${quote(req.userInfo.username)} may only manage access keys of type "User"`;
  return `${typeBase}; only ${admins} may ${isSet(type) ? `use type ${formatValue(type)}` : "leave spec.type unset"}`;
}

function storedObjectProblem(req: KeyRequest, verb: "change" | "delete"): string | null {
  const base = ownKeysOnly(req);
  if (!isObject(req.oldObject)) {
    return `${base}; the stored key was not sent with the request, so its owner is unknown`;
  }
  if (ownPath(req.oldObject, ["spec", "user"]) === req.userInfo.username) return null;
  return `${base}; this key belongs to ${ownerText(req.oldObject)}; only ${adminsText(req.adminGroups)} may ${verb} it`;
}

function ownKeysOnly(req: KeyRequest): string {
  const username = quote(req.userInfo.username);
  return `user ${username} may only manage access keys whose spec.user is ${username}`;
}

function ownerText(obj: OwnedAccessKey): string {
  for (const field of ["user", "team", "subject"] as const) {
    const value = ownPath(obj, ["spec", field]);
    if (isSet(value)) return `${field} ${formatValue(value)}`;
  }
  return "no user";
}

function adminsText(groups: readonly string[]): string {
  return groups.length > 0 ? `members of ${groups.join(" or ")}` : "admins";
}

/** As kube's admission.NewForbidden: the name, else the generateName, else "Unknown". */
function objectName(req: KeyRequest): string {
  const obj: unknown = req.object ?? req.oldObject;
  const meta = isObject(obj) ? own(obj, "metadata") : undefined;
  for (const candidate of [ownPath(meta, ["name"]), ownPath(meta, ["generateName"]), req.name]) {
    if (typeof candidate === "string" && candidate !== "") return candidate;
  }
  return "Unknown";
}

const quote = (s: string): string => formatValue(s);
