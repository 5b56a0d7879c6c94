// In hashed storage no plaintext key may be stored anywhere (docs/decisions.md OAK-19). kubectl
// puts the whole applied object, spec.key included, into the annotation
// kubectl.kubernetes.io/last-applied-configuration (`kubectl apply`, `create --save-config`,
// `replace --save-config`), so the mutating webhook hashes the key there as it hashes spec.key.
// Any other place the key turns up in (an annotation, a label, a description) is refused: the
// webhook looks for the key by value, every plaintext it knows of as a substring of every string,
// and every token of a string whose SHA-256 is the stored hash, not by field name.

import { forbidden, type FieldError } from "../api/field-errors.js";
import type { OwnedAccessKey } from "../api/ownedaccesskey.js";
import {
  digestsEqual,
  hashKey,
  isStoredHash,
  MIN_KEY_LENGTH,
  storedDigest,
  tokenDigest,
} from "./key-hash.js";
import { isObject, own } from "./json-fields.js";

export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

const EXPOSED =
  "must not contain the access key (spec.key); keep it out of annotations, labels and other fields";
const UNHASHED_LAST_APPLIED =
  "holds spec.key unhashed, which --key-storage=hashed never stores; is the mutating webhook installed?";

function specKey(obj: unknown): string | undefined {
  const spec = isObject(obj) ? own(obj, "spec") : undefined;
  const key = isObject(spec) ? own(spec, "key") : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

function annotations(obj: OwnedAccessKey): Record<string, unknown> | undefined {
  const meta = isObject(obj) ? own(obj, "metadata") : undefined;
  const value = isObject(meta) ? own(meta, "annotations") : undefined;
  return isObject(value) ? value : undefined;
}

/** The object kubectl recorded in last-applied-configuration, or undefined when there is none. */
function lastApplied(obj: OwnedAccessKey): Record<string, unknown> | undefined {
  const text = annotations(obj)?.[LAST_APPLIED];
  if (typeof text !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Plaintext keys the request carries: spec.key and last-applied's spec.key, when not hashes. */
export function plaintextKeys(obj: OwnedAccessKey): string[] {
  return [specKey(obj), specKey(lastApplied(obj))].filter(
    (k): k is string => k !== undefined && !isStoredHash(k),
  );
}

/**
 * `obj` with the plaintext spec.key inside last-applied-configuration replaced by its hash, as
 * spec.key itself is; `obj` itself when there is nothing to rewrite. kubectl reads the annotation
 * back as JSON, so it is written again as JSON (a trailing newline kept).
 */
export function hashLastApplied(obj: OwnedAccessKey): OwnedAccessKey {
  const applied = lastApplied(obj);
  const key = specKey(applied);
  if (!applied || key === undefined || isStoredHash(key)) return obj;
  const spec = own(applied, "spec") as Record<string, unknown>;
  const rewritten = { ...applied, spec: { ...spec, key: hashKey(key) } };
  const old = annotations(obj)![LAST_APPLIED] as string;
  const text = JSON.stringify(rewritten) + (old.endsWith("\n") ? "\n" : "");
  return {
    ...obj,
    metadata: { ...obj.metadata, annotations: { ...annotations(obj), [LAST_APPLIED]: text } },
  };
}

/** In hashed storage, last-applied-configuration must hold no spec.key but a hash. */
export function lastAppliedErrors(obj: OwnedAccessKey | null): FieldError[] {
  if (!obj) return [];
  const key = specKey(lastApplied(obj));
  if (key === undefined || isStoredHash(key)) return [];
  return [forbidden(`metadata.annotations[${LAST_APPLIED}]`, UNHASHED_LAST_APPLIED)];
}

const TOKEN_SEPARATORS = /[\s"'`=:,;()[\]{}<>\\]+/;

/**
 * Every place outside spec.key where the key shows: a string (or an object key) that contains one
 * of `plaintexts`, or a token of one whose SHA-256 is the digest spec.key stands for. Paths as kube
 * writes them (`metadata.annotations[a.b/c]`, `spec.description`).
 */
export function exposureErrors(obj: OwnedAccessKey, plaintexts: readonly string[]): FieldError[] {
  const stored = specKey(obj);
  const digest = stored === undefined ? undefined : storedDigest(stored);
  // Shorter keys are refused as new keys anyway; a short string would match too much.
  const secrets = plaintexts.filter((p) => p.length >= MIN_KEY_LENGTH);
  const shows = (text: string): boolean => {
    if (secrets.some((s) => text.includes(s))) return true;
    if (digest === undefined || text.length < MIN_KEY_LENGTH) return false;
    return text
      .split(TOKEN_SEPARATORS)
      .some((t) => t.length >= MIN_KEY_LENGTH && digestsEqual(tokenDigest(t), digest));
  };
  const errors: FieldError[] = [];
  const visit = (value: unknown, path: string, inMap: boolean): void => {
    if (typeof value === "string") {
      if (shows(value)) errors.push(forbidden(path, EXPOSED));
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, `${path}[${i}]`, false));
      return;
    }
    if (!isObject(value)) return;
    for (const [k, v] of Object.entries(value)) {
      if (path === "spec" && k === "key") continue;
      const child = inMap ? `${path}[${k}]` : path === "" ? k : `${path}.${k}`;
      if (shows(k)) errors.push(forbidden(child, EXPOSED));
      // Labels and annotations are maps: their keys go in brackets, as kube writes them.
      const isMap = (path === "metadata" && (k === "labels" || k === "annotations")) || false;
      visit(v, child, isMap);
    }
  };
  visit(obj, "", false);
  return errors;
}
