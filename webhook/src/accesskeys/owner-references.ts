// metadata.ownerReferences (docs/reference.md#kube-owner-references): apimachinery's
// ValidateOwnerReferences with Kubernetes <= 1.36 messages, the "newly blocking" references of the
// OwnerReferencesPermissionEnforcement plugin (docs/reference.md#kube-owner-reference-permission),
// and the API server's duplicate-entry warning.

import { invalid, type FieldError } from "../shared/field-errors.js";
import type { OwnerReference } from "../shared/ownedaccesskey.js";
import { isAbsent, isObject, own, wrongType, type JsonObject } from "./json-fields.js";

const PATH = "metadata.ownerReferences";
const STRING_FIELDS = ["apiVersion", "kind", "name", "uid"] as const;
const BOOLEAN_FIELDS = ["controller", "blockOwnerDeletion"] as const;

/** An entry as Go would decode it: missing strings are "", missing booleans stay unset. */
function normalize(entry: JsonObject): OwnerReference {
  const str = (key: string): string => {
    const v = own(entry, key);
    return typeof v === "string" ? v : "";
  };
  const ref: OwnerReference = {
    apiVersion: str("apiVersion"),
    kind: str("kind"),
    name: str("name"),
    uid: str("uid"),
  };
  const controller = own(entry, "controller");
  const block = own(entry, "blockOwnerDeletion");
  if (typeof controller === "boolean") ref.controller = controller;
  if (typeof block === "boolean") ref.blockOwnerDeletion = block;
  return ref;
}

function typeErrors(entry: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of STRING_FIELDS) {
    const v = own(entry, key);
    if (!isAbsent(v) && typeof v !== "string") errs.push(wrongType(`${path}.${key}`, v, "string"));
  }
  for (const key of BOOLEAN_FIELDS) {
    const v = own(entry, key);
    if (!isAbsent(v) && typeof v !== "boolean")
      errs.push(wrongType(`${path}.${key}`, v, "boolean"));
  }
  return errs;
}

/** schema.ParseGroupVersion; a string it cannot parse yields an empty group and version. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return { group: "", version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: "", version: "" };
}

/** validateOwnerReference for one well-typed entry. */
function entryErrors(ref: OwnerReference, entry: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const { group, version } = parseGroupVersion(ref.apiVersion);
  const typed = (key: string): boolean =>
    typeof own(entry, key) === "string" || isAbsent(own(entry, key));
  if (version === "" && typed("apiVersion")) {
    errs.push(invalid(`${path}.apiVersion`, ref.apiVersion, "version must not be empty"));
  }
  for (const key of ["kind", "name", "uid"] as const) {
    if (ref[key] === "" && typed(key))
      errs.push(invalid(`${path}.${key}`, "", "must not be empty"));
  }
  // BannedOwners: core v1 Event may not own anything.
  if (group === "" && version === "v1" && ref.kind === "Event") {
    errs.push(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"));
  }
  return errs;
}

/**
 * ValidateOwnerReferences: each entry, and at most one `controller: true`
 * (docs/decisions.md OAK-3).
 */
export function validateOwnerReferences(refs: unknown): FieldError[] {
  if (isAbsent(refs)) return [];
  if (!Array.isArray(refs)) return [wrongType(PATH, refs, "array")];
  const list = refs as unknown[];
  const shown = list.map((e) => (isObject(e) ? normalize(e) : e));
  const errs: FieldError[] = [];
  let firstController = "";
  list.forEach((entry, i) => {
    const path = `${PATH}[${i}]`;
    if (!isObject(entry)) {
      errs.push(wrongType(path, entry, "object"));
      return;
    }
    const ref = normalize(entry);
    errs.push(...typeErrors(entry, path), ...entryErrors(ref, entry, path));
    if (ref.controller !== true) return;
    const current = `${ref.kind}/${ref.name}`;
    if (!firstController) {
      firstController = current;
      return;
    }
    errs.push(
      invalid(
        PATH,
        shown,
        `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
      ),
    );
  });
  return errs;
}

function objectEntries(refs: unknown): { index: number; ref: OwnerReference }[] {
  if (!Array.isArray(refs)) return [];
  return (refs as unknown[]).flatMap((e, index) =>
    isObject(e) ? [{ index, ref: normalize(e) }] : [],
  );
}

/**
 * References that newly block the owner's deletion: `blockOwnerDeletion: true` and a UID that was
 * absent from the old list or present there without blockOwnerDeletion true (gc_admission.go
 * newBlockingOwnerDeletionRefs; as there, the last old entry with a UID wins). On CREATE pass an
 * empty or absent old list: every blocking reference counts.
 */
export function newlyBlockingOwnerReferences(
  oldRefs: unknown,
  newRefs: unknown,
): { index: number; ref: OwnerReference }[] {
  const wasBlocking = new Map<string, boolean>();
  for (const { ref } of objectEntries(oldRefs)) {
    wasBlocking.set(ref.uid, ref.blockOwnerDeletion === true);
  }
  return objectEntries(newRefs).filter(
    ({ ref }) => ref.blockOwnerDeletion === true && wasBlocking.get(ref.uid) !== true,
  );
}

const sameRef = (a: OwnerReference, b: OwnerReference): boolean =>
  a.apiVersion === b.apiVersion &&
  a.kind === b.kind &&
  a.name === b.name &&
  a.uid === b.uid &&
  a.controller === b.controller &&
  a.blockOwnerDeletion === b.blockOwnerDeletion;

/**
 * The API server's warning for exact duplicate entries (endpoints/handlers/rest.go
 * dedupOwnerReferences): one UID per dropped duplicate, joined with ", ". kube dedups before
 * admission, so in a cluster this only fires when the webhook is used standalone.
 */
export function ownerReferenceDuplicatesWarning(refs: unknown): string | null {
  const kept: OwnerReference[] = [];
  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const { ref } of objectEntries(refs)) {
    if (seen.has(ref.uid) && kept.some((k) => sameRef(k, ref))) {
      duplicates.push(ref.uid);
      continue;
    }
    seen.add(ref.uid);
    kept.push(ref);
  }
  if (!duplicates.length) return null;
  return (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in " +
    "1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate " +
    `UID(s) observed: ${duplicates.join(", ")}`
  );
}
