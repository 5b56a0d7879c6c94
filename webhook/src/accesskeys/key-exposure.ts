// In hashed storage no plaintext key may be stored anywhere (docs/decisions.md OAK-19). kubectl
// puts the whole applied object, spec.key included, into the annotation
// kubectl.kubernetes.io/last-applied-configuration (`kubectl apply`, `create --save-config`,
// `replace --save-config`), so the mutating webhook hashes the key there as it hashes spec.key.
// Any other place the key turns up in (an annotation, a label, a description) is refused: the
// webhook looks for the key by value, every plaintext it knows of as a substring of every string,
// and every token of a string whose SHA-256 is the stored hash, not by field name. No answer
// quotes the key: where it is part of a name or a field path, it is hidden (keyHider).

import { forbidden, type FieldError } from "../shared/field-errors.js";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import {
  digestsEqual,
  hashKey,
  isStoredHash,
  MIN_KEY_LENGTH,
  storedDigest,
  tokenDigest,
} from "../shared/key-hash.js";
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

/** Runs between the separators of config text: whitespace, quotes, = : , ; brackets, backslash. */
const TOKENS = /[^\s"'`=:,;()[\]{}<>\\]+/g;
/** What a generated key is made of (base64url): a run of these may be a key joined to punctuation. */
const KEY_ALPHABET_RUNS = /[A-Za-z0-9_-]+/g;

/** What a found key is replaced with in answers, as the scrubber writes it (server/redact.ts). */
export const HIDDEN_KEY = "[REDACTED]";

/** Where a match starts and ends in a text. */
type Span = [start: number, end: number];

/**
 * The spans of `text` that may be a whole key, at least MIN_KEY_LENGTH long: each run between the
 * separators of config text (TOKENS), and each run of the base64url alphabet, also with one `-` or
 * `_` taken off either end, so that a generated key joined to other punctuation
 * (`https://ci:KEY@host`, `a.b/KEY`, `KEY.`, a generateName `KEY-`) is found too. A key joined to
 * further letters or digits cannot be told from a longer word by its hash.
 */
function candidateSpans(text: string): Span[] {
  const spans: Span[] = [];
  const runs = (pattern: RegExp, trim: boolean) => {
    for (const m of text.matchAll(pattern)) {
      const start = m.index;
      const end = start + m[0].length;
      spans.push([start, end]);
      if (!trim) continue;
      const head = /^[-_]/.test(m[0]) ? 1 : 0;
      const tail = /[-_]$/.test(m[0]) ? 1 : 0;
      if (head) spans.push([start + 1, end]);
      if (tail) spans.push([start, end - 1]);
      if (head && tail) spans.push([start + 1, end - 1]);
    }
  };
  runs(TOKENS, false);
  runs(KEY_ALPHABET_RUNS, true);
  return spans.filter(([a, b]) => b - a >= MIN_KEY_LENGTH);
}

/**
 * Finds the access key of an object in its texts, and in texts made from them (the answers), by
 * value: every plaintext the request carries as a substring (shorter keys are refused as new keys
 * anyway, and a short string would match too much), and every candidate span (candidateSpans) of
 * the object whose SHA-256 is the digest spec.key stands for. A copy found by its hash is then
 * known as a plaintext too, so that it is found, and hidden, wherever else it shows (a name
 * generated from a generateName made of it).
 */
export class KeyFinder {
  private readonly known: Set<string>;

  constructor(obj: OwnedAccessKey, plaintexts: readonly string[]) {
    this.known = new Set(plaintexts.filter((p) => p.length >= MIN_KEY_LENGTH));
    const stored = specKey(obj);
    if (stored === undefined) return;
    // Every copy the hash finds in the object, hashed once here: after this the object's texts
    // (and the answers built from them) are searched for the known copies alone.
    const digest = storedDigest(stored);
    for (const text of textsOf(obj)) {
      if (text.length < MIN_KEY_LENGTH) continue;
      for (const [a, b] of candidateSpans(text)) {
        const token = text.slice(a, b);
        if (digestsEqual(tokenDigest(token), digest)) this.known.add(token);
      }
    }
  }

  /** Where the key shows in `text`: every place of a plaintext or a copy the hash found. */
  spans(text: string): Span[] {
    const found: Span[] = [];
    for (const s of this.known) {
      for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) {
        found.push([at, at + s.length]);
      }
    }
    return found;
  }

  shows(text: string): boolean {
    return this.spans(text).length > 0;
  }

  /** `text` with every place the key shows (overlapping places as one) replaced by HIDDEN_KEY. */
  hide(text: string): string {
    const spans = this.spans(text).sort((x, y) => x[0] - y[0]);
    if (spans.length === 0) return text;
    const merged: Span[] = [];
    for (const [a, b] of spans) {
      const last = merged.at(-1);
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    let out = "";
    let at = 0;
    for (const [a, b] of merged) {
      out += text.slice(at, a) + HIDDEN_KEY;
      at = b;
    }
    return out + text.slice(at);
  }
}

/** Every string of `obj` but spec.key, object keys included; iterative, so any depth is fine. */
function textsOf(obj: OwnedAccessKey): string[] {
  const out: string[] = [];
  const stack: [value: unknown, isSpec: boolean][] = [[obj, false]];
  while (stack.length) {
    const [value, isSpec] = stack.pop()!;
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) for (const v of value) stack.push([v, false]);
    else if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        if (isSpec && k === "key") continue;
        out.push(k);
        stack.push([v, value === obj && k === "spec"]);
      }
    }
  }
  return out;
}

/**
 * Every place outside spec.key where the key shows: a string (or an object key) in which a
 * KeyFinder of `plaintexts` finds it. Paths as kube writes them (`metadata.annotations[a.b/c]`,
 * `spec.description`); the admission layer hides the key where a path holds it (keyHider).
 */
export function exposureErrors(obj: OwnedAccessKey, plaintexts: readonly string[]): FieldError[] {
  const finder = new KeyFinder(obj, plaintexts);
  const errors: FieldError[] = [];
  const visit = (value: unknown, path: string, inMap: boolean): void => {
    if (typeof value === "string") {
      if (finder.shows(value)) errors.push(forbidden(path, EXPOSED));
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
      if (finder.shows(k)) errors.push(forbidden(child, EXPOSED));
      // Labels and annotations are maps: their keys go in brackets, as kube writes them.
      const isMap = (path === "metadata" && (k === "labels" || k === "annotations")) || false;
      visit(v, child, isMap);
    }
  };
  visit(obj, "", false);
  return errors;
}

/**
 * Hides, in any text of an answer, every key the request's objects hold: their plaintext keys and
 * whatever their spec.key's hash finds (KeyFinder). The scrubber hides the values of secret fields
 * and credential-shaped words; a key pasted elsewhere while spec.key holds only its hash (as
 * `kubectl accesskey` sends it to hashed storage) is neither, and only the hash finds it.
 */
export function keyHider(objects: readonly (OwnedAccessKey | null)[]): (text: string) => string {
  const finders = objects
    .filter((o): o is OwnedAccessKey => o !== null)
    .map((o) => new KeyFinder(o, plaintextKeys(o)));
  return (text) => finders.reduce((t, f) => f.hide(t), text);
}
