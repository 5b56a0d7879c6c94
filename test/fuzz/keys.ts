// Access keys the fuzzer plants in a valid body before it mutates it, so that hashed storage is
// fuzzed where keys leak in practice: spec.key given as the key, as its hash (as `kubectl accesskey`
// sends it to hashed storage), too short, or not at all; the stored key of an UPDATE the same (as
// its hash, or as the plaintext that plain storage kept) or another one (a rotation); and copies of
// the key in kubectl.kubernetes.io/last-applied-configuration (as `kubectl apply` and
// `create --save-config` write it), annotations and labels (values and names), spec.description,
// spec.displayName, the name, and inside a longer text. A TokenReview gets the key as its token.
//
// Keys come from a seed (SHA-256 of it), so a run replays from the fuzzer's seed alone: random
// base64url keys as kubectl accesskey makes them, and lower-case ones that no credential-shaped
// pattern recognises (only knowing the key finds it).

import { createHash } from "node:crypto";
import fc from "fast-check";
import type { Base } from "./bodies.js";

export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** The shortest key vgate accepts as new (README, Key storage). */
export const MIN_KEY_LENGTH = 32;

export const KEY_FORMS = ["plain", "hashed", "short", "absent"] as const;
export const COPIES = [
  "last-applied",
  "last-applied, hashed",
  "last-applied, another key",
  "annotation",
  "annotation name",
  "label",
  "label name",
  "description",
  "displayName",
  "name",
  "inside a text",
] as const;
export type Copy = (typeof COPIES)[number];

/** Copies that kubectl itself writes, and that hashed storage hashes instead of refusing. */
export const LAST_APPLIED_COPIES: readonly Copy[] = [
  "last-applied",
  "last-applied, hashed",
  "last-applied, another key",
];

export interface KeyPlan {
  /** spec.key: the key, its sha256:<hex>, a key shorter than MIN_KEY_LENGTH, or none. */
  form: (typeof KEY_FORMS)[number];
  shape: "random" | "lower-case";
  /** An UPDATE's stored key: the same key hashed, the same key in plaintext, or another key. */
  old: "same" | "same, plaintext" | "rotated";
  copies: Copy[];
  seed: number;
  /** The short key's length (8 to 31). */
  shortLength: number;
}

export const keyPlans: fc.Arbitrary<KeyPlan> = fc.record({
  form: fc.oneof(
    { weight: 4, arbitrary: fc.constant("plain" as const) },
    { weight: 3, arbitrary: fc.constant("hashed" as const) },
    { weight: 1, arbitrary: fc.constant("short" as const) },
    { weight: 1, arbitrary: fc.constant("absent" as const) },
  ),
  shape: fc.constantFrom("random" as const, "lower-case" as const),
  old: fc.constantFrom("same" as const, "same, plaintext" as const, "rotated" as const),
  copies: fc.oneof(
    { weight: 2, arbitrary: fc.constant<Copy[]>([]) },
    { weight: 3, arbitrary: fc.uniqueArray(fc.constantFrom(...COPIES), { maxLength: 2 }) },
  ),
  seed: fc.nat(),
  shortLength: fc.integer({ min: 8, max: MIN_KEY_LENGTH - 1 }),
});

