// The deprecated AccessKeyScopeRule list (spec.rules and spec.scope.rules). Its resource part is
// shaped like an audit/RBAC PolicyRule, and we check it with the same semantics and, where kube has
// one, kube's message (k8s.io/apiserver pkg/apis/audit/validation).

import { invalid, notSupported, type FieldError } from "../shared/field-errors.js";
import {
  checkFields,
  checkObjectList,
  checkString,
  checkStringList,
  isAbsent,
  own,
  type FieldCheck,
  type JsonObject,
} from "./json-fields.js";

export const REQUEST_TARGETS = [
  "Management",
  "Cluster",
  "ProjectSpace",
  "ProjectVirtualCluster",
] as const;

const GROUP_RESOURCE_FIELDS: Record<string, FieldCheck> = {
  group: (v, p) => checkString(v, p),
  resources: (v, p) => checkStringList(v, p),
  resourceNames: (v, p) => checkStringList(v, p),
};

const VIRTUAL_CLUSTER_FIELDS: Record<string, FieldCheck> = {
  name: (v, p) => checkString(v, p),
  namespace: (v, p) => checkString(v, p),
};

const RULE_FIELDS: Record<string, FieldCheck> = {
  verbs: (v, p) => checkStringList(v, p),
  resources: (v, p) => checkObjectList(v, p, validateGroupResources),
  namespaces: (v, p) => checkStringList(v, p),
  nonResourceURLs: (v, p) => checkStringList(v, p, checkNonResourceURL),
  requestTargets: (v, p) => checkStringList(v, p, checkRequestTarget),
  cluster: (v, p) => checkString(v, p),
  virtualClusters: (v, p) =>
    checkObjectList(v, p, (vc, q) => checkFields(vc, q, VIRTUAL_CLUSTER_FIELDS)),
};

/** Validates an AccessKeyScopeRule[] found at `path`. */
export function validateRules(rules: unknown, path: string): FieldError[] {
  return checkObjectList(rules, path, (rule, p) => checkFields(rule, p, RULE_FIELDS));
}

function validateGroupResources(entry: JsonObject, path: string): FieldError[] {
  return [
    ...checkFields(entry, path, GROUP_RESOURCE_FIELDS),
    ...checkResourceNames(entry, path),
    ...checkOverlaps(own(entry, "resources"), `${path}.resources`),
  ];
}

/** "resourceNames … requires resources"; kube's audit text for the same rule. */
function checkResourceNames(entry: JsonObject, path: string): FieldError[] {
  const names = own(entry, "resourceNames");
  const resources = own(entry, "resources");
  if (!Array.isArray(names) || names.length === 0) return [];
  // A wrong-typed resources field is reported as such; only a missing or empty one is meant here.
  if (!isAbsent(resources) && !(Array.isArray(resources) && resources.length === 0)) return [];
  return [
    invalid(`${path}.resourceNames`, names, "using resourceNames requires at least one resource"),
  ];
}

/**
 * "If wildcard is present, the validation rule will ensure resources do not overlap with each
 * other." Each entry that overlaps an earlier one is reported, naming the earlier ones.
 */
function checkOverlaps(resources: unknown, path: string): FieldError[] {
  if (!Array.isArray(resources)) return [];
  const items = resources as unknown[];
  if (!items.some((r) => typeof r === "string" && r.includes("*"))) return [];
  const errors: FieldError[] = [];
  items.forEach((item, j) => {
    if (typeof item !== "string") return;
    const earlier = items
      .slice(0, j)
      .filter((r): r is string => typeof r === "string" && resourcesOverlap(r, item));
    if (earlier.length === 0) return;
    const names = [...new Set(earlier)].map((r) => JSON.stringify(r)).join(", ");
    errors.push(
      invalid(
        `${path}[${j}]`,
        item,
        `overlaps ${names}; with a wildcard, entries must not overlap`,
      ),
    );
  });
  return errors;
}

// Whether some resource matches both patterns. `*` matches every resource and subresource,
// `pods/*` every subresource of pods, `*/scale` every scale subresource.
export function resourcesOverlap(a: string, b: string): boolean {
  if (a === "*" || b === "*") return true;
  const [aResource, aSub] = splitResource(a);
  const [bResource, bSub] = splitResource(b);
  if (aSub === undefined || bSub === undefined) return aSub === bSub && aResource === bResource;
  return segmentsOverlap(aResource, bResource) && segmentsOverlap(aSub, bSub);
}

function splitResource(r: string): [string, string | undefined] {
  const slash = r.indexOf("/");
  return slash === -1 ? [r, undefined] : [r.slice(0, slash), r.slice(slash + 1)];
}

const segmentsOverlap = (a: string, b: string): boolean => a === b || a === "*" || b === "*";

// "non-resource URL rules must begin with a '/' character", and a `*` may only be the full final
// path step: `/healthz/*` and `*` are fine, `/foo*` and `/*/bar` are not.
function checkNonResourceURL(url: string, path: string): FieldError[] {
  if (url === "*") return [];
  const errors: FieldError[] = [];
  if (!url.startsWith("/")) {
    errors.push(invalid(path, url, "non-resource URL rules must begin with a '/' character"));
  }
  const star = url.indexOf("*");
  if (star !== -1 && !(star === url.length - 1 && url.endsWith("/*"))) {
    errors.push(
      invalid(
        path,
        url,
        `non-resource URL wildcards '*' must be the full final path step, as in "/healthz/*"`,
      ),
    );
  }
  return errors;
}

function checkRequestTarget(target: string, path: string): FieldError[] {
  return (REQUEST_TARGETS as readonly string[]).includes(target)
    ? []
    : [notSupported(path, target, REQUEST_TARGETS)];
}
