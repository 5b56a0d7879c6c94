// Secrets in printed objects (docs/decisions.md OAK-33). Masking is by value, not by field: a key
// shows up wherever someone copied it (`kubectl apply` keeps the whole manifest, key included, in
// the kubectl.kubernetes.io/last-applied-configuration annotation; a user may paste it into a
// description). So the object's secret values are collected first:
//   - spec.key as stored;
//   - for a plain key, also `sha256:<hex>` of it and the bare hex;
//   - for a hashed key (`sha256:<hex>`), also the bare hex, and every string in the object whose
//     SHA-256 is that hash: whole strings (values and map keys), the strings inside a string that
//     holds JSON (such as last-applied-configuration), and the words of a string;
//   - keys the plugin generated in this run, with their hashes;
//   - the identity provider's secrets (spec.identity.connectorData, spec.oidcLogin's tokens).
// Then every occurrence of each, as a substring, in every string of the object (map keys too) is
// replaced by KEY_MASK (also as JSON writes it inside a string, with JavaScript's or Go's escapes);
// a string holding JSON that still decodes to a secret after that is replaced whole. A value
// shorter than MIN_SUBSTRING is replaced only where it stands alone: a whole string, or a JSON
// string inside a string (`"abc"`); as a substring it would mask unrelated text all over. --show-key turns all of it off but the identity provider's
// secrets, which are always masked.

import { hash } from "node:crypto";
import { ownPath } from "../../../webhook/src/shared/own-path.js";
import { HASH_PREFIX, hashKey, isStoredHash } from "../../../webhook/src/shared/key-hash.js";
import { isJsonObject, type JsonObject } from "./go-values.js";

/** What a masked secret reads as; never a valid key (keys are URL-safe base64 or sha256:<hex>). */
export const KEY_MASK = "REDACTED";

/** Secrets at least this long are masked inside other text too. */
export const MIN_SUBSTRING = 8;

/** The longest key the server accepts (docs/decisions.md OAK-14): no longer string can be one. */
const MAX_KEY_LENGTH = 8192;
/** JSON inside JSON inside a string is looked into this deep. */
const MAX_JSON_DEPTH = 4;

const IDP_SECRETS: readonly (readonly string[])[] = [
  ["spec", "identity", "connectorData"],
  ["spec", "oidcLogin", "idToken"],
  ["spec", "oidcLogin", "accessToken"],
  ["spec", "oidcLogin", "refreshToken"],
];

export interface MaskOptions {
  /** --show-key: print spec.key and its copies (the identity provider's secrets stay masked). */
  showKey?: boolean;
  /** Keys the plugin generated in this run. */
  generated?: readonly string[];
}

/**
 * key-hash.ts's tokenDigest as hex, one-shot: a list hashes every string of every object (a few
 * thousand for 100 keys), about 3 times faster than through a Hash object.
 */
const sha256Hex = (text: string) => hash("sha256", text, "hex");

/**
 * A key and the forms of it the server or a copy may hold: itself, `sha256:<hex>` (what the plugin
 * sends to hashed storage, OAK-24), the hex; for a stored hash, itself and its hex.
 */
export function keyForms(key: string): string[] {
  if (isStoredHash(key)) return [key, key.slice(HASH_PREFIX.length)];
  const hashed = hashKey(key);
  return [key, hashed, hashed.slice(HASH_PREFIX.length)];
}

function withHashes(key: string, into: Set<string>): void {
  for (const form of keyForms(key)) into.add(form);
}

/** Every string of a value: values and map keys, and the strings of JSON held in a string. */
function* strings(value: unknown, depth = 0): Generator<string> {
  if (typeof value === "string") {
    yield value;
    const start = value.trimStart()[0];
    if (depth < MAX_JSON_DEPTH && (start === "{" || start === "[" || start === '"')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        return;
      }
      yield* strings(parsed, depth + 1);
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) yield* strings(item, depth);
    return;
  }
  if (isJsonObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* strings(v, depth);
    }
  }
}

