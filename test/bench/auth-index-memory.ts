// The token webhook's memory per key, for test/bench/auth.ts, run in a process of its own with
// --expose-gc so the heap holds nothing else: N OwnedAccessKeys decoded from JSON one by one and
// kept as the access key cache keeps them (keptFields, in a PackedStore), then a KeyIndex
// (webhook/src/auth/key-index.ts) over them. Prints one JSON line: the bytes of the objects, and
// of the index alone, each V8 heap plus ArrayBuffers (where both keep most of their data; a
// buffer's unused capacity counts too, so this is an upper bound).
//
//   node --expose-gc auth-index-memory.js <keys> [template.json]
//
// Without a template the objects have the fields vgate's keys always have (metadata name, uid,
// resourceVersion, creationTimestamp; spec user, key, displayName, type); with one (an object read
// back from kube-apiserver) each is that object with its own name, uid, resourceVersion, key and
// user, so managedFields and the rest are as the watch delivers them.

import { randomBytes, randomUUID } from "node:crypto";
import type { OwnedAccessKey } from "../../webhook/src/shared/ownedaccesskey.js";
import { KeyIndex } from "../../webhook/src/auth/key-index.js";
import { readFileSync } from "node:fs";
import { keptFields } from "../../webhook/src/kube/access-key-cache.js";
import { PackedStore } from "../../webhook/src/kube/controller/packed-store.js";

const gc = (globalThis as { gc?: () => void }).gc;

/** V8 heap in use plus ArrayBuffers, after collecting. */
function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc!();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

const SYNTHETIC = {
  apiVersion: "management.loft.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name: "", uid: "", resourceVersion: "", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { user: "", key: "", displayName: "ci token", type: "User" },
};

type Template = typeof SYNTHETIC;

/** The JSON text of key `i`, as a watch event carries it. */
function keyText(template: Template, i: number): string {
  return JSON.stringify({
    ...template,
    metadata: {
      ...template.metadata,
      name: `key-${String(i).padStart(6, "0")}`,
      uid: randomUUID(),
      resourceVersion: String(1000 + i),
    },
    spec: {
      ...template.spec,
      user: `user-${i % 1000}`,
      key: randomBytes(32).toString("base64url"),
    },
  });
}

function main(): void {
  if (!gc) throw new Error("run with node --expose-gc");
  const count = Number(process.argv[2] ?? 100_000);
  const templateFile = process.argv[3];
  const template = templateFile
    ? (JSON.parse(readFileSync(templateFile, "utf8")) as Template)
    : SYNTHETIC;
  const before = heapAfterGc();
  const cache = new PackedStore<OwnedAccessKey>();
  for (let i = 0; i < count; i++) {
    const obj = JSON.parse(keyText(template, i)) as Record<string, unknown>;
    const { name, resourceVersion } = (obj as OwnedAccessKey).metadata!;
    cache.set(name!, keptFields(obj), resourceVersion!);
  }
  const withObjects = heapAfterGc();
  const index = new KeyIndex({ synced: () => true, get: (name) => cache.get(name) });
  for (const name of cache.keys()) index.apply("ADDED", name);
  const withIndex = heapAfterGc();
  // Both must still be alive when the heap is measured.
  if (index.size !== count || cache.size !== count) throw new Error("lost keys");
  process.stdout.write(
    `${JSON.stringify({
      keys: count,
      objectBytes: withObjects - before,
      indexBytes: withIndex - withObjects,
      objectJsonBytes: keyText(template, 0).length,
    })}\n`,
  );
}

main();
