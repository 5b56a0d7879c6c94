// kube-apiserver's RequestInfoFactory, reduced: which group, version, namespace, resource, name and
// subresource a resource URL addresses, and which verb the method means.

export interface RequestInfo {
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: string;
}

// "namespaces/<ns>/status" and ".../finalize" are subresources of the namespace itself.
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/** null when the path is not a resource path (`/api/v1/...` or `/apis/<group>/<version>/...`). */
export function parseRequestInfo(method: string, pathname: string): RequestInfo | null {
  const parts = segments(pathname);
  if (!parts) return null;
  const prefix = parts.shift();
  const group = prefix === "apis" ? parts.shift() : "";
  if ((prefix !== "api" && prefix !== "apis") || group === undefined) return null;
  const version = parts.shift();
  if (version === undefined || parts.length === 0) return null;
  let namespace = "";
  let rest = parts;
  if (parts[0] === "namespaces" && parts.length > 1) {
    namespace = parts[1]!;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) rest = parts.slice(2);
    else namespace = "";
  }
  const [resource, name = "", subresource = "", ...extra] = rest;
  if (resource === undefined || extra.length > 0) return null;
  return { group, version, namespace, resource, name, subresource, verb: verbOf(method, name) };
}

function verbOf(method: string, name: string): string {
  switch (method) {
    case "GET":
    case "HEAD":
      return name ? "get" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return name ? "delete" : "deletecollection";
    default:
      return "";
  }
}

function segments(pathname: string): string[] | null {
  try {
    return pathname
      .split("/")
      .filter((p) => p !== "")
      .map(decodeURIComponent);
  } catch {
    return null; // malformed %-escape
  }
}
