// What a well-formed request must get, where the README says it exactly: an unmutated base with its
// planted keys, sent as kube-apiserver sends it (by any certificate: the judge refuses review
// routes to all but kube-apiserver's first, and admission routes answer every caller). Mutated
// requests have no expectation beyond the judge's general rules (outcome.ts).
// - Unsynced cache: a TokenReview, and a SubjectAccessReview of a key login, answer 503; a write
//   that sets a new key is denied with 503 inside its AdmissionReview, one that keeps its key is not.
// - Hashed storage: /mutate hashes spec.key and the key in last-applied-configuration, and refuses
//   (422 Invalid) a key shown anywhere else; /validate refuses a plaintext spec.key, and the key
//   shown anywhere else (422).
// - Every storage: a new key shorter than 32 characters is refused (422 Invalid, on spec.key).

import { accessKeyExtra } from "../../webhook/src/auth/contracts.js";
import { hashed, LAST_APPLIED_COPIES, plantedKey, type Copy, type KeyPlan } from "./keys.js";
import type { FuzzInput } from "./mutations.js";

export type Expected =
  /** A metav1.Status answer instead of a review. */
  | { answer: "status"; code: number; reason: string; tag: string }
  /** An AdmissionReview that denies, with this status (and a cause on `field`). */
  | { answer: "denied"; code: number; reason: string; field?: string; tag: string }
  /** An AdmissionReview that allows; `key` and `lastApplied`: spec.key as the patched object has them. */
  | { answer: "allowed"; key?: string; lastApplied?: string; tag: string };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Copies that plain storage accepts as they are: none of them makes the object invalid. */
const HARMLESS_COPIES: readonly Copy[] = [
  ...LAST_APPLIED_COPIES,
  "annotation",
  "description",
  "inside a text",
];

/** The expectation for `input`, whose body parsed as `body`; undefined when there is none. */
export function expectation(input: FuzzInput, body: unknown): Expected | undefined {
  if (!input.wellFormed || !isObject(body)) return undefined;
  if (input.target === "unsynced") {
    if (input.route === "/authenticate") return notLoaded("status", "login refused until loaded");
    const extra = isObject(body["spec"]) ? body["spec"]["extra"] : undefined;
    if (input.route === "/authorize" && isObject(extra) && accessKeyExtra("loft.sh") in extra) {
      return notLoaded("status", "key request refused until loaded");
    }
  }
  const request = body["request"];
  const plan = input.plan;
  if (!plan || !isObject(request) || !input.route.endsWith("/ownedaccesskeys")) return undefined;
  const operation = request["operation"];
  if (operation !== "CREATE" && operation !== "UPDATE") return undefined;
  const validate = input.route === "/validate/ownedaccesskeys";
  const longKey = plan.form === "plain" || plan.form === "hashed";
  if (plan.form === "short" && validate && operation === "CREATE") {
    return invalid("spec.key", "short key refused");
  }
  if (input.target === "unsynced" && validate && longKey) {
    if (!plan.copies.every((c) => HARMLESS_COPIES.includes(c))) return undefined;
    if (operation === "UPDATE" && plan.old !== "rotated") {
      return { answer: "allowed", tag: "unchanged key allowed while not loaded" };
    }
    return notLoaded("denied", "new key refused until loaded");
  }
  if (input.target !== "hashed") return undefined;
  const elsewhere = !plan.copies.every((c) => LAST_APPLIED_COPIES.includes(c));
  if (validate) {
    if (input.admitted) return undefined;
    if (operation === "CREATE" && plan.form === "plain")
      return invalid("spec.key", "plaintext spec.key refused");
    if (plan.form === "hashed" && elsewhere) return shownElsewhere();
    return undefined;
  }
  if (!longKey) return undefined;
  if (elsewhere) return shownElsewhere();
  return { answer: "allowed", ...hashedKeys(plan), tag: "key hashed" };
}

function notLoaded(answer: "status" | "denied", tag: string): Expected {
  return { answer, code: 503, reason: "ServiceUnavailable", tag };
}

function shownElsewhere(): Expected {
  return { answer: "denied", code: 422, reason: "Invalid", tag: "key shown elsewhere refused" };
}

function invalid(field: string, tag: string): Expected {
  return { answer: "denied", code: 422, reason: "Invalid", field, tag };
}

/** spec.key and last-applied's spec.key after hashed storage's /mutate, as keys.ts planted them. */
function hashedKeys(plan: KeyPlan): { key: string; lastApplied?: string } {
  const key = hashed(plantedKey(plan));
  const applied = plan.copies.find((c) => LAST_APPLIED_COPIES.includes(c));
  if (!applied) return { key };
  return {
    key,
    lastApplied: applied === "last-applied, another key" ? hashed(plantedKey(plan, 2)) : key,
  };
}