/** `sha256:<hex>` of a key, as hashed storage keeps it. */
export function hashed(key: string): string {
  return `sha256:${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

/** The key number `n` of a plan's seed, 43 characters (base64url) or 40 (a-z). */
export function plantedKey(plan: Pick<KeyPlan, "seed" | "shape">, n = 0): string {
  const bytes = (part: string) =>
    createHash("sha256").update(`vgate fuzz key ${plan.seed} ${n} ${part}`).digest();
  if (plan.shape === "random") return bytes("").toString("base64url");
  const lower = Buffer.concat([bytes("a"), bytes("b")]).subarray(0, 40);
  return Array.from(lower, (b) => String.fromCharCode(97 + (b % 26))).join("");
}

type Json = Record<string, unknown>;

export interface Planted {
  body: Json;
  /** Whether the base carries keys (an OwnedAccessKey with an object, a TokenReview). */
  planted: boolean;
  /** Every plaintext key the body now holds, wherever it is. */
  plaintexts: string[];
}

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function objectOf(parent: Json, field: string): Json {
  const v = parent[field];
  if (isObject(v)) return v;
  const made: Json = {};
  parent[field] = made;
  return made;
}

/** `base` with the keys of `plan` in it; bases that carry no key come back as they are. */
export function plantKeys(base: Base, plan: KeyPlan): Planted {
  const body = structuredClone(base.body);
  const key = plantedKey(plan);
  const value = plan.form === "short" ? key.slice(0, plan.shortLength) : key;
  const spec = body["spec"];
  if (base.route === "/authenticate" && isObject(spec)) {
    const token = plan.form === "short" ? value : key;
    spec["token"] = token;
    return { body, planted: true, plaintexts: [token] };
  }
  const request = body["request"];
  const isKeyReview = base.route.endsWith("/ownedaccesskeys") && isObject(request);
  if (!isKeyReview || !isObject(request["object"])) {
    return { body, planted: false, plaintexts: [] };
  }
  const obj = request["object"];
  const plaintexts: string[] = [];
  const objSpec = objectOf(obj, "spec");
  if (plan.form === "absent") delete objSpec["key"];
  else objSpec["key"] = plan.form === "hashed" ? hashed(value) : value;
  if (plan.form === "plain" || plan.form === "short") plaintexts.push(value);
  const old = request["oldObject"];
  if (isObject(old)) {
    const oldSpec = objectOf(old, "spec");
    if (plan.old === "rotated") oldSpec["key"] = hashed(plantedKey(plan, 1));
    else if (plan.old === "same") oldSpec["key"] = hashed(value);
    else {
      oldSpec["key"] = value;
      plaintexts.push(value);
    }
  }
  const meta = objectOf(obj, "metadata");
  const annotations = () => objectOf(meta, "annotations");
  const labels = () => objectOf(meta, "labels");
  for (const copy of plan.copies) {
    if (LAST_APPLIED_COPIES.includes(copy)) continue;
    plaintexts.push(value);
    switch (copy) {
      case "annotation":
        annotations()["fuzz.example.com/copy"] = value;
        break;
      case "annotation name":
        annotations()[`fuzz.example.com/${value}`] = "x";
        break;
      case "label":
        labels()["fuzz-copy"] = value;
        break;
      case "label name":
        labels()[value] = "x";
        break;
      case "description":
        objSpec["description"] = `the CI key is ${value}`;
        break;
      case "displayName":
        objSpec["displayName"] = value;
        break;
      case "name":
        if (typeof meta["generateName"] === "string") meta["generateName"] = `${value}-`;
        else {
          meta["name"] = value;
          request["name"] = value;
        }
        break;
      case "inside a text":
        annotations()["fuzz.example.com/notes"] = `env:\n  TOKEN: ${value}\n`;
        break;
    }
  }
  const applied = plan.copies.find((c) => LAST_APPLIED_COPIES.includes(c));
  if (applied) {
    // What kubectl records: the object as the user wrote it, without the annotation itself.
    const inApplied =
      applied === "last-applied"
        ? value
        : applied === "last-applied, hashed"
          ? hashed(value)
          : plantedKey(plan, 2);
    if (!inApplied.startsWith("sha256:")) plaintexts.push(inApplied);
    const written: Json = {};
    for (const field of ["name", "generateName", "labels", "annotations"]) {
      if (meta[field] !== undefined) written[field] = meta[field];
    }
    const text = JSON.stringify({
      ...obj,
      metadata: written,
      spec: { ...objSpec, key: inApplied },
    });
    annotations()[LAST_APPLIED] = `${text}\n`;
  }
  return { body, planted: true, plaintexts: [...new Set(plaintexts)] };
}

/** The plan in words, for reports. */
export function describePlan(plan: KeyPlan): string {
  const copies = plan.copies.length ? `, copied to ${plan.copies.join(" and ")}` : "";
  return `${plan.shape} key ${plan.form}${copies}`;
}
