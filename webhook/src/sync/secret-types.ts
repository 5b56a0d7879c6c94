// Which Secrets a reference copy or import may carry (docs/decisions.md EPS-21): Secrets of the
// types on an allow-list, data and nothing else. The types below make Kubernetes' own controllers
// put a credential into the Secret (the token controller fills a service-account-token Secret
// with a token of the service account its annotation names; a bootstrap token authenticates to
// the API server), so they are never copied, whatever the allow-list says.

import type { JsonObject } from "../patches/types.js";

/** The default of --reference-secret-types: Secrets that carry data someone put there. */
export const DEFAULT_REFERENCE_SECRET_TYPES: readonly string[] = Object.freeze([
  "Opaque",
  "kubernetes.io/tls",
  "kubernetes.io/basic-auth",
  "kubernetes.io/ssh-auth",
  "kubernetes.io/dockerconfigjson",
]);

/** Never copied, never imported, and refused on --reference-secret-types. */
export const NEVER_COPIED_SECRET_TYPES: readonly string[] = Object.freeze([
  "kubernetes.io/service-account-token",
  "bootstrap.kubernetes.io/token",
]);

/** A Secret's type as the API server reads it: an empty or missing type is Opaque. */
export function secretType(secret: JsonObject): string {
  const type = Object.hasOwn(secret, "type") ? secret["type"] : undefined;
  return typeof type === "string" && type !== "" ? type : "Opaque";
}

export const isSecret = (object: JsonObject): boolean =>
  object["apiVersion"] === "v1" && object["kind"] === "Secret";

/** Whether a Secret of `type` may be copied or imported with this allow-list. */
export function secretTypeAllowed(type: string, allowed: ReadonlySet<string>): boolean {
  return allowed.has(type) && !NEVER_COPIED_SECRET_TYPES.includes(type);
}