/** Whole strings and their words (split at white space and quotes), as long as a key may be. */
function candidates(object: unknown): Set<string> {
  const out = new Set<string>();
  for (const s of strings(object)) {
    if (s.length <= MAX_KEY_LENGTH) out.add(s);
    for (const word of s.split(/[\s"'`]+/)) {
      if (word !== "" && word.length <= MAX_KEY_LENGTH) out.add(word);
    }
  }
  return out;
}

/** The strings of `object` whose SHA-256 is the stored hash `key`. */
function preimages(object: unknown, key: string): string[] {
  const hex = key.slice(HASH_PREFIX.length);
  return [...candidates(object)].filter((c) => c !== key && sha256Hex(c) === hex);
}

/** The secret values of one object (see the top of this file), longest first. */
export function secretValues(object: unknown, opts: MaskOptions = {}): string[] {
  const found = new Set<string>();
  for (const path of IDP_SECRETS) {
    const v = ownPath(object, path);
    if (typeof v === "string" && v !== "") found.add(v);
  }
  if (!opts.showKey) {
    const key = ownPath(object, ["spec", "key"]);
    if (typeof key === "string" && key !== "") {
      withHashes(key, found);
      if (isStoredHash(key)) for (const plain of preimages(object, key)) withHashes(plain, found);
    }
    for (const generated of opts.generated ?? []) if (generated) withHashes(generated, found);
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * The ways a secret is written inside JSON text: JavaScript's escaping, and Go's, which also
 * writes `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes (kubectl writes last-applied-configuration
 * with Go's encoder).
 */
function jsonForms(secret: string): string[] {
  const js = JSON.stringify(secret).slice(1, -1);
  const go = js.replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [...new Set([js, go])];
}

/**
 * A secret with the texts it is replaced in, worked out once per object rather than once per
 * string (a list masks thousands of strings): a long one's own text and JSON forms, a short one's
 * JSON forms in quotes.
 */
interface Needle {
  secret: string;
  long: boolean;
  forms: readonly string[];
}

function needles(secrets: readonly string[]): Needle[] {
  return secrets.map((secret) => {
    const long = secret.length >= MIN_SUBSTRING;
    const forms = long
      ? [...new Set([secret, ...jsonForms(secret)])]
      : jsonForms(secret).map((form) => `"${form}"`);
    return { secret, long, forms };
  });
}

const QUOTED_MASK = `"${KEY_MASK}"`;

/** `text` with every occurrence of the secrets masked (short ones only where they stand alone). */
export function maskText(text: string, secrets: readonly string[]): string {
  return maskWith(text, needles(secrets));
}

function maskWith(text: string, found: readonly Needle[]): string {
  let out = text;
  for (const { secret, long, forms } of found) {
    if (out === secret) return KEY_MASK;
    // includes() first: most strings hold no secret, and split/join would copy them.
    for (const form of forms) {
      if (out.includes(form)) out = out.split(form).join(long ? KEY_MASK : QUOTED_MASK);
    }
  }
  return out;
}

/** Whether strings() would look into `text` as JSON: what it starts with, spaces aside. */
function mayHoldJson(text: string): boolean {
  const start = text.trimStart()[0];
  return start === "{" || start === "[" || start === '"';
}

/**
 * A string masked, and then checked: if JSON inside it still decodes to a secret (written with
 * escapes no form above matches, such as `\u0061`), the whole string is masked.
 */
function maskString(text: string, found: readonly Needle[]): string {
  const masked = maskWith(text, found);
  if (masked === KEY_MASK || !mayHoldJson(masked)) return masked;
  for (const inner of strings(masked)) {
    if (inner === masked) continue;
    const hit = found.some(({ secret, long }) =>
      long ? inner.includes(secret) : inner === secret,
    );
    if (hit) return KEY_MASK;
  }
  return masked;
}

function maskValue(value: unknown, found: readonly Needle[]): unknown {
  if (typeof value === "string") return maskString(value, found);
  if (Array.isArray(value)) return value.map((v) => maskValue(v, found));
  if (isJsonObject(value)) {
    // fromEntries defines own properties: a "__proto__" key stays a key.
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [maskString(k, found), maskValue(v, found)]),
    );
  }
  return value;
}

/** Fields by name: `true` for the whole value, or the fields wanted inside it. */
export interface FieldTree {
  readonly [field: string]: true | FieldTree;
}

/**
 * A copy of `object` with its secrets masked wherever they appear (see the top of this file).
 * With `fields`, the copy holds only those fields (by their masked names), masked as the whole
 * copy would have them: a printer that reads a few fields masks no more than those. A field left
 * out is missing from the copy, never unmasked.
 */
export function maskSecrets(object: unknown, opts: MaskOptions = {}, fields?: FieldTree): unknown {
  if (!isJsonObject(object)) return object;
  const paths = opts.showKey ? IDP_SECRETS : [["spec", "key"], ...IDP_SECRETS];
  let out = object;
  for (const path of paths) out = maskPath(out, path);
  const secrets = secretValues(object, opts);
  if (secrets.length === 0) return out;
  return fields ? maskFields(out, fields, needles(secrets)) : maskValue(out, needles(secrets));
}

/** maskValue of an object, keeping only `fields` of it (matched by masked name, as printed). */
function maskFields(obj: JsonObject, fields: FieldTree, found: readonly Needle[]): unknown {
  const entries: [string, unknown][] = [];
  for (const [k, v] of Object.entries(obj)) {
    const name = maskString(k, found);
    if (!Object.hasOwn(fields, name)) continue;
    const inner = fields[name]!;
    entries.push([
      name,
      inner !== true && isJsonObject(v) ? maskFields(v, inner, found) : maskValue(v, found),
    ]);
  }
  // As in maskValue: own properties, and the last of two keys masked alike wins.
  return Object.fromEntries(entries);
}

/** Copies only the objects along `path`; leaves the value alone unless it is a non-empty string. */
function maskPath(obj: JsonObject, path: readonly string[]): JsonObject {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(obj, head)) return obj;
  const value = obj[head];
  if (rest.length === 0) {
    return typeof value === "string" && value !== "" ? { ...obj, [head]: KEY_MASK } : obj;
  }
  if (!isJsonObject(value)) return obj;
  const masked = maskPath(value, rest);
  return masked === value ? obj : { ...obj, [head]: masked };
}
