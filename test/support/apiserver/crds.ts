// CustomResourceDefinitions, as apiextensions-apiserver handles them: a CRD is validated and
// defaulted on write (ValidateCustomResourceDefinition's texts), and a controller watching the
// store serves the resource of every served version, then sets the NamesAccepted and Established
// conditions and status.acceptedNames. Deleting the CRD stops serving it and deletes its objects.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import {
  invalid,
  notSupported,
  required,
  type FieldError,
} from "../../../webhook/src/api/field-errors.js";
import { newInvalid } from "../../../webhook/src/api/status.js";
import type { PrinterColumn, ResourceRegistry, ResourceType } from "./resources.js";
import { OBJECT_VERB_LIST } from "./resources.js";
import type { KubeObject, ObjectStore, StoreEvent } from "./store.js";

export const CRD_GROUP = "apiextensions.k8s.io";
export const CRD_RESOURCE = "customresourcedefinitions";
const CRD_GK = { group: CRD_GROUP, kind: "CustomResourceDefinition" };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json => (isObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];

export const isCrdType = (type: { group: string; resource: string }): boolean =>
  type.group === CRD_GROUP && type.resource === CRD_RESOURCE;

// ---- validation and defaulting ------------------------------------------------------------------

const PRINTER_TYPES = ["boolean", "date", "integer", "number", "string"];
const PRINTER_FORMATS = [
  "byte",
  "date",
  "date-time",
  "double",
  "float",
  "int32",
  "int64",
  "password",
];
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** SetDefaults_CustomResourceDefinition: singular, listKind and conversion; returns a copy. */
export function defaultCrd(crd: KubeObject): KubeObject {
  const out = structuredClone(crd);
  const spec = obj(out["spec"]);
  const names = obj(spec["names"]);
  if (!names["singular"] && str(names["kind"]))
    names["singular"] = str(names["kind"]).toLowerCase();
  if (!names["listKind"] && str(names["kind"])) names["listKind"] = `${str(names["kind"])}List`;
  spec["names"] = names;
  if (!isObject(spec["conversion"])) spec["conversion"] = { strategy: "None" };
  out["spec"] = spec;
  return out;
}

/** ValidateCustomResourceDefinition (the parts a test cluster meets), as field errors. */
export function crdErrors(crd: KubeObject): FieldError[] {
  const spec = obj(crd["spec"]);
  const names = obj(spec["names"]);
  const group = str(spec["group"]);
  const errors: FieldError[] = [];
  const name = crd.metadata?.name ?? "";
  if (!name) errors.push(required("metadata.name", "name or generateName is required"));
  else if (name !== `${str(names["plural"])}.${group}`) {
    errors.push(invalid("metadata.name", name, `must be spec.names.plural+"."+spec.group`));
  }
  if (!group) errors.push(required("spec.group"));
  else if (!DNS1123_SUBDOMAIN.test(group)) {
    errors.push(
      invalid(
        "spec.group",
        group,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ),
    );
  } else if (!group.includes(".")) {
    errors.push(invalid("spec.group", group, "should be a domain with at least one dot"));
  }
  const scope = str(spec["scope"]);
  if (!scope) errors.push(required("spec.scope"));
  else if (scope !== "Cluster" && scope !== "Namespaced") {
    errors.push(notSupported("spec.scope", scope, ["Cluster", "Namespaced"]));
  }
  errors.push(...versionErrors(spec["versions"]));
  for (const field of ["plural", "singular", "kind", "listKind"]) {
    if (!str(names[field])) errors.push(required(`spec.names.${field}`));
  }
  if (str(names["kind"]) && names["kind"] === names["listKind"]) {
    errors.push(
      invalid("spec.names.listKind", names["listKind"], "kind and listKind may not be the same"),
    );
  }
  return errors;
}

function versionErrors(raw: unknown): FieldError[] {
  const versions = Array.isArray(raw) ? raw.map(obj) : [];
  if (versions.length === 0) return [required("spec.versions", "must have at least one version")];
  const errors: FieldError[] = [];
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (!str(v["name"])) errors.push(required(`${at}.name`));
    if (!isObject(obj(v["schema"])["openAPIV3Schema"])) {
      errors.push(required(`${at}.schema.openAPIV3Schema`));
    }
    const columns = Array.isArray(v["additionalPrinterColumns"])
      ? v["additionalPrinterColumns"]
      : [];
    columns.forEach((c, j) =>
      errors.push(...columnErrors(obj(c), `${at}.additionalPrinterColumns[${j}]`)),
    );
  });
  const names = versions.map((v) => str(v["name"]));
  if (new Set(names).size !== names.length) {
    errors.push(invalid("spec.versions", raw, "must contain unique version names"));
  }
  if (versions.filter((v) => v["storage"] === true).length !== 1) {
    errors.push(
      invalid("spec.versions", raw, "must have exactly one version marked as storage version"),
    );
  }
  return errors;
}

