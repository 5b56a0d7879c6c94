// Access keys by the digest of their key, fed by the watch cache (apply() on every change). A
// token is hashed once and found in one hash table, so the cost does not depend on the number of
// keys. The index keeps only digests, as 32 bytes each in one typed array outside the V8 heap (a
// hex string and two Map entries per key were ~150 bytes of heap), and names; the objects stay in
// the cache (source.get). A key in a rotation's grace window (spec.previousKey) is indexed under
// its previous digest too, so the old key is found as fast as the new one.

import { randomBytes } from "node:crypto";
import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import type { KeysByName } from "./contracts.js";
import { digestsEqual, storedDigest, tokenDigest } from "../shared/key-hash.js";
import { previousKeyOf } from "../shared/previous-key.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export type KeyLookup =
  /** previous: the token is the key's previous key (spec.previousKey), whatever its deadline. */
  | { kind: "found"; key: OwnedAccessKey; previous: boolean }
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
  /** The slot of a key's previous digest (spec.previousKey), for keys that have one. */
  private readonly previousSlotOf = new Map<string, number>();
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
    const object = this.source.get(name);
    const digest = keyDigest(object);
    if (digest) this.add(name, digest, false);
    const previous = previousKeyOf(object)?.digest;
    if (previous) this.add(name, previous, true);
  }

  /**
   * The key whose spec.key stands for this token: the token is hashed once, found in the table by
   * its digest (each candidate compared in constant time), and confirmed with a constant-time
   * comparison against the digest of the key the cache holds now. (The table's timing could only
   * tell where a SHA-256 digest's bucket lies, which gives no way towards a key.)
   */
  findByToken(token: string): KeyLookup {
    const digest = tokenDigest(token);
    const slots = this.slotsOf(digest);
    if (slots.length === 0) return { kind: "none" };
    if (slots.length > 1) return { kind: "ambiguous", names: this.namesAt(slots) };
    const slot = slots[0]!;
    const name = this.names[slot]!;
    const previous = this.previousSlotOf.get(name) === slot;
    const key = this.source.get(name);
    // The cache may hold a newer object than the index has seen (apply() not called yet).
    const current = previous ? previousKeyOf(key)?.digest : keyDigest(key);
    if (!key || !current || !digestsEqual(current, digest)) return { kind: "none" };
    return { kind: "found", key, previous };
  }

  /**
   * The names of keys whose spec.key, or previous key in a grace window, stands for the same
   * digest as `stored` (plain or hashed).
   */
  namesWithSameKey(stored: string): string[] {
    if (stored === "") return [];
    return this.namesAt(this.slotsOf(storedDigest(stored)));
  }

  /** The names of these slots, each once, sorted. */
  private namesAt(slots: number[]): string[] {
    return [...new Set(slots.map((slot) => this.names[slot]!))].sort();
  }

  /** The slots indexed with this digest. */
  private slotsOf(digest: Uint8Array): number[] {
    const mask = this.table.length - 1;
    const slots: number[] = [];
    for (let b = this.bucketOf(digest); this.table[b] !== EMPTY; b = (b + 1) & mask) {
      const slot = this.table[b]! - 1;
      if (slot >= 0 && this.holds(slot, this.probe)) slots.push(slot);
    }
    return slots;
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

  private add(name: string, digest: Uint8Array, previous: boolean): void {
    const slot = this.freeSlots.pop() ?? this.names.length;
    if ((slot + 1) * DIGEST_BYTES > this.digests.length) {
      const bigger = new Uint8Array(this.digests.length * 2);
      bigger.set(this.digests);
      this.digests = bigger;
    }
    this.digests.set(digest, slot * DIGEST_BYTES);
    this.names[slot] = name;
    (previous ? this.previousSlotOf : this.slotOf).set(name, slot);
    if ((this.slotCount() + this.removed) * 2 > this.table.length) this.rehash();
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
    while (size < this.slotCount() * 4) size *= 2;
    this.table = new Int32Array(size);
    this.removed = 0;
    for (const slot of this.slotOf.values()) this.insert(slot);
    for (const slot of this.previousSlotOf.values()) this.insert(slot);
  }

  private slotCount(): number {
    return this.slotOf.size + this.previousSlotOf.size;
  }

  private remove(name: string): void {
    for (const slots of [this.slotOf, this.previousSlotOf]) {
      const slot = slots.get(name);
      if (slot === undefined) continue;
      slots.delete(name);
      this.removeSlot(slot);
    }
  }

  private removeSlot(slot: number): void {
    const mask = this.table.length - 1;
    let b = this.bucketOf(this.digests.subarray(slot * DIGEST_BYTES, (slot + 1) * DIGEST_BYTES));
    while (this.table[b] !== slot + 1) b = (b + 1) & mask;
    this.table[b] = REMOVED;
    this.removed += 1;
    this.names[slot] = undefined;
    this.freeSlots.push(slot);
  }
}
