// Deprecated spec fields stay accepted (docs/decisions.md OAK-6), but each one present in a request
// adds an AdmissionResponse warning naming its replacement. kube advises warnings under ~120
// characters (docs/reference.md#kube-admission-review).

import { isSet } from "./json-fields.js";
import { ownPath } from "../shared/own-path.js";

interface Deprecation {
  readonly path: readonly string[];
  readonly warning: string;
}

const DEPRECATIONS: readonly Deprecation[] = [
  { path: ["rules"], warning: "spec.rules is deprecated; use spec.scope instead" },
  {
    path: ["allowLoftCli"],
    warning: 'spec.allowLoftCli is deprecated; use spec.scope.roles with role "loft-cli" instead',
  },
  {
    path: ["scope", "rules"],
    warning:
      "spec.scope.rules is deprecated; use spec.scope roles, projects, spaces, virtualClusters or clusters",
  },
  {
    path: ["scope", "allowLoftCli"],
    warning:
      'spec.scope.allowLoftCli is deprecated; use spec.scope.roles with role "loft-cli" instead',
  },
  { path: ["parent"], warning: "spec.parent is deprecated and has no replacement; do not use it" },
  { path: ["oidcLogin"], warning: "spec.oidcLogin is deprecated; use spec.identity instead" },
];

/**
 * One warning per deprecated field that is set. Values Go's omitempty drops (false, "", []) are
 * not "set": a client that round-trips `allowLoftCli: false` is not using the feature.
 */
export function deprecationWarnings(spec: unknown): string[] {
  return DEPRECATIONS.filter((d) => isSet(ownPath(spec, d.path))).map((d) => d.warning);
}
