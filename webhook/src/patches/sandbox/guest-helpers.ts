// The host functions an expression can call: btoa, atob and virtualToHostDNS
// (docs/reference.md#patch-expression-context), behind one boundary. Runs in a sandbox child after
// lockdown().
//
// The boundary:
// - takes primitives only. `String(x)` of an object would run the expression's own toString or
//   valueOf inside host code, where a value can change between a check and its use; an object
//   argument is a TypeError instead;
// - refuses inputs over MAX_HELPER_INPUT, so a helper never allocates off the V8 heap (Buffer)
//   in proportion to whatever an expression built;
// - rethrows whatever a helper throws as a fresh error of a hardened class, with the helper's
//   message and nothing else (SES's "safe" error taming gives guests no stacks, so no host path);
// - is hardened with everything it can throw, so nothing an expression writes on a helper or on
//   an error's prototype survives into the next evaluation.
import { virtualToHostDNS } from "../host-names.js";
import type { VClusterInfo } from "../types.js";
import { atob, Base64Error, btoa } from "./base64.js";

/** 1 MiB: more than any annotation (Kubernetes allows 256 KiB for all of an object's). */
export const MAX_HELPER_INPUT = 1024 * 1024;

export interface GuestHelpers {
  btoa: (input: unknown) => string;
  atob: (input: unknown) => string;
  virtualToHostDNS: (input: unknown) => string;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function textOf(name: string, input: unknown): string {
  switch (typeof input) {
    case "string":
      return input;
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return String(input);
    default:
      if (input === null) return "null";
      throw new TypeError(`${name} expects a string, not ${describe(input)}`);
  }
}

function boundary(name: string, body: (text: string) => string): (input: unknown) => string {
  return {
    [name](input: unknown): string {
      const text = textOf(name, input);
      if (text.length > MAX_HELPER_INPUT) {
        throw new RangeError(`${name}: the input is longer than ${MAX_HELPER_INPUT} characters`);
      }
      try {
        return body(text);
      } catch (err) {
        if (err instanceof Base64Error) throw new Base64Error(err.message);
        // No `cause`, on purpose: nothing of the host's error may reach the expression.
        // eslint-disable-next-line preserve-caught-error
        throw new Error(`${name} failed`);
      }
    },
  }[name]!;
}

/** The helpers for one vCluster, hardened. */
export function guestHelpers(vcluster: Pick<VClusterInfo, "name" | "namespace">): GuestHelpers {
  const vc = { name: vcluster.name, namespace: vcluster.namespace };
  const helpers: GuestHelpers = {
    btoa: boundary("btoa", btoa),
    atob: boundary("atob", atob),
    virtualToHostDNS: boundary("virtualToHostDNS", (s) => virtualToHostDNS(s, vc)),
  };
  harden(Base64Error);
  return harden(helpers);
}
