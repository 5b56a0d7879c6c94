// Validation of the parts of vcluster.yaml that vgate uses (docs/decisions.md EPS-9, EPS-34 and
// KND-3; docs/reference.md#patch-config and docs/reference.md#patch-config-validation): the
// patches of every kind vCluster accepts them on (config/patch-kinds.ts), the custom resources'
// included, and sync.toHost.namespaces. Every problem is listed; nothing throws.
// vCluster's own messages (docs/reference.md#patch-config-validation) are kept word for word so
// users can search for them.
import vm from "node:vm";
import { canonicalPath, parsePath, PathSyntaxError } from "../patches/path.js";
import { reservedMappingProblem } from "./reserved-namespaces.js";
import {
  FROM_HOST_KEYS,
  kindKeys,
  LABELS_KEYS,
  PATCH_KEYS,
  REFERENCE_KEYS,
  REFERENCE_PATH_KEYS,
  ROOT_KEYS,
  SYNC_KEYS,
  TO_HOST_KEYS,
  unknownKeys,
  wrongSchemaType,
} from "./schema-keys.js";
import {
  customResourceKind,
  PATCH_KINDS,
  PATCHES_OF_NO_KIND,
  type Keyword,
  type PatchKind,
  type SyncSection,
} from "./patch-kinds.js";
import { isObject } from "../shared/json.js";

type Problems = string[];

/** What validation needs to know besides the file. */
export interface ValidateOptions {
  /** The namespace vgate runs in (--namespace), reserved like kube-system (EPS-20). */
  selfNamespace?: string;
}
type Obj = Record<string, unknown>;
/** Where a value sits, as JSON pointer tokens, for the schema's messages. */
type At = readonly (string | number)[];

const NAMESPACES = "sync.toHost.namespaces";
/** The kinds whose `enabled` may be "auto" too (EnableAutoSwitchWithPatches), by `<section>.<key>`. */
const AUTO_ENABLED = new Set([
  "fromHost.csiDrivers",
  "fromHost.csiNodes",
  "fromHost.csiStorageCapacities",
  "fromHost.storageClasses",
  "toHost.gatewayApi.referenceGrants",
]);

/** Where one kind's section is: its config path (vCluster's message base) and JSON pointer. */
interface Section {
  kind: PatchKind;
  base: string;
  at: At;
}

function sectionOf(kind: PatchKind, name?: string): Section {
  const keys = name === undefined ? kind.key.split(".") : ["customResources", name];
  return {
    kind,
    base: `sync.${kind.section}.${keys.join(".")}`,
    at: ["sync", kind.section, ...keys],
  };
}
/**
 * Update change sets never contain these (docs/reference.md#patch-config-validation,
 * docs/reference.md#patch-change-sets): such a patch could only fire on create.
 */
const UNPATCHABLE = new Set(["metadata.name", "metadata.namespace"]);

