// Named rule sets for spec.scope.roles, read from `--roles-file`. Format (YAML or JSON):
//
//   roles:
//     - name: deployer
//       rules:            # rbac.authorization.k8s.io/v1 PolicyRules, as in a ClusterRole
//         - apiGroups: ["apps"]
//           resources: ["deployments", "deployments/scale"]
//           verbs: ["get", "list", "watch", "update", "patch"]
//     - name: health
//       rules:
//         - nonResourceURLs: ["/healthz", "/readyz"]
//           verbs: ["get"]
//
// Rules are checked as kube checks a ClusterRole's rules (rbac validation ValidatePolicyRule):
// verbs are required; a rule has either nonResourceURLs or apiGroups + resources (resourceNames
// optional), never both. Names must be unique and non-empty; unknown fields are errors, so a typo
// does not silently widen or narrow a role. The built-in role `loft-cli` always exists and a file
// may not redefine it. Limits: 1 MiB of text, 1,000 roles, 1,000 rules per role; YAML aliases are
// expanded at most 100 times and nesting is bounded (config/yaml-document.ts).

import {
  aggregateText,
  duplicate,
  forbidden,
  invalid,
  required,
  toCause,
  tooLong,
  type FieldError,
} from "../shared/field-errors.js";
import { KubeError } from "../shared/status.js";
import { resourceIdentity } from "../shared/ownedaccesskey.js";
import { isObject, own, wrongType, type JsonObject } from "../accesskeys/json-fields.js";
import { parseYamlDocument } from "../config/yaml-document.js";
import type { PolicyRule } from "./policy-rule-match.js";

export const LOFT_CLI_ROLE = "loft-cli";
export const MAX_ROLES_FILE_BYTES = 1024 * 1024;
export const MAX_ROLES = 1000;
export const MAX_RULES_PER_ROLE = 1000;
const MAX_NAME_LENGTH = 253;

/** Roles by name; the built-in loft-cli role is always there. */
export interface RoleSet {
  get(name: string): readonly PolicyRule[] | undefined;
  names(): string[];
}

/**
 * loft-cli: what the platform's command-line client needs. Read access to the management group,
 * `create selves` (who am I), and the self reviews kubectl auth whoami / can-i use.
 */
