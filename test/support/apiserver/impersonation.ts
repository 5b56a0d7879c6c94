// kube-apiserver's impersonation filter (WithImpersonation): Impersonate-User, Impersonate-Group,
// Impersonate-Uid and Impersonate-Extra-<key> headers replace the requester's identity, after the
// requester is authorized to `impersonate` each of them. `kubectl --as` and client-go use it.

import type { IncomingMessage } from "node:http";
import { newBadRequest } from "../../../webhook/src/api/status.js";
import { AUTHENTICATED } from "./authn.js";
import type { RequestAttributes, UserIdentity } from "./authorizer.js";

const SA_PREFIX = "system:serviceaccount:";

/** The identity to act as, and the checks the requester must pass first; null: no headers. */
export interface Impersonation {
  identity: UserIdentity;
  checks: RequestAttributes[];
}

export function impersonationOf(req: IncomingMessage): Impersonation | null {
  const user = single(req, "impersonate-user");
  const groups = values(req, "impersonate-group");
  const uid = single(req, "impersonate-uid");
  const extra = extras(req);
  if (user === undefined) {
    if (groups.length || uid !== undefined || Object.keys(extra).length) {
      throw newBadRequest(
        "requested impersonation of groups, uid or extra without impersonating a user",
      );
    }
    return null;
  }
  const checks: RequestAttributes[] = [userCheck(user)];
  for (const g of groups) checks.push(attrs("", "groups", g));
  if (uid !== undefined) checks.push(attrs("authentication.k8s.io", "uids", uid));
  for (const [key, vals] of Object.entries(extra)) {
    for (const v of vals) checks.push(attrs("authentication.k8s.io", "userextras", v, key));
  }
  return { identity: impersonated(user, groups, uid, extra), checks };
}

/** A service account is impersonated through its object; anyone else through `users`. */
function userCheck(user: string): RequestAttributes {
  if (user.startsWith(SA_PREFIX)) {
    const [namespace = "", name = ""] = user.slice(SA_PREFIX.length).split(":");
    return { ...attrs("", "serviceaccounts", name), namespace };
  }
  return attrs("", "users", user);
}

function attrs(group: string, resource: string, name: string, subresource = ""): RequestAttributes {
  return { verb: "impersonate", group, resource, subresource, name, namespace: "" };
}

/** As kube: service accounts get their groups, every named user system:authenticated. */
function impersonated(
  user: string,
  groups: string[],
  uid: string | undefined,
  extra: Record<string, string[]>,
): UserIdentity {
  const all = [...groups];
  if (user.startsWith(SA_PREFIX)) {
    const ns = user.slice(SA_PREFIX.length).split(":")[0] ?? "";
    all.push("system:serviceaccounts", `system:serviceaccounts:${ns}`);
  }
  if (user !== "system:anonymous" && !all.includes(AUTHENTICATED)) all.push(AUTHENTICATED);
  const identity: UserIdentity = { user, groups: [...new Set(all)] };
  if (uid !== undefined) identity.uid = uid;
  if (Object.keys(extra).length) identity.extra = extra;
  return identity;
}

function values(req: IncomingMessage, name: string): string[] {
  const v = req.headers[name];
  if (v === undefined) return [];
  // Node joins repeated headers with ", " (except set-cookie); kube sends one value per header.
  return (Array.isArray(v) ? v : v.split(", ")).filter((s) => s !== "");
}

function single(req: IncomingMessage, name: string): string | undefined {
  return values(req, name)[0];
}

function extras(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [header, value] of Object.entries(req.headers)) {
    if (!header.startsWith("impersonate-extra-") || value === undefined) continue;
    const key = decodeURIComponent(header.slice("impersonate-extra-".length));
    const list = Array.isArray(value) ? value : value.split(", ");
    Object.defineProperty(out, key, { value: list, enumerable: true, writable: true });
  }
  return out;
}