// SES rejects these before parsing (ses/src/transforms.js), so the sandbox would fail at sync time.
const SES_IMPORT = /(^|[^.]|\.\.\.)\bimport(\s*(?:\(|\/[/*]))/;
const SES_HTML_COMMENT = /(?:<!--|-->)/;

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function own(obj: Obj, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function wrongType(path: string, expected: string, value: unknown): string {
  return `${path}: must be ${expected}, got ${typeName(value)}`;
}

/**
 * `value` as an object at `path`, for a key vCluster's chart gives a default: absent or null is
 * "not set" (helm's null removes the key and its default; docs/decisions.md EPS-34).
 */
function optionalObject(value: unknown, path: string, problems: Problems): Obj | null {
  if (value === undefined || value === null) return null;
  if (isObject(value)) return value;
  problems.push(wrongType(path, "an object", value));
  return null;
}

/**
 * `value` as an object at `path`, for a key without a chart default: absent is "not set", null is
 * the wrong type (helm keeps it, and the chart's schema refuses it; EPS-34).
 */
function objectOrAbsent(value: unknown, path: string, problems: Problems): Obj | null {
  if (value === undefined) return null;
  if (isObject(value)) return value;
  problems.push(wrongType(path, "an object", value));
  return null;
}

/**
 * A string field that may be absent; "" is the same as absent (Go `omitempty`). null is the
 * wrong type: these fields sit in list entries, which helm never coalesces (EPS-34).
 */
function optionalString(obj: Obj, key: string, path: string, problems: Problems): string {
  const value = own(obj, key);
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  problems.push(wrongType(`${path}.${key}`, "a string", value));
  return "";
}

/** Parses a patch path; returns its canonical form, or null after recording the problem. */
function checkPath(path: string, where: string, problems: Problems): string | null {
  try {
    return canonicalPath(parsePath(path));
  } catch (err) {
    // Anything else than a PathSyntaxError is a parser bug, but still a problem, never a crash.
    const message =
      err instanceof PathSyntaxError || err instanceof Error ? err.message : String(err);
    problems.push(`${where}: ${message}`);
    return null;
  }
}

/** Compiles without running: `new vm.Script` only parses. Strict, as SES compartments are. */
function checkExpression(source: string, where: string, problems: Problems): void {
  if (source === "") return;
  if (SES_IMPORT.test(source)) {
    problems.push(`${where}: possible import expression rejected; expressions cannot import`);
  }
  if (SES_HTML_COMMENT.test(source)) {
    problems.push(`${where}: "<!--" and "-->" are rejected by the sandbox`);
  }
  try {
    new vm.Script(`"use strict";${source}`);
  } catch (err) {
    problems.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function checkReference(value: unknown, where: string, at: At, problems: Problems): void {
  const ref = objectOrAbsent(value, where, problems);
  if (ref === null) return;
  problems.push(...unknownKeys(ref, at, REFERENCE_KEYS));
  for (const key of ["apiVersion", "kind"]) {
    const text = own(ref, key);
    if (text === undefined || text === null) problems.push(`${where}.${key} is required`);
    else if (typeof text !== "string")
      problems.push(wrongType(`${where}.${key}`, "a string", text));
    else if (text.trim() === "") problems.push(`${where}.${key} must not be empty`);
  }
  for (const key of REFERENCE_PATH_KEYS) {
    const path = optionalString(ref, key, where, problems);
    if (path !== "") checkPath(path, `${where}.${key}`, problems);
  }
  const set = REFERENCE_PATH_KEYS.filter(
    (k) => k !== "namePath" && own(ref, k) && own(ref, k) !== "",
  );
  if (set.length > 0 && !own(ref, "namePath")) {
    problems.push(`${where}.namePath is required when ${set.join(", ")} is set`);
  }
}

function checkLabels(value: unknown, where: string, at: At, problems: Problems): void {
  const labels = objectOrAbsent(value, where, problems);
  if (labels === null) return;
  problems.push(...unknownKeys(labels, at, LABELS_KEYS));
}

/** How many of vCluster's three modes a patch uses (config/validation.go, validatePatches). */
function modesUsed(patch: Obj): number {
  const set = (key: string): boolean => {
    const value = own(patch, key);
    return value !== undefined && value !== null && value !== "";
  };
  const expression = set("expression") || set("reverseExpression") ? 1 : 0;
  return expression + (set("labels") ? 1 : 0) + (set("reference") ? 1 : 0);
}

/**
 * KND-3: an expression keyword that never runs for the kind is an error, where vCluster skips it
 * silently (config/patch-kinds.ts says which keyword runs in which direction).
 */
function checkKeywords(patch: Obj, where: string, kind: PatchKind, problems: Problems): void {
  const runs = [kind.toHost, kind.toVirtual].filter((k): k is Keyword => k !== null);
  for (const keyword of ["expression", "reverseExpression"] as const) {
    const value = own(patch, keyword);
    if (value === undefined || value === null || value === "" || runs.includes(keyword)) continue;
    const ways = [
      kind.toHost === null ? null : `virtual → host with ${kind.toHost}`,
      kind.toVirtual === null ? null : `host → virtual with ${kind.toVirtual}`,
    ].filter((w) => w !== null);
    problems.push(
      `${where}.${keyword}: never runs for sync.${kind.section}.${kind.key}, which syncs ${ways.join(" and ")} only`,
    );
  }
}

/** Checks patches[i]; returns its canonical path for the duplicate check, or null. */
function checkPatch(
  patch: unknown,
  i: number,
  section: Section,
  problems: Problems,
): string | null {
  const where = `${section.base}.patches[${i}]`;
  const at = [...section.at, "patches", i];
  if (!isObject(patch)) {
    problems.push(wrongType(where, "an object", patch));
    return null;
  }
  problems.push(...unknownKeys(patch, at, PATCH_KEYS));
  const canonical = checkPatchPath(patch, where, problems);
  checkExpression(
    optionalString(patch, "expression", where, problems),
    `${where}.expression`,
    problems,
  );
  const reverse = optionalString(patch, "reverseExpression", where, problems);
  checkExpression(reverse, `${where}.reverseExpression`, problems);
  checkReference(own(patch, "reference"), `${where}.reference`, [...at, "reference"], problems);
  checkLabels(own(patch, "labels"), `${where}.labels`, [...at, "labels"], problems);
  checkKeywords(patch, where, section.kind, problems);
  const used = modesUsed(patch);
  if (used > 1) problems.push(`${where} can only use one of: expression, labels or reference`);
  if (used === 0) problems.push(`${where} need to use one of: expression, labels or reference`);
  return canonical;
}

function checkPatchPath(patch: Obj, where: string, problems: Problems): string | null {
  const path = own(patch, "path");
  if (path === undefined) {
    problems.push(`${where}.path is required`);
    return null;
  }
  if (typeof path !== "string") {
    problems.push(wrongType(`${where}.path`, "a string", path));
    return null;
  }
  const canonical = checkPath(path, `${where}.path`, problems);
  if (canonical !== null && UNPATCHABLE.has(canonical)) {
    problems.push(
      `${where}.path: ${JSON.stringify(path)} is not a valid patch path: ` +
        "metadata.name and metadata.namespace are never in an update change set",
    );
  }
  return canonical;
}

function checkPatches(value: unknown, section: Section, problems: Problems): void {
  // The chart gives no default list, so helm keeps a null and the schema refuses it (EPS-34).
  if (value === undefined) return;
  const base = section.base;
  if (!Array.isArray(value)) {
    problems.push(wrongType(`${base}.patches`, "an array", value));
    return;
  }
  const seen = new Map<string, number>();
  value.forEach((patch: unknown, i) => {
    const canonical = checkPatch(patch, i, section, problems);
    if (canonical === null) return;
    const first = seen.get(canonical);
    if (first === undefined) {
      seen.set(canonical, i);
      return;
    }
    const path = (patch as Obj)["path"] as string;
    problems.push(
      `${base}.patches[${first}] and ${base}.patches[${i}] have the same path ${JSON.stringify(path)}`,
    );
  });
}

/** A kind's section: its keys, `enabled` and its patches. */
function checkKindSection(
  section: Obj,
  where: Section,
  keys: readonly string[],
  problems: Problems,
) {
  problems.push(...unknownKeys(section, where.at, keys));
  const enabled = own(section, "enabled");
  const auto = AUTO_ENABLED.has(`${where.kind.section}.${where.kind.key}`);
  if (enabled !== undefined && enabled !== null && typeof enabled !== "boolean") {
    if (!(auto && typeof enabled === "string")) {
      const expected = auto ? "a boolean or a string" : "a boolean";
      problems.push(wrongType(`${where.base}.enabled`, expected, enabled));
    }
  }
  checkPatches(own(section, "patches"), where, problems);
}

/** sync.<section>.customResources: every entry, named `<resource>.<group>`. */
function checkCustomResources(value: unknown, side: SyncSection, problems: Problems): void {
  const where = `sync.${side}.customResources`;
  const entries = optionalObject(value, where, problems);
  if (entries === null) return;
  for (const [name, entryValue] of Object.entries(entries)) {
    const section = sectionOf(customResourceKind(side, name, true), name);
    // An entry has no chart default: a null stays, and the schema refuses it (EPS-34).
    const entry = objectOrAbsent(entryValue, section.base, problems);
    if (entry === null) continue;
    const scope = own(entry, "scope");
    if (scope !== undefined && typeof scope !== "string") {
      problems.push(wrongType(`${section.base}.scope`, "a string", scope));
    } else {
      problems.push(...scopeProblems(side, name, scope ?? "", entry));
    }
    checkKindSection(entry, section, kindKeys(side, "customResources"), problems);
  }
}

/**
 * vCluster's rules for a customResources entry's scope, and a sync.fromHost one's mappings, with
 * its messages (pkg/config/validation.go:100-111, validateFromHostSyncCustomResources, v0.34):
 * toHost syncs namespaced custom resources only; fromHost a namespaced one only where its mappings
 * say, a cluster-scoped one every object (docs/decisions.md KND-90).
 */
function scopeProblems(side: SyncSection, name: string, scope: string, entry: Obj): string[] {
  if (side === "toHost") {
    if (scope === "" || scope === "Namespaced") return [];
    return [
      `unsupported scope ${scope} for sync.toHost.customResources['${name}'].scope. Only 'Namespaced' is allowed`,
    ];
  }
  if (scope !== "" && scope !== "Cluster" && scope !== "Namespaced") {
    return [
      `unsupported scope ${scope} for sync.fromHost.customResources['${name}'].scope. Only 'Cluster' and 'Namespaced' are allowed`,
    ];
  }
  const mappings = own(entry, "mappings");
  const byName = isObject(mappings) ? own(mappings, "byName") : undefined;
  const mapped = isObject(byName) && Object.keys(byName).length > 0;
  if (mapped && scope !== "Namespaced") {
    return [
      `.selector.mappings are only supported for sync.fromHost.customResources['${name}'] with scope 'Namespaced'`,
    ];
  }
  if (scope === "Namespaced" && !mapped) {
    return [
      `.selector.mappings is required for Namespaced scope sync.fromHost.customResources['${name}']`,
    ];
  }
  return [];
}

/**
 * A section that holds kinds and has `patches` of its own, which vCluster applies to no kind
 * (`sync.toHost.gatewayApi`, PATCHES_OF_NO_KIND): its keys and `enabled`, and a patch there is a
 * problem (KND-93). Its kinds' sections are checked with every kind's.
 */
function checkPatchesOfNoKind(side: Obj, name: SyncSection, key: string, problems: Problems) {
  const base = `sync.${name}.${key}`;
  const value = optionalObject(own(side, key), base, problems);
  if (value === null) return;
  problems.push(...unknownKeys(value, ["sync", name, key], kindKeys(name, key)));
  const enabled = own(value, "enabled");
  if (enabled !== undefined && enabled !== null && typeof enabled !== "boolean") {
    problems.push(wrongType(`${base}.enabled`, "a boolean", enabled));
  }
  const patches = own(value, "patches");
  if (patches === undefined || patches === null) return;
  if (!Array.isArray(patches)) problems.push(wrongType(`${base}.patches`, "a list", patches));
  else if (patches.length > 0) {
    const kinds = PATCH_KINDS.filter((k) => k.section === name && k.key.startsWith(`${key}.`));
    problems.push(
      `${base}.patches: vCluster applies these to no kind; put each under the kind it patches: ${kinds.map((k) => `${base}.${k.key.slice(key.length + 1)}.patches`).join(", ")}`,
    );
  }
}

/** The section of a built-in kind (`gatewayApi.httpRoutes` is a path), or null when absent. */
function kindSection(side: Obj, section: Section, problems: Problems): Obj | null {
  const keys = section.kind.key.split(".");
  let parent: Obj = side;
  for (const key of keys.slice(0, -1)) {
    // A parent of the wrong type is reported by its own check (checkPatchesOfNoKind).
    const next = own(parent, key);
    if (!isObject(next)) return null;
    parent = next;
  }
  return optionalObject(own(parent, keys.at(-1)!), section.base, problems);
}

/** Every kind of `side` with patches, the custom resources last. */
function checkSide(side: Obj, name: SyncSection, problems: Problems): void {
  for (const at of PATCHES_OF_NO_KIND) {
    const [section, key] = at.split(".") as [string, string];
    if (section === name) checkPatchesOfNoKind(side, name, key, problems);
  }
  for (const kind of PATCH_KINDS) {
    if (kind.section !== name) continue;
    const section = sectionOf(kind);
    const value = kindSection(side, section, problems);
    if (value !== null) checkKindSection(value, section, kindKeys(name, kind.key), problems);
  }
  checkCustomResources(own(side, "customResources"), name, problems);
}

function wildcardCount(text: string): number {
  return text.split("*").length - 1;
}

function checkMapping(
  from: string,
  to: unknown,
  where: string,
  problems: Problems,
  options: ValidateOptions,
): void {
  if (typeof to !== "string") {
    problems.push(wrongType(where, "a string", to));
    return;
  }
  const [fromStars, toStars] = [wildcardCount(from), wildcardCount(to)];
  if (fromStars > 1 || toStars > 1) {
    problems.push(`${where}: a mapping may use at most one "*" on each side`);
  } else if (fromStars !== toStars) {
    problems.push(`${where}: "*" must be used on both sides of a mapping or on neither`);
  }
  // docs/decisions.md EPS-20: checked whether or not namespaces.enabled is set, so that turning
  // the mappings on can never make a reserved namespace a target.
  const reserved = reservedMappingProblem(where, to, options.selfNamespace);
  if (reserved !== null) problems.push(reserved);
}

function checkNamespaces(value: unknown, problems: Problems, options: ValidateOptions): void {
  // Only the fields vgate reads are checked; vCluster has more (e.g. mappingsOnly).
  // Its keys, `enabled` and patches are checked with every kind's (checkSide).
  const namespaces = isObject(value) ? value : null;
  if (namespaces === null) return;
  const mappings = optionalObject(own(namespaces, "mappings"), `${NAMESPACES}.mappings`, problems);
  if (mappings === null) return;
  const where = `${NAMESPACES}.mappings.byName`;
  const byName = optionalObject(own(mappings, "byName"), where, problems);
  if (byName === null) return;
  for (const [from, to] of Object.entries(byName)) {
    checkMapping(from, to, `${where}[${JSON.stringify(from)}]`, problems, options);
  }
}

/**
 * Every problem on the way to and in the sections of a parsed vcluster.yaml with patches
 * (config/patch-kinds.ts, the custom resources' entries included) and in sync.toHost.namespaces,
 * as messages naming the field; [] when it is valid. Keys that vCluster's schema does not allow
 * are reported at every level on the way (schema-keys.ts), so a misspelt `sync.tohost` or a file
 * that is not a vCluster config at all is a problem, not a silent "no patches". Other sections
 * pass untouched. A mapping whose host side can be a reserved namespace
 * (config/reserved-namespaces.ts) is a problem too.
 */
export function validateVClusterConfig(raw: unknown, options: ValidateOptions = {}): string[] {
  const problems: Problems = [];
  if (raw === undefined || raw === null) return problems; // an empty file: all defaults
  if (!isObject(raw)) return [wrongSchemaType([], "object", typeName(raw))];
  problems.push(...unknownKeys(raw, [], ROOT_KEYS));
  const sync = optionalObject(own(raw, "sync"), "sync", problems);
  if (sync === null) return problems;
  problems.push(...unknownKeys(sync, ["sync"], SYNC_KEYS));
  const toHost = optionalObject(own(sync, "toHost"), "sync.toHost", problems);
  if (toHost !== null) {
    problems.push(...unknownKeys(toHost, ["sync", "toHost"], TO_HOST_KEYS));
    checkSide(toHost, "toHost", problems);
    checkNamespaces(own(toHost, "namespaces"), problems, options);
  }
  const fromHost = optionalObject(own(sync, "fromHost"), "sync.fromHost", problems);
  if (fromHost !== null) {
    problems.push(...unknownKeys(fromHost, ["sync", "fromHost"], FROM_HOST_KEYS));
    checkSide(fromHost, "fromHost", problems);
  }
  return problems;
}
