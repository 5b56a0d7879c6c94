// The sync snapshot: what both sides of one synced Endpoints object held after the last sync, so
// that the next pass can tell which side changed a key since then (docs/reference.md#patch-gotchas
// item 2: "diff against the snapshot"). vCluster keeps that state in its informer cache and loses
// it on a restart (docs/reference.md#endpoints-syncer-update); vgate persists it on the host
// object, in the one annotation below, so a restarted controller loses no update.
//
// The annotation is vgate's own: it is never copied to the virtual object, never patched, and never
// part of a change set. Its value is bounded: per annotation or label key, the key in the clear (so
// a deletion can be found) and two short hashes, never the values themselves.

import { createHash } from "node:crypto";
import type { Json, JsonObject } from "../../patches/types.js";
import { isObject } from "../../shared/json.js";

export const SNAPSHOT_ANNOTATION = "vgate.loft.sh/sync-snapshot";

const FORMAT_VERSION = 1;
/** 11 base64url characters = 66 bits: enough to notice a change, short enough to stay small. */
const HASH_LENGTH = 11;
const HASH = /^[A-Za-z0-9_-]{11}$/;
/** What an absent key (or absent subsets) hashes to. */
export const ABSENT = "";

/** [hash of the virtual value, hash of the host value]; ABSENT where the side has no value. */
export type HashPair = [string, string];

export interface Snapshot {
  /** Annotations, by key (the same key on both sides). */
  annotations: Record<string, HashPair>;
  /** Labels, by their virtual key (the host key is its translation, docs/reference.md#label-keys). */
  labels: Record<string, HashPair>;
  /** The virtual subsets as translated for the host, and the host's subsets. */
  subsets: HashPair;
  /** The patch config the last sync ran with: a new config re-runs `expression` on every key. */
  config: string;
}

/** A short, stable hash of a JSON value; ABSENT for undefined. */
export function hashValue(value: Json | undefined): string {
  if (value === undefined) return ABSENT;
  return createHash("sha256")
    .update(JSON.stringify(value))
    .digest("base64url")
    .slice(0, HASH_LENGTH);
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  const keys = Object.keys(record).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, record[k]!]));
}

/** The annotation value: canonical JSON (sorted keys), so equal snapshots are equal strings. */
export function formatSnapshot(snapshot: Snapshot): string {
  return JSON.stringify({
    v: FORMAT_VERSION,
    c: snapshot.config,
    s: snapshot.subsets,
    a: sortedRecord(snapshot.annotations),
    l: sortedRecord(snapshot.labels),
  });
}

export interface ReadSnapshot {
  snapshot: Snapshot | null;
  /** Set when an annotation was there but could not be read (it is then treated as absent). */
  warning?: string;
}

const isHash = (v: unknown): v is string => v === ABSENT || (typeof v === "string" && HASH.test(v));

function isPair(v: unknown): v is HashPair {
  return Array.isArray(v) && v.length === 2 && isHash(v[0]) && isHash(v[1]);
}

function pairs(v: unknown): Record<string, HashPair> | null {
  if (!isObject(v)) return null;
  const out: Record<string, HashPair> = {};
  for (const [key, pair] of Object.entries(v)) {
    if (!isPair(pair)) return null;
    Object.defineProperty(out, key, { value: [pair[0], pair[1]], enumerable: true });
  }
  return out;
}

function parseSnapshot(text: string): Snapshot | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(parsed) || parsed.v !== FORMAT_VERSION) return null;
  const annotations = pairs(parsed.a);
  const labels = pairs(parsed.l);
  if (annotations === null || labels === null) return null;
  if (!isPair(parsed.s) || !isHash(parsed.c)) return null;
  return { annotations, labels, subsets: [parsed.s[0], parsed.s[1]], config: parsed.c };
}

/**
 * The snapshot a host object carries. None (a host object vCluster created, or one whose
 * annotation was removed by hand) gives null; a value that cannot be read gives null and a
 * warning, never an error: the next write replaces it.
 */
export function readSnapshot(host: JsonObject): ReadSnapshot {
  const meta = host.metadata;
  const annotations = isObject(meta) ? meta.annotations : undefined;
  if (!isObject(annotations) || !Object.hasOwn(annotations, SNAPSHOT_ANNOTATION)) {
    return { snapshot: null };
  }
  const text = annotations[SNAPSHOT_ANNOTATION];
  const snapshot = typeof text === "string" ? parseSnapshot(text) : null;
  if (snapshot !== null) return { snapshot };
  return {
    snapshot: null,
    warning: `annotation ${SNAPSHOT_ANNOTATION} cannot be read; it is treated as absent (the virtual object wins for every key) and rewritten`,
  };
}
