// Access keys by the digest of their key, fed by the watch cache (apply() on every change). A
// token is hashed once and found with one Map lookup, so the cost does not depend on the number
// of keys. The index keeps only digests and names; the objects stay in the cache (source.get).

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import type { KeysByName } from "./contracts.js";
import { digestsEqual, storedDigest, tokenDigest } from "../shared/key-hash.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export type KeyLookup =
  | { kind: "found"; key: OwnedAccessKey }
  | { kind: "none" }
  | { kind: "ambiguous"; names: string[] };

/** The digest spec.key stands for, or undefined when the object has no usable key. */
function keyDigest(object: OwnedAccessKey | undefined): Buffer | undefined {
  const key: unknown =
    object?.spec && Object.hasOwn(object.spec, "key") ? object.spec.key : undefined;
  return typeof key === "string" && key !== "" ? storedDigest(key) : undefined;
}

/**
 * Names sharing one digest: usually one name (a string, to keep memory per key small); an array
 * when keys collide, which the validating webhook refuses for new keys.
 */
type Names = string | string[];

const list = (names: Names): string[] => (typeof names === "string" ? [names] : [...names]);

export class KeyIndex {
  /** hex digest -> name(s) */
  private readonly byDigest = new Map<string, Names>();
  /** name -> hex digest, to remove a key whose object is already gone from the source. */
  private readonly digestOf = new Map<string, string>();

  constructor(private readonly source: KeysByName) {}

  /** Whether the source (the watch cache) has synced; answers are only trusted then. */
  synced(): boolean {
    return this.source.synced();
  }

  /** How many keys (names) are indexed. */
  get size(): number {
    return this.digestOf.size;
  }

  /** Follows one change of the watch cache; the object, if any, is read from the source. */
  apply(type: WatchEventType, name: string): void {
    this.remove(name);
    if (type === "DELETED") return;
    const digest = keyDigest(this.source.get(name));
    if (digest) this.add(name, digest.toString("hex"));
  }

  /**
   * The key whose spec.key stands for this token: the token is hashed once, found with one Map
   * lookup by its digest, and confirmed with a constant-time comparison against the digest of the
   * key the cache holds now. (The lookup's timing could only tell how much of a SHA-256 digest
   * matches a stored one, which gives no way towards a key.)
   */
  findByToken(token: string): KeyLookup {
    const digest = tokenDigest(token);
    const names = this.byDigest.get(digest.toString("hex"));
    if (names === undefined) return { kind: "none" };
    if (typeof names !== "string") return { kind: "ambiguous", names: [...names] };
    const key = this.source.get(names);
    // The cache may hold a newer object than the index has seen (apply() not called yet).
    const current = keyDigest(key);
    if (!key || !current || !digestsEqual(current, digest)) return { kind: "none" };
    return { kind: "found", key };
  }

  /** The names of keys whose spec.key stands for the same digest as `stored` (plain or hashed). */
  namesWithSameKey(stored: string): string[] {
    if (stored === "") return [];
    const names = this.byDigest.get(storedDigest(stored).toString("hex"));
    return names === undefined ? [] : list(names);
  }

  private add(name: string, hex: string): void {
    const names = this.byDigest.get(hex);
    this.byDigest.set(hex, names === undefined ? name : [...list(names), name]);
    this.digestOf.set(name, hex);
  }

  private remove(name: string): void {
    const hex = this.digestOf.get(name);
    if (hex === undefined) return;
    this.digestOf.delete(name);
    const names = this.byDigest.get(hex);
    if (names === undefined) return;
    const rest = list(names).filter((n) => n !== name);
    if (rest.length === 0) this.byDigest.delete(hex);
    else this.byDigest.set(hex, rest.length === 1 ? rest[0]! : rest);
  }
}
