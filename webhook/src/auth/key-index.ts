// Access keys by the digest of their key, fed by the watch cache (apply() on every change). A
// token is hashed once and found in one hash table, so the cost does not depend on the number of
// keys. The index keeps only digests, as 32 bytes each in one typed array outside the V8 heap (a
// hex string and two Map entries per key were ~150 bytes of heap), and names; the objects stay in
// the cache (source.get).

import { randomBytes } from "node:crypto";
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

const DIGEST_BYTES = 32;
const FIRST_SLOTS = 64;
const EMPTY = 0;
const REMOVED = -1;

export class KeyIndex {
  /** Slot i's digest is bytes [32i, 32i + 32). */
  private digests = new Uint8Array(FIRST_SLOTS * DIGEST_BYTES);
  /** Slot i's key name; undefined for a free slot. */
  private readonly names: (string | undefined)[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  /**
   * Open addressing with linear probing: slot + 1 per bucket, EMPTY, or REMOVED. Keys with one
   * digest (which the validating webhook refuses for new keys) each have a bucket of their own.
   */
  private table = new Int32Array(FIRST_SLOTS * 2);
  private removed = 0;
  /**
   * Random per process: a key's bucket comes from a keyed hash of its whole digest, so no one who
   * may create keys (hashed storage takes any `sha256:<hex>`) can pile them into one probe chain.
   */
  private readonly seed = new Uint32Array(randomBytes(DIGEST_BYTES).buffer).map((k) => k | 1);
  /** Scratch copy of a digest, read as words by bucketOf(). */
  private readonly probe = new Uint8Array(DIGEST_BYTES);
  private readonly probeWords = new Uint32Array(this.probe.buffer);

  constructor(private readonly source: KeysByName) {}

  /** Whether the source (the watch cache) has synced; answers are only trusted then. */
  synced(): boolean {
    return this.source.synced();
  }

  /** How many keys (names) are indexed. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Follows one change of the watch cache; the object, if any, is read from the source. */
  apply(type: WatchEventType, name: string): void {
    this.remove(name);
    if (type === "DELETED") return;
    const digest = keyDigest(this.source.get(name));
    if (digest) this.add(name, digest);
  }

  /**
   * The key whose spec.key stands for this token: the token is hashed once, found in the table by
   * its digest (each candidate compared in constant time), and confirmed with a constant-time
   * comparison against the digest of the key the cache holds now. (The table's timing could only
   * tell where a SHA-256 digest's bucket lies, which gives no way towards a key.)
   */
  findByToken(token: string): KeyLookup {
    const digest = tokenDigest(token);
    const names = this.namesOf(digest);
    if (names.length === 0) return { kind: "none" };
    if (names.length > 1) return { kind: "ambiguous", names };
    const key = this.source.get(names[0]!);
    // The cache may hold a newer object than the index has seen (apply() not called yet).
    const current = keyDigest(key);
    if (!key || !current || !digestsEqual(current, digest)) return { kind: "none" };
    return { kind: "found", key };
  }

  /** The names of keys whose spec.key stands for the same digest as `stored` (plain or hashed). */
  namesWithSameKey(stored: string): string[] {
    if (stored === "") return [];
    return this.namesOf(storedDigest(stored));
  }

  /** The names indexed with this digest, sorted. */
  private namesOf(digest: Uint8Array): string[] {
    const mask = this.table.length - 1;
    const names: string[] = [];
    for (let b = this.bucketOf(digest); this.table[b] !== EMPTY; b = (b + 1) & mask) {
      const slot = this.table[b]! - 1;
      if (slot >= 0 && this.holds(slot, this.probe)) names.push(this.names[slot]!);
    }
    return names.sort();
  }

  /** Copies `digest` to the scratch probe and gives its first bucket. */
  private bucketOf(digest: Uint8Array): number {
    this.probe.set(digest);
    let h = 0;
    for (let i = 0; i < this.probeWords.length; i++) {
      h = (h + Math.imul(this.probeWords[i]!, this.seed[i]!)) | 0;
    }
    return (h >>> 0) % this.table.length;
  }

  /** Whether slot `slot` holds `digest`, in time that does not depend on the bytes. */
  private holds(slot: number, digest: Uint8Array): boolean {
    const at = slot * DIGEST_BYTES;
    let diff = 0;
    for (let i = 0; i < DIGEST_BYTES; i++) diff |= this.digests[at + i]! ^ digest[i]!;
    return diff === 0;
  }

  private add(name: string, digest: Uint8Array): void {
    const slot = this.freeSlots.pop() ?? this.names.length;
    if ((slot + 1) * DIGEST_BYTES > this.digests.length) {
      const bigger = new Uint8Array(this.digests.length * 2);
      bigger.set(this.digests);
      this.digests = bigger;
    }
    this.digests.set(digest, slot * DIGEST_BYTES);
    this.names[slot] = name;
    this.slotOf.set(name, slot);
    if ((this.slotOf.size + this.removed) * 2 > this.table.length) this.rehash();
    else this.insert(slot);
  }

  private insert(slot: number): void {
    const mask = this.table.length - 1;
    let b = this.bucketOf(this.digests.subarray(slot * DIGEST_BYTES, (slot + 1) * DIGEST_BYTES));
    while (this.table[b] !== EMPTY) b = (b + 1) & mask;
    this.table[b] = slot + 1;
  }

  /** A table for twice the keys there are, without the REMOVED marks. */
  private rehash(): void {
    let size = FIRST_SLOTS * 2;
    while (size < this.slotOf.size * 4) size *= 2;
    this.table = new Int32Array(size);
    this.removed = 0;
    for (const slot of this.slotOf.values()) this.insert(slot);
  }

  private remove(name: string): void {
    const slot = this.slotOf.get(name);
    if (slot === undefined) return;
    this.slotOf.delete(name);
    const mask = this.table.length - 1;
    let b = this.bucketOf(this.digests.subarray(slot * DIGEST_BYTES, (slot + 1) * DIGEST_BYTES));
    while (this.table[b] !== slot + 1) b = (b + 1) & mask;
    this.table[b] = REMOVED;
    this.removed += 1;
    this.names[slot] = undefined;
    this.freeSlots.push(slot);
  }
}
