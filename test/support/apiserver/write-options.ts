// CreateOptions, UpdateOptions, PatchOptions and DeleteOptions as kube-apiserver reads and
// validates them: dryRun may only be "All" (anything else is 422 Invalid on `<Kind>Options.meta.k8s.io`),
// DeleteOptions come from the body when there is one and from the query otherwise.

import {
  OMIT_VALUE,
  invalid,
  notSupported,
  type FieldError,
} from "../../../webhook/src/api/field-errors.js";
import { newBadRequest, newInvalid } from "../../../webhook/src/api/status.js";

export type OptionsKind = "CreateOptions" | "UpdateOptions" | "PatchOptions" | "DeleteOptions";

export interface WriteOptions {
  dryRun: boolean;
  /** The options object as admission sees it (apiVersion meta.k8s.io/v1, kind set). */
  object: Record<string, unknown>;
}

export interface DeleteOptions extends WriteOptions {
  preconditions: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
}

const FIELD_VALIDATION = ["", "Ignore", "Strict", "Warn"];

/** Go's %#v of a []string, as field errors print the bad dryRun value: `[]string{"x"}`. */
function goStrings(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`;
}

/** ValidateDryRun: every value must be "All". */
function dryRunErrors(values: readonly string[]): FieldError[] {
  if (values.every((v) => v === "All")) return [];
  // The bad value is a []string, printed Go-style; the detail carries it after the type text.
  return [
    {
      type: "NotSupported",
      field: "dryRun",
      badValue: OMIT_VALUE,
      detail: `${goStrings(values)}: supported values: "All"`,
    },
  ];
}

function optionsInvalid(kind: OptionsKind, errs: FieldError[]): Error {
  return newInvalid({ group: "meta.k8s.io", kind }, "", errs);
}

/** Create/Update/Patch options from the query. */
export function parseWriteOptions(
  kind: Exclude<OptionsKind, "DeleteOptions">,
  query: URLSearchParams,
): WriteOptions {
  const dryRun = query.getAll("dryRun");
  const fieldValidation = query.get("fieldValidation") ?? "";
  const fieldManager = query.get("fieldManager") ?? "";
  const errs = dryRunErrors(dryRun);
  if (!FIELD_VALIDATION.includes(fieldValidation)) {
    errs.push(notSupported("fieldValidation", fieldValidation, FIELD_VALIDATION));
  }
  if (fieldManager.length > 128)
    errs.push({ type: "TooLong", field: "fieldManager", detail: "may not be more than 128 bytes" });
  if (kind === "PatchOptions" && query.has("force")) {
    errs.push({
      type: "Forbidden",
      field: "force",
      detail: "may not be specified for non-apply patch",
    });
  }
  if (errs.length) throw optionsInvalid(kind, errs);
  const object: Record<string, unknown> = { apiVersion: "meta.k8s.io/v1", kind };
  if (dryRun.length) object["dryRun"] = dryRun;
  if (fieldManager) object["fieldManager"] = fieldManager;
  if (fieldValidation) object["fieldValidation"] = fieldValidation;
  return { dryRun: dryRun.length > 0, object };
}

const PROPAGATION = ["Foreground", "Background", "Orphan"];

/**
 * DeleteOptions: decoded from the body when there is one (the query is then ignored, as kube does),
 * else from the query; validated by ValidateDeleteOptions.
 */
export function parseDeleteOptions(body: unknown, query: URLSearchParams): DeleteOptions {
  const raw = body === undefined ? fromQuery(query) : fromBody(body);
  const dryRun = stringList(raw["dryRun"]);
  const errs = dryRunErrors(dryRun);
  const policy = raw["propagationPolicy"];
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== "string" || !PROPAGATION.includes(policy)) {
      errs.push(notSupported("propagationPolicy", policy, [...PROPAGATION, "nil"]));
    }
    if (raw["orphanDependents"] !== undefined && raw["orphanDependents"] !== null) {
      errs.push(
        invalid(
          "propagationPolicy",
          policy,
          "orphanDependents and deletionPropagation cannot be both set",
        ),
      );
    }
  }
  if (errs.length) throw optionsInvalid("DeleteOptions", errs);
  const pre = (raw["preconditions"] ?? {}) as Record<string, unknown>;
  const preconditions: DeleteOptions["preconditions"] = {};
  if (typeof pre["uid"] === "string") preconditions.uid = pre["uid"];
  if (typeof pre["resourceVersion"] === "string")
    preconditions.resourceVersion = pre["resourceVersion"];
  const out: DeleteOptions = {
    dryRun: dryRun.length > 0,
    object: { ...raw, apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions" },
    preconditions,
  };
  if (typeof policy === "string") out.propagationPolicy = policy;
  return out;
}

function fromBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw newBadRequest("decoded object cannot be converted to DeleteOptions");
  }
  const obj = body as Record<string, unknown>;
  // Per-group DeleteOptions are still accepted, as kube does for old clients.
  if (obj["kind"] !== undefined && obj["kind"] !== "DeleteOptions") {
    throw newBadRequest("decoded object cannot be converted to DeleteOptions");
  }
  return obj;
}

function fromQuery(query: URLSearchParams): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  if (query.has("dryRun")) raw["dryRun"] = query.getAll("dryRun");
  const policy = query.get("propagationPolicy");
  if (policy !== null) raw["propagationPolicy"] = policy;
  const grace = query.get("gracePeriodSeconds");
  if (grace !== null) raw["gracePeriodSeconds"] = Number(grace);
  const orphan = query.get("orphanDependents");
  if (orphan !== null) raw["orphanDependents"] = orphan === "true";
  return raw;
}

function stringList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}