export function loftCliRules(groupDomain: string): PolicyRule[] {
  const management = resourceIdentity(groupDomain).group;
  return [
    { apiGroups: [management], resources: ["*"], verbs: ["get", "list", "watch"] },
    { apiGroups: [management], resources: ["selves"], verbs: ["create"] },
    { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
    {
      apiGroups: ["authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
      verbs: ["create"],
    },
  ];
}

class Roles implements RoleSet {
  constructor(private readonly byName: ReadonlyMap<string, readonly PolicyRule[]>) {}
  get(name: string): readonly PolicyRule[] | undefined {
    return this.byName.get(name);
  }
  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** The roles when no --roles-file is given: only the built-in ones. */
export function builtInRoles(groupDomain: string): RoleSet {
  return new Roles(new Map([[LOFT_CLI_ROLE, freeze(loftCliRules(groupDomain))]]));
}

function freeze(rules: PolicyRule[]): readonly PolicyRule[] {
  for (const rule of rules) Object.freeze(rule);
  return Object.freeze(rules);
}

const RULE_LISTS = ["apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"] as const;

/** A short, safe rendering of a user-supplied key for a field path. */
const keyText = (key: string): string => (key.length > 64 ? `${key.slice(0, 64)}...` : key);

function unknownFields(obj: JsonObject, path: string, known: readonly string[]): FieldError[] {
  return Object.keys(obj)
    .filter((k) => !known.includes(k))
    .map((k) => forbidden(path ? `${path}.${keyText(k)}` : keyText(k), "unknown field"));
}

/** A string list, or its errors. Absent and null are []. */
function stringList(value: unknown, path: string, errors: FieldError[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.push(wrongType(path, value, "array"));
    return [];
  }
  const items = value as unknown[];
  items.forEach((item, i) => {
    if (typeof item !== "string") errors.push(wrongType(`${path}[${i}]`, item, "string"));
  });
  return items.filter((item): item is string => typeof item === "string");
}

/** kube's ValidatePolicyRule for a cluster-wide role (isNamespaced = false). */
function policyRuleErrors(rule: PolicyRule, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (rule.verbs.length === 0) {
    errors.push(required(`${path}.verbs`, "verbs must contain at least one value"));
  }
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length > 0) {
    const mixed = [rule.apiGroups, rule.resources, rule.resourceNames].some(
      (l) => (l ?? []).length > 0,
    );
    if (mixed) {
      errors.push(
        invalid(
          `${path}.nonResourceURLs`,
          urls,
          "rules cannot apply to both regular resources and non-resource URLs",
        ),
      );
    }
    return errors;
  }
  if ((rule.apiGroups ?? []).length === 0) {
    errors.push(required(`${path}.apiGroups`, "resource rules must supply at least one api group"));
  }
  if ((rule.resources ?? []).length === 0) {
    errors.push(required(`${path}.resources`, "resource rules must supply at least one resource"));
  }
  return errors;
}

function parseRule(value: unknown, path: string, errors: FieldError[]): PolicyRule | undefined {
  if (!isObject(value)) {
    errors.push(wrongType(path, value, "object"));
    return undefined;
  }
  errors.push(...unknownFields(value, path, RULE_LISTS));
  const found: FieldError[] = [];
  const lists = Object.fromEntries(
    RULE_LISTS.map((key) => [key, stringList(own(value, key), `${path}.${key}`, found)]),
  ) as Record<(typeof RULE_LISTS)[number], string[]>;
  errors.push(...found);
  if (found.length > 0) return undefined;
  const rule: PolicyRule = { ...lists };
  errors.push(...policyRuleErrors(rule, path));
  return rule;
}

function parseRules(value: unknown, path: string, errors: FieldError[]): PolicyRule[] {
  if (value === undefined || value === null) {
    errors.push(required(path));
    return [];
  }
  if (!Array.isArray(value)) {
    errors.push(wrongType(path, value, "array"));
    return [];
  }
  if (value.length > MAX_RULES_PER_ROLE) {
    errors.push({
      type: "TooMany",
      field: path,
      badValue: value.length,
      detail: `must have at most ${MAX_RULES_PER_ROLE} items`,
    });
    return [];
  }
  return (value as unknown[]).flatMap((rule, i) => parseRule(rule, `${path}[${i}]`, errors) ?? []);
}

function roleName(value: unknown, path: string, errors: FieldError[]): string | undefined {
  if (value === undefined || value === null || value === "") {
    errors.push(required(path));
  } else if (typeof value !== "string") {
    errors.push(wrongType(path, value, "string"));
  } else if (value.length > MAX_NAME_LENGTH) {
    errors.push(tooLong(path, MAX_NAME_LENGTH));
  } else if (value === LOFT_CLI_ROLE) {
    errors.push(forbidden(path, `"${LOFT_CLI_ROLE}" is a built-in role and cannot be redefined`));
  } else {
    return value;
  }
  return undefined;
}

function parseRoles(list: unknown[], errors: FieldError[]): Map<string, PolicyRule[]> {
  const roles = new Map<string, PolicyRule[]>();
  list.forEach((entry, i) => {
    const path = `roles[${i}]`;
    if (!isObject(entry)) {
      errors.push(wrongType(path, entry, "object"));
      return;
    }
    errors.push(...unknownFields(entry, path, ["name", "rules"]));
    const name = roleName(own(entry, "name"), `${path}.name`, errors);
    const rules = parseRules(own(entry, "rules"), `${path}.rules`, errors);
    if (name === undefined) return;
    if (roles.has(name)) errors.push(duplicate(`${path}.name`, name));
    else roles.set(name, rules);
  });
  return roles;
}

function rolesList(document: unknown, errors: FieldError[]): unknown[] {
  if (document === null) return [];
  if (!isObject(document)) {
    errors.push(wrongType("<document>", document, "object"));
    return [];
  }
  errors.push(...unknownFields(document, "", ["roles"]));
  const list = own(document, "roles");
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    errors.push(wrongType("roles", list, "array"));
    return [];
  }
  if (list.length > MAX_ROLES) {
    errors.push({
      type: "TooMany",
      field: "roles",
      badValue: list.length,
      detail: `must have at most ${MAX_ROLES} items`,
    });
    return [];
  }
  return list as unknown[];
}

function invalidFile(message: string, errors: readonly FieldError[] = []): KubeError {
  const details = errors.length > 0 ? { causes: errors.map(toCause) } : undefined;
  return new KubeError(400, "BadRequest", `invalid roles file: ${message}`, details);
}

/**
 * Reads a roles file. Any problem throws a 400 KubeError whose message names each bad field by
 * its path (`roles[1].rules[0].verbs: Required value: …`); the caller prints it and exits.
 */
export function parseRolesFile(text: string, groupDomain: string): RoleSet {
  if (Buffer.byteLength(text, "utf8") > MAX_ROLES_FILE_BYTES) {
    throw invalidFile(`larger than ${MAX_ROLES_FILE_BYTES} bytes`);
  }
  const parsed = parseYamlDocument(text, "roles file");
  if (!parsed.ok) throw invalidFile(parsed.problems.join("; "));
  const errors: FieldError[] = [];
  const roles = parseRoles(rolesList(parsed.value, errors), errors);
  if (errors.length > 0) throw invalidFile(aggregateText(errors), errors);
  const all = new Map<string, readonly PolicyRule[]>([
    [LOFT_CLI_ROLE, freeze(loftCliRules(groupDomain))],
  ]);
  for (const [name, rules] of roles) all.set(name, freeze(rules));
  return new Roles(all);
}