function columnErrors(col: Json, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const types = `must be one of ${PRINTER_TYPES.join(",")}`;
  if (!str(col["name"])) errors.push(required(`${at}.name`));
  if (!str(col["type"])) errors.push(required(`${at}.type`, types));
  else if (!PRINTER_TYPES.includes(str(col["type"]))) {
    errors.push(invalid(`${at}.type`, col["type"], types));
  }
  if (str(col["format"]) && !PRINTER_FORMATS.includes(str(col["format"]))) {
    errors.push(
      invalid(`${at}.format`, col["format"], `must be one of ${PRINTER_FORMATS.join(",")}`),
    );
  }
  if (!str(col["jsonPath"])) errors.push(required(`${at}.JSONPath`));
  return errors;
}

/** The write-path check for a CRD: defaults it, then throws 422 Invalid when it is not valid. */
export function validateCrd(crd: KubeObject): KubeObject {
  const defaulted = defaultCrd(crd);
  const errors = crdErrors(defaulted);
  if (errors.length > 0) throw newInvalid(CRD_GK, crd.metadata?.name ?? "", errors);
  return defaulted;
}

// ---- served types -------------------------------------------------------------------------------

/** The resource types a CRD serves: one per served version. */
export function crdResourceTypes(crd: KubeObject): ResourceType[] {
  const spec = obj(crd["spec"]);
  const names = obj(spec["names"]);
  const versions = Array.isArray(spec["versions"]) ? spec["versions"].map(obj) : [];
  return versions
    .filter((v) => v["served"] === true)
    .map((v) => {
      const type: ResourceType = {
        group: str(spec["group"]),
        version: str(v["name"]),
        resource: str(names["plural"]),
        singular: str(names["singular"]) || str(names["kind"]).toLowerCase(),
        kind: str(names["kind"]),
        namespaced: spec["scope"] === "Namespaced",
        verbs: [...OBJECT_VERB_LIST],
        crd: crd.metadata.name,
        subresources: subresourcesOf(obj(v["subresources"]), str(names["kind"])),
      };
      const shortNames = strings(names["shortNames"]);
      const categories = strings(names["categories"]);
      if (shortNames.length > 0) type.shortNames = shortNames;
      if (categories.length > 0) type.categories = categories;
      const schema = obj(v["schema"])["openAPIV3Schema"];
      if (isObject(schema)) type.schema = schema;
      if (Array.isArray(v["additionalPrinterColumns"])) {
        type.printerColumns = v["additionalPrinterColumns"].map(obj) as unknown as PrinterColumn[];
      }
      return type;
    });
}

function subresourcesOf(subs: Json, kind: string): ResourceType["subresources"] {
  const out: NonNullable<ResourceType["subresources"]> = [];
  if (isObject(subs["status"]))
    out.push({ name: "status", kind, verbs: ["get", "patch", "update"] });
  if (isObject(subs["scale"])) {
    out.push({ name: "scale", kind: "Scale", verbs: ["get", "patch", "update"] });
  }
  return out;
}

/** status.acceptedNames and the conditions the naming and establishing controllers set. */
export function crdStatus(crd: KubeObject, conflict: string | null, now: string): Json {
  const spec = obj(defaultCrd(crd)["spec"]);
  const names = obj(spec["names"]);
  const versions = Array.isArray(spec["versions"]) ? spec["versions"].map(obj) : [];
  const storage = versions.find((v) => v["storage"] === true);
  const old = obj(crd["status"]);
  const condition = (type: string, ok: boolean, reason: string, message: string): Json => ({
    type,
    status: ok ? "True" : "False",
    lastTransitionTime: now,
    reason,
    message,
  });
  const conditions = conflict
    ? [
        condition("NamesAccepted", false, "PluralConflict", conflict),
        condition("Established", false, "NotAccepted", "not all names are accepted"),
      ]
    : [
        condition("NamesAccepted", true, "NoConflicts", "no conflicts found"),
        condition(
          "Established",
          true,
          "InitialNamesAccepted",
          "the initial names have been accepted",
        ),
      ];
  const stored = strings(old["storedVersions"]);
  const storageName = str(storage?.["name"]);
  if (storageName && !stored.includes(storageName)) stored.push(storageName);
  return {
    conditions,
    acceptedNames: conflict ? { plural: "", kind: "" } : names,
    storedVersions: stored,
  };
}

