// Whether a key works at a given moment (decision 10, docs/decisions.md). The rule itself lives in
// webhook/src/accesskeys/expiry.ts, shared with the token webhook; the printers import it from here.

export {
  keyStatus,
  ttlBase,
  ttlSeconds,
  type KeyStatus,
} from "../../../webhook/src/accesskeys/expiry.js";
