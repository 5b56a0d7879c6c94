// A watch cache's objects packed as UTF-8 JSON into one growing buffer, outside the V8 heap: for a
// large collection (100,000 OwnedAccessKeys) whose objects are read one at a time. Each object
// costs its JSON bytes plus a Map entry from its key to a slot, instead of a tree of JS objects
// and strings that the garbage collector must trace and that V8 lets grow to twice the live heap
// between major collections (webhook/bin/vgate's --heap-growing-percent=100). get() parses the
// object again (about a microsecond for an access key), so every caller gets a copy of its own.
// Knows no domain.

import type { ObjectStore } from "./watch-cache.js";

/**
 * How an object is written as JSON and read back; the key and resourceVersion are the store's, so
 * a codec need not repeat them.
 */
export interface Codec<T> {
  pack(object: T): unknown;
  unpack(packed: unknown, key: string, version: string): T;
}

const AS_IS: Codec<never> = { pack: (object) => object, unpack: (packed) => packed as never };

const FIRST_BYTES = 64 * 1024;
const FIRST_SLOTS = 1024;
/** Compact when at least this many bytes, and more than half the used ones, are dead. */
const MIN_DEAD_BYTES = 1024 * 1024;

export class PackedStore<T> implements ObjectStore<T> {
  private readonly slots = new Map<string, number>();
  /** Where slot i's record starts in `bytes`, and its length. */
  private starts = new Uint32Array(FIRST_SLOTS);
  private lengths = new Uint32Array(FIRST_SLOTS);
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private bytes = Buffer.allocUnsafe(FIRST_BYTES);
  private used = 0;
  private dead = 0;

  constructor(private readonly codec: Codec<T> = AS_IS) {}

  get(key: string): T | undefined {
    const record = this.record(key);
    return record && this.codec.unpack(record[1], key, record[0]);
  }

  version(key: string): string | undefined {
    return this.record(key)?.[0];
  }

  set(key: string, object: T, version: string): void {
    const text = JSON.stringify([version, this.codec.pack(object)]);
    const length = Buffer.byteLength(text, "utf8");
    this.delete(key);
    this.reserve(length);
    const slot = this.freeSlots.pop() ?? this.newSlot();
    this.bytes.write(text, this.used, "utf8");
    this.starts[slot] = this.used;
    this.lengths[slot] = length;
    this.used += length;
    this.slots.set(key, slot);
  }

  delete(key: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    this.dead += this.lengths[slot]!;
    this.lengths[slot] = 0;
    this.freeSlots.push(slot);
  }

  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  get size(): number {
    return this.slots.size;
  }

  /** Bytes the records take, live and dead (for tests and measurements). */
  get byteLength(): number {
    return this.used;
  }

  private record(key: string): [string, unknown] | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    const start = this.starts[slot]!;
    const text = this.bytes.toString("utf8", start, start + this.lengths[slot]!);
    return JSON.parse(text) as [string, unknown];
  }

  private newSlot(): number {
    if (this.nextSlot === this.starts.length) {
      this.starts = grown(this.starts);
      this.lengths = grown(this.lengths);
    }
    return this.nextSlot++;
  }

  /** Room for `length` more bytes: compacts when half is dead, else grows (doubling). */
  private reserve(length: number): void {
    if (this.dead >= MIN_DEAD_BYTES && this.dead * 2 > this.used) this.compact();
    if (this.used + length <= this.bytes.length) return;
    const size = Math.max(this.bytes.length * 2, this.used + length);
    const bigger = Buffer.allocUnsafe(size);
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  /** Copies the live records into a fresh buffer. */
  private compact(): void {
    const live = this.used - this.dead;
    const fresh = Buffer.allocUnsafe(Math.max(FIRST_BYTES, live * 2));
    let at = 0;
    for (const slot of this.slots.values()) {
      const start = this.starts[slot]!;
      const length = this.lengths[slot]!;
      this.bytes.copy(fresh, at, start, start + length);
      this.starts[slot] = at;
      at += length;
    }
    this.bytes = fresh;
    this.used = at;
    this.dead = 0;
  }
}

function grown(array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const bigger = new Uint32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