// ---- the controller -----------------------------------------------------------------------------

/**
 * Watches the store for CRDs: serves, re-serves and stops serving their types at once, and writes
 * their status right after (kube's controllers are asynchronous too; clients wait for
 * Established). Returns the function that stops it.
 */
export class CrdController {
  private readonly unsubscribe: () => void;
  /** CRD name -> the types it registered. */
  private readonly served = new Map<string, ResourceType[]>();

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly store: ObjectStore,
  ) {
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
  }

  stop(): void {
    this.unsubscribe();
  }

  /** Installs a CRD object directly (no API request), establishing it at once. */
  install(crd: KubeObject): KubeObject {
    const type = this.crdType();
    const valid = validateCrd({ ...crd, apiVersion: `${CRD_GROUP}/v1`, kind: CRD_GK.kind });
    this.store.put(type, valid);
    this.establish(valid.metadata.name);
    return this.store.get(type, "", valid.metadata.name)!;
  }

  private crdType(): ResourceType {
    const type = this.registry.byResource(CRD_GROUP, "v1", CRD_RESOURCE);
    if (!type) throw new Error("test apiserver: customresourcedefinitions are not served");
    return type;
  }

  private onEvent(e: StoreEvent): void {
    if (e.resourceKey !== `${CRD_GROUP}/v1/${CRD_RESOURCE}`) return;
    const name = e.object.metadata.name;
    if (e.type === "DELETED") {
      // After the event is delivered to every listener: removing objects makes events of its own.
      setImmediate(() => this.forget(name));
      return;
    }
    this.serve(e.object);
    if (needsStatus(e.object, this.conflictOf(e.object))) setImmediate(() => this.establish(name));
  }

  private serve(crd: KubeObject): void {
    const name = crd.metadata.name;
    const types = crdResourceTypes(crd);
    for (const old of this.served.get(name) ?? []) {
      if (!types.some((t) => t.version === old.version))
        this.registry.remove(old.group, old.version, old.resource);
    }
    if (this.conflictOf(crd)) return;
    for (const t of types) this.registry.add(t);
    this.served.set(name, types);
  }

  /** A plural of the CRD's group already served by another CRD (kube: PluralConflict). */
  private conflictOf(crd: KubeObject): string | null {
    const spec = obj(crd["spec"]);
    const plural = str(obj(spec["names"])["plural"]);
    const taken = this.registry
      .all()
      .some(
        (t) =>
          t.group === str(spec["group"]) &&
          t.resource === plural &&
          t.crd !== undefined &&
          t.crd !== crd.metadata.name,
      );
    return taken ? `"${plural}" is already in use` : null;
  }

  private establish(name: string): void {
    const type = this.crdType();
    const current = this.store.get(type, "", name);
    if (!current) return;
    const conflict = this.conflictOf(current);
    if (!needsStatus(current, conflict)) return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    this.store.put(type, { ...current, status: crdStatus(current, conflict, now) });
  }

  private forget(name: string): void {
    for (const t of this.served.get(name) ?? []) {
      this.registry.remove(t.group, t.version, t.resource);
      for (const o of this.store.list(t, "")) {
        this.store.remove(t, o.metadata.namespace ?? "", o.metadata.name);
      }
    }
    this.served.delete(name);
  }
}

/** Whether the conditions or accepted names still need writing. */
function needsStatus(crd: KubeObject, conflict: string | null): boolean {
  const status = obj(crd["status"]);
  const conditions = Array.isArray(status["conditions"]) ? status["conditions"].map(obj) : [];
  const established = conditions.find((c) => c["type"] === "Established");
  const wanted = conflict ? "False" : "True";
  if (established?.["status"] !== wanted) return true;
  const names = obj(obj(defaultCrd(crd)["spec"])["names"]);
  return !conflict && JSON.stringify(status["acceptedNames"]) !== JSON.stringify(names);
}

/** The repository's manifests/ CRDs (what `crds: "manifests"` installs). */
export function manifestCrdFiles(): string[] {
  // dist/test/support/apiserver/crds.js -> <repo>/manifests
  return [
    fileURLToPath(new URL("../../../../manifests/crd-ownedaccesskeys.yaml", import.meta.url)),
  ];
}

/** The CustomResourceDefinition documents of YAML files (other kinds are skipped). */
export function loadCrdFiles(paths: readonly string[]): KubeObject[] {
  return paths.flatMap((path) =>
    parseAllDocuments(readFileSync(path, "utf8"))
      .map((doc) => doc.toJS() as unknown)
      .filter((o): o is KubeObject => isObject(o) && o["kind"] === CRD_GK.kind),
  );
}
